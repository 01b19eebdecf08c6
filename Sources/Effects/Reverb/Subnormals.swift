/// The reverb's guard against subnormal numbers, which are slow to compute with on x86-64: the
/// diffusers' states, and what the delay network's lines take in and put out, are flushed to zero
/// before they get that small. The network's recursion runs in the processor's flush-to-zero mode
/// (or, where there is none, flushes its filters' states here frame by frame).
enum Subnormals {
    /// Values below 2⁻⁵⁰ (−301 dB) in magnitude set to exactly zero, without a branch: so no state
    /// ever becomes subnormal, and a tail ends. Works on the bits: a value whose exponent field is
    /// below the threshold's is masked away (integer vector operations, cheap on every x86-64).
    @inline(__always)
    static func flushed(_ v: SIMD16<Float>) -> SIMD16<Float> {
        let bits = unsafeBitCast(v, to: SIMD16<Int32>.self)
        let keep = ~(((bits & 0x7f80_0000) &- Self.flushExponent) &>> 31)
        return unsafeBitCast(bits & keep, to: SIMD16<Float>.self)
    }

    @inline(__always)
    static func flushed(_ v: SIMD2<Float>) -> SIMD2<Float> {
        let bits = unsafeBitCast(v, to: SIMD2<Int32>.self)
        let keep = ~(((bits & 0x7f80_0000) &- Self.flushExponent) &>> 31)
        return unsafeBitCast(bits & keep, to: SIMD2<Float>.self)
    }

    @inline(__always)
    static func flushed(_ v: SIMD4<Float>) -> SIMD4<Float> {
        let bits = unsafeBitCast(v, to: SIMD4<Int32>.self)
        let keep = ~(((bits & 0x7f80_0000) &- Self.flushExponent) &>> 31)
        return unsafeBitCast(bits & keep, to: SIMD4<Float>.self)
    }

    @inline(__always)
    static func flushed(_ v: SIMD8<Float>) -> SIMD8<Float> {
        let bits = unsafeBitCast(v, to: SIMD8<Int32>.self)
        let keep = ~(((bits & 0x7f80_0000) &- Self.flushExponent) &>> 31)
        return unsafeBitCast(bits & keep, to: SIMD8<Float>.self)
    }

    /// The exponent field of 2⁻⁵⁰.
    private static let flushExponent = Int32((127 - 50) << 23)
}
