/// Base-2 logarithm and power for level detection and gain, eight lanes at a time, to about
/// 10⁻⁴ dB: far finer than a compressor's curve needs, and several times cheaper than the C
/// library's per-sample calls. Plain vector arithmetic only: the conversions between integers and
/// floats go through the bits of 1.5 · 2²³ (the standard library's vector conversions run lane by
/// lane).
enum FastLog {
    /// 1.5 · 2²³: a float of this size holds an integer k (|k| < 2²²) in its low mantissa bits, so
    /// `(x + magic).bits − magic.bits` is x rounded to the nearest integer, and back.
    private static let magic: Float = 12_582_912
    private static let magicBits = Int32(bitPattern: 0x4B40_0000)

    /// log₂ of positive, normal `x`: the exponent, plus log₂ of the mantissa m ∈ [1, 2) by the series
    /// of atanh: log₂ m = (2 / ln 2)(t + t³/3 + t⁵/5 + t⁷/7), t = (m − 1)/(m + 1) ≤ 1/3 (error
    /// < 2·10⁻⁵, plus the rounding of a float near 100).
    @inline(__always)
    static func log2(_ x: SIMD8<Float>) -> SIMD8<Float> {
        let bits = unsafeBitCast(x, to: SIMD8<Int32>.self)
        let exponentBits = ((bits &>> 23) & 0xff) &- 127 &+ magicBits
        let exponent = unsafeBitCast(exponentBits, to: SIMD8<Float>.self) - magic
        let m = unsafeBitCast((bits & 0x007f_ffff) | 0x3f80_0000, to: SIMD8<Float>.self)
        let t = (m - 1) / (m + 1)
        let t2 = t * t
        var series = SIMD8<Float>(repeating: 0.412_198_58)
        series = series * t2 + 0.577_078_02
        series = series * t2 + 0.961_796_69
        series = series * t2 + 2.885_390_08
        return exponent + t * series
    }

    /// 2^x for x in −126 … 126 (clamped): 2 to the nearest integer k by the exponent bits, times
    /// 2^(x − k), |x − k| ≤ 1/2, by its Taylor series to the sixth power (relative error < 10⁻⁶).
    @inline(__always)
    static func exp2(_ x: SIMD8<Float>) -> SIMD8<Float> {
        var clamped = x.replacing(with: -126, where: x .< -126)
        clamped.replace(with: 126, where: clamped .> 126)
        let shifted = clamped + magic
        let nearest = shifted - magic
        let whole = unsafeBitCast(shifted, to: SIMD8<Int32>.self) &- magicBits
        let f = clamped - nearest
        var power = SIMD8<Float>(repeating: 0.000_154_04)
        power = power * f + 0.001_333_36
        power = power * f + 0.009_618_13
        power = power * f + 0.055_504_11
        power = power * f + 0.240_226_51
        power = power * f + 0.693_147_18
        power = power * f + 1
        // 2^k for k = 126 + 1 would not fit; the clamp keeps k within −126 … 126.
        return power * unsafeBitCast((whole &+ 127) &<< 23, to: SIMD8<Float>.self)
    }
}
