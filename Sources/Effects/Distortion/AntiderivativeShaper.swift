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
    /// F₂ of four samples at once.
    static func second(_ x: SIMD4<Double>) -> SIMD4<Double>
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
    /// Shapes `count` samples in place, carrying `state` across calls: x[n−1], x[n−2],
    /// F₂(x[n−1]), F₂(x[n−2]). `scratch`
    /// holds 2 × (`count` + 2) doubles.
    ///
    /// Two passes: F₂ of every sample (four lanes at a time where the curve has a vector form),
    /// then the divided differences, four lanes at a time, in one division:
    /// y = 2 (ΔF₀₁·d₁₂ − ΔF₁₂·d₀₁) / (d₀₁·d₁₂·d₀₂). Lanes where a difference is too small to
    /// divide by take the scalar path with its limits.
    static func run<Curve: ShaperCurve>(
        _ curve: Curve.Type, _ samples: UnsafeMutablePointer<Float>, count: Int, state: UnsafeMutablePointer<Double>,
        scratch: UnsafeMutablePointer<Double>
    ) {
        let x = scratch + 2
        let second = scratch + count + 4
        (x[-1], x[-2], second[-1], second[-2]) = (state[0], state[1], state[2], state[3])
        var i = 0
        while i + 4 <= count {
            let lanes = SIMD4<Double>(
                Double(samples[i]), Double(samples[i + 1]), Double(samples[i + 2]), Double(samples[i + 3]))
            store(lanes, x + i)
            store(Curve.second(lanes), second + i)
            i += 4
        }
        while i < count {
            x[i] = Double(samples[i])
            second[i] = Curve.second(x[i])
            i += 1
        }
        i = 0
        let high = SIMD4(repeating: Curve.high)
        let low = SIMD4(repeating: Curve.low)
        while i + 4 <= count {
            let (x0, x1, x2) = (load(x + i), load(x + i - 1), load(x + i - 2))
            let (f0, f1, f2) = (load(second + i), load(second + i - 1), load(second + i - 2))
            let (d01, d12, d02) = (x0 - x1, x1 - x2, x0 - x2)
            var y = 2 * ((f0 - f1) * d12 - (f1 - f2) * d01) / (d01 * d12 * d02)
            let size = magnitude(x0)
            let scale = 1e-4 * size.replacing(with: 1, where: size .< 1)
            let small = (magnitude(d01) .<= scale) .| (magnitude(d12) .<= scale) .| (magnitude(d02) .<= scale)
            let flatHigh = (x0 .>= high) .& (x1 .>= high) .& (x2 .>= high)
            let flatLow = (x0 .<= low) .& (x1 .<= low) .& (x2 .<= low)
            y.replace(with: Curve.highValue, where: flatHigh)
            y.replace(with: Curve.lowValue, where: flatLow)
            let limits = small .& .!(flatHigh .| flatLow)
            if any(limits) {
                for lane in 0..<4 where limits[lane] {
                    y[lane] = limit(Curve.self, x0[lane], x1[lane], x2[lane], f0[lane], f1[lane], f2[lane])
                }
            }
            for lane in 0..<4 { samples[i + lane] = Float(y[lane]) }
            i += 4
        }
        while i < count {
            samples[i] = Float(scalar(Curve.self, x[i], x[i - 1], x[i - 2], second[i], second[i - 1], second[i - 2]))
            i += 1
        }
        (state[0], state[1], state[2], state[3]) = (x[count - 1], x[count - 2], second[count - 1], second[count - 2])
    }

    /// One sample, the whole formula with its limits and flat parts.
    static func scalar<Curve: ShaperCurve>(
        _ curve: Curve.Type, _ x0: Double, _ x1: Double, _ x2: Double, _ f0: Double, _ f1: Double, _ f2: Double
    ) -> Double {
        if x0 >= Curve.high && x1 >= Curve.high && x2 >= Curve.high { return Curve.highValue }
        if x0 <= Curve.low && x1 <= Curve.low && x2 <= Curve.low { return Curve.lowValue }
        let scale = 1e-4 * max(1, abs(x0))
        let (d01, d12, d02) = (x0 - x1, x1 - x2, x0 - x2)
        if abs(d01) > scale && abs(d12) > scale && abs(d02) > scale {
            return 2 * ((f0 - f1) * d12 - (f1 - f2) * d01) / (d01 * d12 * d02)
        }
        return limit(Curve.self, x0, x1, x2, f0, f1, f2)
    }

    /// The formula where a difference is too small to divide by: F₁ of the midpoint for a first
    /// difference, the confluent formula when x[n] ≈ x[n−2], f of the mean when all three meet.
    static func limit<Curve: ShaperCurve>(
        _ curve: Curve.Type, _ x0: Double, _ x1: Double, _ x2: Double, _ f0: Double, _ f1: Double, _ f2: Double
    ) -> Double {
        let scale = 1e-4 * max(1, abs(x0))
        let d02 = x0 - x2
        if abs(d02) > scale {
            func slope(_ a: Double, _ b: Double, _ fa: Double, _ fb: Double) -> Double {
                abs(a - b) > scale ? (fa - fb) / (a - b) : Curve.first(0.5 * (a + b))
            }
            return 2 * (slope(x0, x1, f0, f1) - slope(x1, x2, f1, f2)) / d02
        }
        let middle = 0.5 * (x0 + x2)
        let delta = middle - x1
        if abs(delta) > scale {
            return 2 / delta * (Curve.first(middle) + (f1 - Curve.second(middle)) / delta)
        }
        return Curve.value((x0 + x1 + x2) / 3)
    }

    @inline(__always)
    static func magnitude(_ v: SIMD4<Double>) -> SIMD4<Double> { v.replacing(with: -v, where: v .< 0) }

    @inline(__always)
    static func load(_ pointer: UnsafePointer<Double>) -> SIMD4<Double> {
        UnsafeRawPointer(pointer).loadUnaligned(as: SIMD4<Double>.self)
    }

    @inline(__always)
    static func store(_ value: SIMD4<Double>, _ pointer: UnsafeMutablePointer<Double>) {
        UnsafeMutableRawPointer(pointer).storeBytes(of: value, as: SIMD4<Double>.self)
    }
}

extension ShaperCurve {
    /// F₂ of four samples; curves with a vector form override it.
    static func second(_ x: SIMD4<Double>) -> SIMD4<Double> {
        SIMD4(second(x[0]), second(x[1]), second(x[2]), second(x[3]))
    }
}

/// The hard clip: f(x) = x within ±1, ±1 beyond.
enum HardClipCurve: ShaperCurve {
    static func value(_ x: Double) -> Double { min(max(x, -1), 1) }
    static func first(_ x: Double) -> Double { abs(x) <= 1 ? 0.5 * x * x : abs(x) - 0.5 }
    static func second(_ x: Double) -> Double {
        abs(x) <= 1 ? x * x * x / 6 : (x > 0 ? 1 : -1) * (0.5 * x * x + 1.0 / 6) - 0.5 * x
    }
    static func second(_ x: SIMD4<Double>) -> SIMD4<Double> {
        let a = AntiderivativeShaper.magnitude(x)
        let outside = (0.5 * a * a + 1.0 / 6).replacing(with: -(0.5 * a * a + 1.0 / 6), where: x .< 0) - 0.5 * x
        return (x * x * x / 6).replacing(with: outside, where: a .> 1)
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
    @inline(__always)
    static func second(_ x: SIMD4<Double>) -> SIMD4<Double> {
        let a = AntiderivativeShaper.magnitude(x)
        let magnitude = a * (0.5 * a - M_LN2) + Double.pi * Double.pi / 24 + SoftClipTable.shared.correction(a)
        return magnitude.replacing(with: -magnitude, where: x .< 0)
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
    static func second(_ x: SIMD4<Double>) -> SIMD4<Double> {
        let negative = x .< 0
        let shaped = SoftClipCurve.second(x.replacing(with: 2 * x, where: negative))
        return shaped.replacing(with: 0.125 * shaped, where: negative)
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
final class SoftClipTable: @unchecked Sendable {
    /// The table, built once; the node touches it when it is prepared, off the audio thread.
    static let shared = SoftClipTable()
    static let step = 1.0 / 16
    static let end = 20.0
    /// Six power-basis coefficients per interval (allocated once, for the life of the process).
    private let coefficients: UnsafeMutablePointer<Double>

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
        coefficients = .allocate(capacity: table.count)
        coefficients.initialize(from: table, count: table.count)
    }

    /// g(a) for a ≥ 0.
    @inline(__always)
    func correction(_ a: Double) -> Double {
        guard a < Self.end else { return 0 }
        let position = a * 16
        let index = Int(position)
        let t = position - Double(index)
        let c = coefficients + 6 * index
        return c[0] + t * (c[1] + t * (c[2] + t * (c[3] + t * (c[4] + t * c[5]))))
    }

    /// g of four magnitudes at once: the interval by the bits of 1.5 · 2⁵² (no per-lane
    /// conversion), the coefficients gathered lane by lane.
    @inline(__always)
    func correction(_ a: SIMD4<Double>) -> SIMD4<Double> {
        let magic = 6_755_399_441_055_744.0
        // Beyond the table, and NaN (for which every comparison is false), read interval 0.
        let position = a.replacing(with: 0, where: .!(a .< Self.end)) * 16
        let shifted = (position - 0.5) + magic
        let index = unsafeBitCast(shifted, to: SIMD4<Int64>.self) &- Int64(bitPattern: magic.bitPattern)
        let t = position - (shifted - magic)
        var c = (SIMD4<Double>(), SIMD4<Double>(), SIMD4<Double>(), SIMD4<Double>(), SIMD4<Double>(), SIMD4<Double>())
        for lane in 0..<4 {
            let row = coefficients + 6 &* Int(truncatingIfNeeded: index[lane])
            (c.0[lane], c.1[lane], c.2[lane], c.3[lane], c.4[lane], c.5[lane]) =
                (row[0], row[1], row[2], row[3], row[4], row[5])
        }
        var sum = c.5
        sum = sum * t + c.4
        sum = sum * t + c.3
        sum = sum * t + c.2
        sum = sum * t + c.1
        sum = sum * t + c.0
        return sum.replacing(with: 0, where: a .>= Self.end)
    }
}
