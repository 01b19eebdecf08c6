/// A biquad whose coefficients move linearly, one step per sample, both channels in one vector.
struct GlidingSection {
    var b0, b1, b2, a1, a2: SIMD2<Double>
    let db0, db1, db2, da1, da2: SIMD2<Double>

    /// From `c` toward `next`, reaching it after 1/`step` samples.
    @inline(__always)
    init(from c: BiquadCoefficients, to next: BiquadCoefficients, step: Double) {
        (b0, b1, b2) = (SIMD2(repeating: c.b0), SIMD2(repeating: c.b1), SIMD2(repeating: c.b2))
        (a1, a2) = (SIMD2(repeating: c.a1), SIMD2(repeating: c.a2))
        (db0, db1, db2) = (
            SIMD2(repeating: (next.b0 - c.b0) * step), SIMD2(repeating: (next.b1 - c.b1) * step),
            SIMD2(repeating: (next.b2 - c.b2) * step)
        )
        (da1, da2) = (SIMD2(repeating: (next.a1 - c.a1) * step), SIMD2(repeating: (next.a2 - c.a2) * step))
    }

    /// Moves the coefficients one step, then filters one frame (direct form I) after history `h`.
    @inline(__always)
    mutating func step(_ x: SIMD2<Double>, _ h: inout BiquadHistory) -> SIMD2<Double> {
        b0 += db0
        b1 += db1
        b2 += db2
        a1 += da1
        a2 += da2
        let y = ((b0 * x + b1 * h.x1) + (b2 * h.x2 - a2 * h.y2)) - a1 * h.y1
        (h.x2, h.x1, h.y2, h.y1) = (h.x1, x, h.y1, y)
        return y
    }
}
