/// The last two inputs and outputs of a band, left channel in `.x`, right in `.y`.
struct BiquadHistory {
    var x1 = SIMD2<Double>.zero
    var x2 = SIMD2<Double>.zero
    var y1 = SIMD2<Double>.zero
    var y2 = SIMD2<Double>.zero

    /// Denormal-range values set to zero: a long silence must not leave subnormal states.
    @inline(__always)
    func flushed() -> BiquadHistory {
        @inline(__always) func flush(_ value: SIMD2<Double>) -> SIMD2<Double> {
            // (A non-finite value, which no stable section produces, is cleared too: it would
            // otherwise stay for good.)
            let tiny = (value .< 1e-20) .& (value .> -1e-20)
            let bounded = (value .< 1e30) .& (value .> -1e30)
            return value.replacing(with: 0, where: tiny .| .!bounded)
        }
        return BiquadHistory(x1: flush(x1), x2: flush(x2), y1: flush(y1), y2: flush(y2))
    }
}
