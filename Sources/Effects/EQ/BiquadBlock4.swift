/// A settled biquad run four samples at a time, both channels at once (left in `.x`, right in
/// `.y`). Each of the four outputs is written directly in terms of the four inputs and the last
/// two inputs and outputs before them: the same filter as the direct form I, but its recursion
/// (one multiply and one add per sample there) advances once per four samples, so the
/// processor's pipelines overlap the rest.
struct BiquadBlock4 {
    var source: BiquadCoefficients
    // kKJ: the weight of input J in output K; xN: this block's inputs, m1/m2: the previous
    // block's last two inputs, y1/y2: its last two outputs.
    let k0x0, k0m1, k0m2, k0y1, k0y2: SIMD2<Double>
    let k1x0, k1x1, k1m1, k1m2, k1y1, k1y2: SIMD2<Double>
    let k2x0, k2x1, k2x2, k2m1, k2m2, k2y1, k2y2: SIMD2<Double>
    let k3x0, k3x1, k3x2, k3x3, k3m1, k3m2, k3y1, k3y2: SIMD2<Double>

    init(_ c: BiquadCoefficients = .identity) {
        source = c
        // The outputs for a unit value in one input (all others zero), by the recursion itself.
        func respond(
            _ x0: Double, _ x1: Double, _ x2: Double, _ x3: Double, m1: Double, m2: Double, y1: Double,
            y2: Double
        ) -> (Double, Double, Double, Double) {
            let o0 = c.b0 * x0 + c.b1 * m1 + c.b2 * m2 - c.a1 * y1 - c.a2 * y2
            let o1 = c.b0 * x1 + c.b1 * x0 + c.b2 * m1 - c.a1 * o0 - c.a2 * y1
            let o2 = c.b0 * x2 + c.b1 * x1 + c.b2 * x0 - c.a1 * o1 - c.a2 * o0
            let o3 = c.b0 * x3 + c.b1 * x2 + c.b2 * x1 - c.a1 * o2 - c.a2 * o1
            return (o0, o1, o2, o3)
        }
        let e0 = respond(1, 0, 0, 0, m1: 0, m2: 0, y1: 0, y2: 0)
        let e1 = respond(0, 1, 0, 0, m1: 0, m2: 0, y1: 0, y2: 0)
        let e2 = respond(0, 0, 1, 0, m1: 0, m2: 0, y1: 0, y2: 0)
        let e3 = respond(0, 0, 0, 1, m1: 0, m2: 0, y1: 0, y2: 0)
        let m1 = respond(0, 0, 0, 0, m1: 1, m2: 0, y1: 0, y2: 0)
        let m2 = respond(0, 0, 0, 0, m1: 0, m2: 1, y1: 0, y2: 0)
        let y1 = respond(0, 0, 0, 0, m1: 0, m2: 0, y1: 1, y2: 0)
        let y2 = respond(0, 0, 0, 0, m1: 0, m2: 0, y1: 0, y2: 1)
        func v(_ value: Double) -> SIMD2<Double> { SIMD2(repeating: value) }
        (k0x0, k0m1, k0m2, k0y1, k0y2) = (v(e0.0), v(m1.0), v(m2.0), v(y1.0), v(y2.0))
        (k1x0, k1x1, k1m1, k1m2, k1y1, k1y2) = (v(e0.1), v(e1.1), v(m1.1), v(m2.1), v(y1.1), v(y2.1))
        (k2x0, k2x1, k2x2, k2m1, k2m2) = (v(e0.2), v(e1.2), v(e2.2), v(m1.2), v(m2.2))
        (k2y1, k2y2) = (v(y1.2), v(y2.2))
        (k3x0, k3x1, k3x2, k3x3, k3m1, k3m2) = (v(e0.3), v(e1.3), v(e2.3), v(e3.3), v(m1.3), v(m2.3))
        (k3y1, k3y2) = (v(y1.3), v(y2.3))
    }

    /// One frame by the direct form I (a quantum's last few frames).
    @inline(__always)
    func step(_ x: SIMD2<Double>, _ h: inout BiquadHistory) -> SIMD2<Double> {
        let c = source
        let y = ((c.b0 * x + c.b1 * h.x1) + (c.b2 * h.x2 - c.a2 * h.y2)) - c.a1 * h.y1
        (h.x2, h.x1, h.y2, h.y1) = (h.x1, x, h.y1, y)
        return y
    }

    /// The four frames at `left` and `right`, filtered after history `h`, which advances.
    @inline(__always)
    func run(
        _ left: UnsafeMutablePointer<Float>, _ right: UnsafeMutablePointer<Float>, _ h: inout BiquadHistory
    ) -> (SIMD2<Double>, SIMD2<Double>, SIMD2<Double>, SIMD2<Double>) {
        run(
            SIMD2(Double(left[0]), Double(right[0])), SIMD2(Double(left[1]), Double(right[1])),
            SIMD2(Double(left[2]), Double(right[2])), SIMD2(Double(left[3]), Double(right[3])), &h)
    }

    /// Filters four frames `x0`…`x3` after history `h`; returns the outputs and advances `h`.
    @inline(__always)
    func run(
        _ x0: SIMD2<Double>, _ x1: SIMD2<Double>, _ x2: SIMD2<Double>, _ x3: SIMD2<Double>,
        _ h: inout BiquadHistory
    ) -> (SIMD2<Double>, SIMD2<Double>, SIMD2<Double>, SIMD2<Double>) {
        // The input terms first (they do not wait for the last block), the previous outputs last.
        let u0 = k0x0 * x0 + (k0m1 * h.x1 + k0m2 * h.x2)
        let u1 = (k1x0 * x0 + k1x1 * x1) + (k1m1 * h.x1 + k1m2 * h.x2)
        let u2 = (k2x0 * x0 + k2x1 * x1) + (k2x2 * x2 + (k2m1 * h.x1 + k2m2 * h.x2))
        let u3 = ((k3x0 * x0 + k3x1 * x1) + (k3x2 * x2 + k3x3 * x3)) + (k3m1 * h.x1 + k3m2 * h.x2)
        let o0 = (u0 + k0y2 * h.y2) + k0y1 * h.y1
        let o1 = (u1 + k1y2 * h.y2) + k1y1 * h.y1
        let o2 = (u2 + k2y2 * h.y2) + k2y1 * h.y1
        let o3 = (u3 + k3y2 * h.y2) + k3y1 * h.y1
        h = BiquadHistory(x1: x3, x2: x2, y1: o3, y2: o2)
        return (o0, o1, o2, o3)
    }
}
