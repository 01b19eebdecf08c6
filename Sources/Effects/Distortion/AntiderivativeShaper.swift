#if canImport(Glibc)
    import Glibc
#endif

/// A memoryless curve with its first two antiderivatives, for second-order antiderivative
/// anti-aliasing (Bilbao, Esqueda, Parker & Välimäki, "Antiderivative antialiasing for
/// memoryless nonlinearities", IEEE SPL 2017).
protocol ShaperCurve {
    /// The curve, y = f(x).
    static func value(_ x: Double) -> Double
    /// F₁, with F₁′ = f.
    static func first(_ x: Double) -> Double
    /// F₂, with F₂′ = F₁.
    static func second(_ x: Double) -> Double
    /// At or above `high` the curve is the constant `highValue` (for a curve without one, +∞).
    static var high: Double { get }
    static var highValue: Double { get }
    /// At or below `low` the curve is the constant `lowValue` (for a curve without one, −∞).
    static var low: Double { get }
    static var lowValue: Double { get }
}

/// Runs a curve over oversampled audio with second-order antiderivative anti-aliasing:
///
///     y[n] = 2 / (x[n] − x[n−2]) · ( (F₂(x[n]) − F₂(x[n−1])) / (x[n] − x[n−1])
///                                  − (F₂(x[n−1]) − F₂(x[n−2])) / (x[n−1] − x[n−2]) )
///
/// the mean of f over the triangle spanned by the last three samples, that is, f of the signal
/// smoothed by a two-sample triangular kernel before it is sampled, so what the curve adds above
/// the oversampled band is attenuated as sinc² before it can fold back. It delays by one sample.
/// Where the differences are too small to divide by, the limits are taken (F₁ of the midpoint,
/// the confluent formula, then f of the mean), and where all three samples lie on a flat part of
/// the curve the flat value is exact. Computed in double precision: the formula takes second
/// differences of F₂, which in single precision lose the signal near the curve's peaks.
enum AntiderivativeShaper {
    /// Per-channel state: x[n−1], x[n−2], F₂(x[n−1]) and the last first difference.
    static let stateSize = 4

    /// Shapes `count` samples in place, carrying `state` (four doubles) across calls.
    static func run<Curve: ShaperCurve>(
        _ curve: Curve.Type, _ samples: UnsafeMutablePointer<Float>, count: Int, state: UnsafeMutablePointer<Double>
    ) {
        var (x1, x2, second1, slope12) = (state[0], state[1], state[2], state[3])
        for i in 0..<count {
            let x0 = Double(samples[i])
            let second0 = Curve.second(x0)
            let scale = 1e-4 * max(1, abs(x0))
            let d01 = x0 - x1
            let slope01 = abs(d01) > scale ? (second0 - second1) / d01 : Curve.first(0.5 * (x0 + x1))
            let y: Double
            if x0 >= Curve.high && x1 >= Curve.high && x2 >= Curve.high {
                y = Curve.highValue
            } else if x0 <= Curve.low && x1 <= Curve.low && x2 <= Curve.low {
                y = Curve.lowValue
            } else {
                let d02 = x0 - x2
                if abs(d02) > scale {
                    y = 2 * (slope01 - slope12) / d02
                } else {
                    let middle = 0.5 * (x0 + x2)
                    let delta = middle - x1
                    if abs(delta) > scale {
                        y = 2 / delta * (Curve.first(middle) + (second1 - Curve.second(middle)) / delta)
                    } else {
                        y = Curve.value((x0 + x1 + x2) / 3)
                    }
                }
            }
            samples[i] = Float(y)
            (x2, x1, second1, slope12) = (x1, x0, second0, slope01)
        }
        (state[0], state[1], state[2], state[3]) = (x1, x2, second1, slope12)
    }
}

/// The hard clip: f(x) = x within ±1, ±1 beyond.
enum HardClipCurve: ShaperCurve {
    static func value(_ x: Double) -> Double { min(max(x, -1), 1) }
    static func first(_ x: Double) -> Double { abs(x) <= 1 ? 0.5 * x * x : abs(x) - 0.5 }
    static func second(_ x: Double) -> Double {
        abs(x) <= 1 ? x * x * x / 6 : (x > 0 ? 1 : -1) * (0.5 * x * x + 1.0 / 6) - 0.5 * x
    }
    static var high: Double { 1 }
    static var highValue: Double { 1 }
    static var low: Double { -1 }
    static var lowValue: Double { -1 }
}

/// The soft clip: f(x) = tanh x. F₁ = ln cosh x; F₂ needs the dilogarithm,
/// F₂(x) = x²/2 − x ln 2 + π²/24 + Li₂(−e^(−2x))/2 for x ≥ 0 (odd), whose last term comes from
/// `SoftClipTable`.
enum SoftClipCurve: ShaperCurve {
    static func value(_ x: Double) -> Double { tanh(x) }
    static func first(_ x: Double) -> Double {
        let a = abs(x)
        return a - M_LN2 + log1p(exp(-2 * a))
    }
    static func second(_ x: Double) -> Double {
        let a = abs(x)
        let magnitude = a * (0.5 * a - M_LN2) + Double.pi * Double.pi / 24 + SoftClipTable.shared.correction(a)
        return x < 0 ? -magnitude : magnitude
    }
    /// tanh(20) is 1 to within 1e-17: 1 in double precision.
    static var high: Double { 20 }
    static var highValue: Double { 1 }
    static var low: Double { -20 }
    static var lowValue: Double { -1 }
}

/// The tube-like asymmetric curve: tanh x for x ≥ 0, tanh(2x)/2 below, so the negative half
/// saturates at −½, twice as early, with the slope (1) and curvature (0) matching at zero. Its
/// asymmetry adds even harmonics (and a DC offset, which the node removes).
enum TubeCurve: ShaperCurve {
    static func value(_ x: Double) -> Double { x >= 0 ? tanh(x) : 0.5 * tanh(2 * x) }
    static func first(_ x: Double) -> Double { x >= 0 ? SoftClipCurve.first(x) : 0.25 * SoftClipCurve.first(2 * x) }
    static func second(_ x: Double) -> Double {
        x >= 0 ? SoftClipCurve.second(x) : 0.125 * SoftClipCurve.second(2 * x)
    }
    static var high: Double { 20 }
    static var highValue: Double { 1 }
    static var low: Double { -10 }
    static var lowValue: Double { -0.5 }
}

/// The fold-back curve: a triangle wave of the input, folding at ±1 (x within ±1 passes; 1.5
/// gives 0.5; 3 gives −1). With p = (x + 1) mod 4: f = p − 1 for p ≤ 2, 3 − p above; F₁ is
/// periodic, F₂ is x/2 plus a periodic part.
enum FoldbackCurve: ShaperCurve {
    @inline(__always)
    static func phase(_ x: Double) -> Double {
        let shifted = x + 1
        return shifted - 4 * (shifted / 4).rounded(.down)
    }
    static func value(_ x: Double) -> Double {
        let p = phase(x)
        return p <= 2 ? p - 1 : 3 - p
    }
    static func first(_ x: Double) -> Double {
        let p = phase(x)
        return p <= 2 ? 0.5 * (p - 1) * (p - 1) : 1 - 0.5 * (p - 3) * (p - 3)
    }
    static func second(_ x: Double) -> Double {
        let p = phase(x)
        let periodic: Double
        if p <= 2 {
            let u = p - 1
            periodic = u * u * u / 6 + 1.0 / 6 - 0.5 * p
        } else {
            let u = p - 3
            periodic = -2.0 / 3 + 0.5 * (p - 2) - (u * u * u + 1) / 6
        }
        return 0.5 * x + periodic
    }
    static var high: Double { .infinity }
    static var highValue: Double { 0 }
    static var low: Double { -.infinity }
    static var lowValue: Double { 0 }
}

/// g(a) = Li₂(−e^(−2a))/2 for 0 ≤ a < 20 (beyond, |g| < 1e-17), by quintic Hermite interpolation
/// on a grid of 1/16 from g, g′ = ln(1 + e^(−2a)) and g″ = tanh a − 1 at the nodes: an error
/// below 1e-11, and C² across the nodes, so second differences of F₂ stay smooth.
final class SoftClipTable: Sendable {
    /// The table, built once; the node touches it when it is prepared, off the audio thread.
    static let shared = SoftClipTable()
    static let step = 1.0 / 16
    static let end = 20.0
    /// Six power-basis coefficients per interval.
    private let coefficients: [Double]

    private init() {
        let count = Int(Self.end / Self.step)
        var table = [Double](repeating: 0, count: 6 * count)
        let h = Self.step
        func node(_ a: Double) -> (Double, Double, Double) {
            let u = exp(-2 * a)
            // Landen: Li₂(−u) = −Li₂(u/(1+u)) − ln²(1+u)/2, the series in v = u/(1+u) ≤ ½.
            let v = u / (1 + u)
            var (sum, power, k) = (0.0, v, 1.0)
            while power > 1e-20 {
                sum += power / (k * k)
                power *= v
                k += 1
            }
            let logarithm = log1p(u)
            return (0.5 * (-sum - 0.5 * logarithm * logarithm), logarithm, tanh(a) - 1)
        }
        var (p0, d0, s0) = node(0)
        for index in 0..<count {
            let (p1, d1, s1) = node(Double(index + 1) * h)
            let (c0, c1, c2) = (p0, d0 * h, s0 * h * h / 2)
            let a = p1 - (c0 + c1 + c2)
            let b = d1 * h - (c1 + 2 * c2)
            let c = s1 * h * h - 2 * c2
            let base = 6 * index
            table[base] = c0
            table[base + 1] = c1
            table[base + 2] = c2
            table[base + 3] = 10 * a - 4 * b + c / 2
            table[base + 4] = -15 * a + 7 * b - c
            table[base + 5] = 6 * a - 3 * b + c / 2
            (p0, d0, s0) = (p1, d1, s1)
        }
        coefficients = table
    }

    /// g(a) for a ≥ 0.
    @inline(__always)
    func correction(_ a: Double) -> Double {
        guard a < Self.end else { return 0 }
        let position = a * 16
        let index = Int(position)
        let t = position - Double(index)
        return coefficients.withUnsafeBufferPointer { c in
            let k = 6 * index
            return c[k] + t * (c[k + 1] + t * (c[k + 2] + t * (c[k + 3] + t * (c[k + 4] + t * c[k + 5]))))
        }
    }
}
