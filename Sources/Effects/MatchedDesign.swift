#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

// The refined matched design: Vicanek's matched biquad (2016) as the start point, then a minimax fit of the
// digital magnitude to the analog prototype's, in dB. Real-time safe: no heap allocation (fixed-size
// `InlineArray` and `SIMD3` storage on the stack), no locks, bounded work.

extension BiquadCoefficients {
    /// The matched design refined to follow the analog prototype more closely, up to 0.45 × `rate`,
    /// for every type (nil only for non-finite or non-positive inputs, or an unstable result).
    ///
    /// The squared magnitude of a biquad is a ratio of two quadratics in x = sin²(ω/2):
    /// |H|² = N(x)/D(x). The design
    /// 1. starts from Vicanek's matched filter (M. Vicanek, "Matched Second Order Digital Filters", 2016):
    ///    the analog poles by impulse invariance, zeros solved from the prototype's magnitude (shelves,
    ///    which the paper does not cover: poles and zeros by impulse invariance, a high shelf from its
    ///    cut, whose poles lie below the frequency; the numerator by least squares where that fits
    ///    better);
    /// 2. keeps those poles and re-solves N by one linear least-squares fit of N/(T·D) − 1 (T the analog
    ///    |H|²) on a log grid of 32 points from 20 Hz to 0.45 × rate plus 9 points across the band and,
    ///    for resonances, 9 more across four times its width (a resonant shelf: 9 across its peak and 9
    ///    across its dip instead); low-pass, band-pass and parametric fix N at DC (band-pass: a zero
    ///    there), shelves leave all of N free, high-pass keeps Vicanek's zeros;
    /// 3. refines the free coefficients of N and D (those that keep the type's zeros at DC or Nyquist)
    ///    by Levenberg–Marquardt on the dB error, with Lawson reweighting toward the minimax (equiripple)
    ///    solution, guard points between 0.45 × rate and Nyquist that keep the response from
    ///    overshooting there, and a feasibility check (N, D > 0 on the whole unit circle) on every step;
    /// 4. factors N and D back into minimum-phase coefficients with Vicanek's closed form.
    /// A parametric or shelf cut is the exact inverse of the boost of the same size, as in the analog
    /// domain (and a high shelf's boost the inverse of its cut).
    /// If the fit fails, or its result is not finite and stable, the Vicanek design (for shelves the
    /// cookbook's) is returned (nil if
    /// that is not finite and stable either, or for non-finite or non-positive inputs).
    /// For the audio thread: no heap allocation, bounded work (at most 64 trial evaluations of at most 64 points);
    /// about 12 µs on average and 40 µs at worst on a current x86-64 core.
    static func matchedRefined(
        _ type: FilterType, _ f0: Double, _ gain: Double, _ bw: Double, _ rate: Double
    ) -> BiquadCoefficients? {
        switch type {
        case .lowPass, .highPass, .resonantLowPass, .resonantHighPass, .bandPass, .parametric: break
        case .lowShelf, .highShelf, .resonantLowShelf, .resonantHighShelf, .bandStop: break
        }
        let gain = type.usesGain ? gain : 0
        let octaves = type.usesBandwidth ? bw : 1
        guard rate.isFinite, rate > 0, f0.isFinite, gain.isFinite, octaves.isFinite else { return nil }
        let f0 = min(max(f0, 1), rate * 0.4999)
        let bw = max(octaves, 0.001)
        // The analog cut is the inverse of the analog boost. The fit is made where the poles lie
        // below the frequency (a boost, but a high shelf's cut), and inverted for the other side.
        let fitsCut = type == .highShelf || type == .resonantHighShelf
        guard gain != 0, (gain < 0) != fitsCut else { return refinedOrStart(type, f0, gain, bw, rate) }
        if let mirror = refinedOrStart(type, f0, -gain, bw, rate), mirror.b0 != 0 {
            let inverse = BiquadCoefficients(
                b0: 1 / mirror.b0, b1: mirror.a1 / mirror.b0, b2: mirror.a2 / mirror.b0,
                a1: mirror.b1 / mirror.b0, a2: mirror.b2 / mirror.b0)
            if inverse.isFiniteAndStable { return inverse }
        }
        return fallback(type, f0, gain, bw, rate)
    }

    /// Vicanek's design, or for shelves (which it does not cover) the cookbook's; nil if it is not
    /// finite and stable.
    private static func fallback(
        _ type: FilterType, _ f0: Double, _ gain: Double, _ bw: Double, _ rate: Double
    ) -> BiquadCoefficients? {
        let design = type.isShelf ? cookbook(type, f0, gain, bw, rate) : matched(type, f0, gain, bw, rate)
        guard let design, design.isFiniteAndStable else { return nil }
        return design
    }

    /// Where the fit starts: Vicanek's matched design; for shelves, the analog poles by impulse
    /// invariance (the numerator is fitted anew), if they lie below Nyquist.
    private static func start(
        _ type: FilterType, _ f0: Double, _ gain: Double, _ bw: Double, _ rate: Double
    ) -> BiquadCoefficients? {
        guard type.isShelf else { return fallback(type, f0, gain, bw, rate) }
        let cookbook = cookbook(type, f0, gain, bw, rate)
        // Low shelf A·(s² + (√A/Q)s + A)/(A s² + (√A/Q)s + 1): poles at f0/√A, zeros at f0·√A, A² at DC;
        // the high shelf's poles at f0·√A, zeros at f0/√A, 1 at DC. Both by impulse invariance (the
        // zeros only if they lie below Nyquist; else the cookbook's numerator, scaled).
        let q = type == .lowShelf || type == .highShelf ? 0.5.squareRoot() : FilterBand.q(forBandwidth: bw)
        let root = pow(10, gain / 80)
        let isLow = type == .lowShelf || type == .resonantLowShelf
        let w0 = 2 * Double.pi * f0 / rate
        let zeta = 1 / (2 * q)
        func pair(_ w: Double) -> (Double, Double)? {
            guard w * (max(0, 1 - zeta * zeta)).squareRoot() < Double.pi else { return nil }
            return impulseInvariant(w, zeta: zeta)
        }
        guard let (a1, a2) = pair(isLow ? w0 / root : w0 * root) else { return cookbook }
        let (z1, z2) = pair(isLow ? w0 * root : w0 / root) ?? (cookbook.b1 / cookbook.b0, cookbook.b2 / cookbook.b0)
        let dc = isLow ? root * root * root * root : 1
        let g = dc * (1 + a1 + a2) / (1 + z1 + z2)
        let start = BiquadCoefficients(b0: g, b1: g * z1, b2: g * z2, a1: a1, a2: a2)
        return start.isFiniteAndStable && g.isFinite ? start : cookbook
    }

    /// The refined design (from the side whose poles lie below the frequency), else the fallback.
    private static func refinedOrStart(
        _ type: FilterType, _ f0: Double, _ gain: Double, _ bw: Double, _ rate: Double
    ) -> BiquadCoefficients? {
        guard let start = start(type, f0, gain, bw, rate), start.isFiniteAndStable else { return nil }
        // Below ~90 Hz sampling the 20 Hz…0.45 × rate grid is empty: keep the fallback.
        guard 0.45 * rate > 40 else { return fallback(type, f0, gain, bw, rate) }
        var fit = MatchedFit(type, f0, gain, bw, rate)
        if let refined = fit.refine(from: start), refined.isFiniteAndStable { return refined }
        return fallback(type, f0, gain, bw, rate)
    }

    /// All coefficients finite and both poles inside the unit circle, with a margin (the stability
    /// triangle |a2| < 1, |a1| < 1 + a2, each by 1e-12: legitimate designs down to 1 Hz at 192 kHz keep
    /// 1 + a1 + a2 ≈ ω0² > 1e-9).
    fileprivate var isFiniteAndStable: Bool {
        b0.isFinite && b1.isFinite && b2.isFinite && a1.isFinite && a2.isFinite && abs(a2) < 1 - 1e-12
            && abs(a1) < 1 + a2 - 1e-12
    }
}

/// The fit's grid and working storage, of fixed capacity so that it lives on the stack.
///
/// Quadratics are kept in u = x/x0 (x0 = sin²(ω0/2)) for conditioning: c0 + c1 u + c2 u².
private struct MatchedFit {
    typealias Buffer = InlineArray<64, Double>
    /// Decibels per neper of power, 10/ln 10.
    static let decibelsPerNeper = 4.342_944_819_032_518
    /// 32 log-spaced points and up to three bands of 9, leaving room for the guard points.
    static let fitCapacity = 64 - 14
    /// Fit points 0..<fitCount (at most `fitCapacity`), then guard points up to count (at most 5 + 9).
    var u = Buffer(repeating: 0)
    /// The analog response (dB) at the fit points.
    var target = Buffer(repeating: 0)
    /// 1 above −50 dB, fading to 0 at −70 dB (points below −70 dB are left out).
    var floorWeight = Buffer(repeating: 0)
    var fitCount = 0
    var count = 0
    /// The band the guard points must stay in (dB): the analog range between 0.45 × rate and Nyquist, ±1 dB.
    var high = 0.0
    var low = 0.0
    /// (1, x0, x0²): multiplies coefficients in x into coefficients in u.
    var scale = SIMD3<Double>(1, 1, 1)
    /// The first free numerator coefficient: 2 for high-pass (zeros at DC), 1 for band-pass (a zero at
    /// DC), 0 otherwise.
    var firstFree = 0
    /// Whether guard points also bound the response from below (parametric).
    var twoSided = false
    /// Whether N must be positive on the unit circle (no zeros on it: low-pass and parametric).
    var checkNumerator = false
    /// The notch: its double zero at the frequency is kept, N = n0 (u − 1)², and the fit sees n0 alone
    /// with the zero's decibels (20 log |u − 1|) added at every point.
    var notch = false
    var zeroDecibels = Buffer(repeating: 0)
    var type: FilterType

    /// Lawson weights of the points.
    var weight = Buffer(repeating: 0)
    /// Residuals (dB) and the values of N and D at every point: the current solution at offset `current`,
    /// a trial at 64 − `current` (accepting a trial flips the offset; nothing is copied).
    var residual = InlineArray<128, Double>(repeating: 0)
    var numerator = InlineArray<128, Double>(repeating: 0)
    var denominator = InlineArray<128, Double>(repeating: 0)
    var current = 0

    init(_ type: FilterType, _ f0: Double, _ gain: Double, _ bw: Double, _ rate: Double) {
        self.type = type
        let lowOrHigh = type == .lowPass || type == .highPass || type == .lowShelf || type == .highShelf
        let q = lowOrHigh ? 0.5.squareRoot() : FilterBand.q(forBandwidth: bw)
        let amplitude = pow(10, gain / 40)
        let x0 = Self.x(f0, rate)
        scale = SIMD3(1, x0, x0 * x0)
        let isHigh = type == .highPass || type == .resonantHighPass
        firstFree = isHigh ? 2 : type == .bandPass ? 1 : 0
        notch = type == .bandStop
        twoSided = type == .parametric || type.isShelf || notch
        checkNumerator = !(isHigh || type == .bandPass)
        let top = 0.45 * rate
        // Fit points: 32 log-spaced from 20 Hz to 0.45 × rate, 9 across the band (±half its width).
        let logStep = pow(top / 20, 1.0 / 31)
        var f = 20.0
        for k in 0..<32 {
            add(k == 31 ? top : f, f0, q, amplitude, rate)
            f *= logStep
        }
        let octaves = lowOrHigh ? 1.9 : type.isShelf ? max(bw, 1.9) : bw
        if type.isShelf && !lowOrHigh {
            // A resonant shelf: a peak and a dip, at f0 / √A and f0 · √A, each about its bandwidth
            // wide: 9 points across twice that around each.
            let ratio = amplitude.squareRoot()
            addBand(around: f0 / ratio, octaves: 2 * bw, f0, q, amplitude, rate)
            addBand(around: f0 * ratio, octaves: 2 * bw, f0, q, amplitude, rate)
        } else {
            addBand(around: f0, octaves: octaves, f0, q, amplitude, rate)
            // A resonance's flanks, out to twice its width on either side.
            if !lowOrHigh { addBand(around: f0, octaves: 4 * bw, f0, q, amplitude, rate) }
        }
        fitCount = count
        // Guard points between 0.45 × rate and Nyquist.
        var highest = Self.analog(type, top / f0, q, amplitude)
        var lowest = highest
        for k in 0..<14 {
            let g: Double
            if k < 5 {
                g = (0.46 + 0.01 * Double(k)) * rate
            } else {
                g = f0 * pow(2, Double(k - 9) * octaves / 8)
                guard g > top && g < 0.5 * rate else { continue }
            }
            let t = Self.analog(type, g / f0, q, amplitude)
            let v = Self.x(g, rate) / x0
            if notch && !(abs(v - 1) > 1e-9) { continue }
            highest = max(highest, t)
            lowest = min(lowest, t)
            u[count] = v
            zeroDecibels[count] = notch ? 20 * log10(abs(v - 1)) : 0
            count += 1
        }
        high = max(highest, -50) + 1
        low = lowest - 1
    }

    /// x = sin²(πf/rate).
    static func x(_ f: Double, _ rate: Double) -> Double {
        let s = sin(Double.pi * f / rate)
        return s * s
    }

    /// The analog prototype's response (dB) at `ratio` = f/f0.
    static func analog(_ type: FilterType, _ ratio: Double, _ q: Double, _ amplitude: Double) -> Double {
        let x2 = ratio * ratio
        let real = (1 - x2) * (1 - x2)
        let denominator = real + x2 / (q * q)
        switch type {
        case .lowPass, .resonantLowPass: return -10 * log10(denominator)
        case .highPass, .resonantHighPass: return 10 * log10(x2 * x2 / denominator)
        case .bandPass: return 10 * log10(x2 / (q * q) / denominator)
        case .bandStop: return 10 * log10(max(real / denominator, 1e-30))
        case .lowShelf, .resonantLowShelf, .highShelf, .resonantHighShelf:
            // A·(s² + (√A/Q)s + A)/(A s² + (√A/Q)s + 1) for the low shelf; the high shelf swaps the
            // outer coefficients of both.
            let a = amplitude
            let lowTerm = (a - x2) * (a - x2) + a * x2 / (q * q)
            let highTerm = (1 - a * x2) * (1 - a * x2) + a * x2 / (q * q)
            let ratio = type == .lowShelf || type == .resonantLowShelf ? lowTerm / highTerm : highTerm / lowTerm
            return 10 * log10(a * a * ratio)
        default:
            let a2 = amplitude * amplitude
            return 10 * log10((real + x2 * a2 / (q * q)) / (real + x2 / (a2 * q * q)))
        }
    }

    /// Adds 9 fit points across `octaves` around `center` (those from 20 Hz to 0.45 × rate).
    mutating func addBand(
        around center: Double, octaves: Double, _ f0: Double, _ q: Double, _ amplitude: Double, _ rate: Double
    ) {
        let step = pow(2, octaves / 8)
        var f = center * pow(2, -octaves / 2)
        for _ in 0...8 {
            if f >= 20 && f <= 0.45 * rate * (1 + 1e-12) { add(f, f0, q, amplitude, rate) }
            f *= step
        }
    }

    /// Adds a fit point at `f` unless the analog response there is below −70 dB.
    mutating func add(_ f: Double, _ f0: Double, _ q: Double, _ amplitude: Double, _ rate: Double) {
        let t = Self.analog(type, f / f0, q, amplitude)
        guard t > -70, count < Self.fitCapacity else { return }
        u[count] = Self.x(f, rate) / scale[1]
        zeroDecibels[count] = notch ? 20 * log10(abs(u[count] - 1)) : 0
        target[count] = t
        floorWeight[count] = min(max((t + 70) / 20, 0), 1)
        count += 1
    }

    /// |p0 + p1 z⁻¹ + p2 z⁻²|² as c0 + c1 x + c2 x².
    static func squared(_ p0: Double, _ p1: Double, _ p2: Double) -> SIMD3<Double> {
        let b0 = (p0 + p1 + p2) * (p0 + p1 + p2)
        let b1 = (p0 - p1 + p2) * (p0 - p1 + p2)
        let b2 = -4 * p0 * p2
        return SIMD3(b0, b1 - b0 + 4 * b2, -4 * b2)
    }

    /// The minimum-phase (p0, p1, p2) whose `squared` is `c` (Vicanek 2016, the zeros' formulas).
    static func factor(_ c: SIMD3<Double>) -> (Double, Double, Double) {
        let bigB0 = c[0]
        let bigB1 = c[0] + c[1] + c[2]
        let bigB2 = -c[2] / 4
        let s0 = max(bigB0, 0).squareRoot()
        let s1 = max(bigB1, 0).squareRoot()
        let w = (s0 + s1) / 2
        let p0 = (w + max(0, w * w + bigB2).squareRoot()) / 2
        return (p0, (s0 - s1) / 2, -bigB2 / (4 * p0))
    }

    /// The minimum of c0 + c1 x + c2 x² over 0 ≤ x ≤ 1 (NaN-safe callers compare with `> 0`).
    static func minimum(_ c: SIMD3<Double>) -> Double {
        var m = min(c[0], c[0] + c[1] + c[2])
        if c[2] > 0 {
            let vertex = -c[1] / (2 * c[2])
            if vertex > 0 && vertex < 1 { m = min(m, c[0] - c[1] * c[1] / (4 * c[2])) }
        }
        return m
    }

    /// Fills the residuals and N, D values at `offset` for the quadratics `num`, `den` (in u) and returns the
    /// weighted squared error; nil if N or D is not positive on [0, 1] in x.
    mutating func evaluate(_ num: SIMD3<Double>, _ den: SIMD3<Double>, at offset: Int) -> Double? {
        guard Self.minimum(den / scale) > 0 else { return nil }
        if checkNumerator { guard Self.minimum(num / scale) > 0 else { return nil } }
        var cost = 0.0
        for i in 0..<count {
            let v = u[i]
            let n = num[0] + (num[1] + num[2] * v) * v
            let d = den[0] + (den[1] + den[2] * v) * v
            guard n > 0 && d > 0 else { return nil }
            numerator[offset + i] = n
            denominator[offset + i] = d
            let e = Self.decibelsPerNeper * log(n / d) + zeroDecibels[i]
            let r: Double
            if i < fitCount {
                r = e - target[i]
            } else if e > high {
                r = e - high
            } else if twoSided && e < low {
                r = e - low
            } else {
                r = 0
            }
            residual[offset + i] = r
            cost += weight[i] * r * r
        }
        return cost
    }

    /// The minimax measure of the current solution: worst floor-weighted error at the fit points plus the
    /// worst guard violation.
    mutating func score() -> Double {
        var fitted = 0.0
        var guarded = 0.0
        for i in 0..<fitCount { fitted = max(fitted, floorWeight[i] * abs(residual[current + i])) }
        for i in fitCount..<count { guarded = max(guarded, abs(residual[current + i])) }
        return fitted + guarded
    }

    /// The least-squares numerator for the start's poles: minimises Σ w² (N/(T·D) − 1)², with N(0)
    /// fixed at `n0` (Vicanek's DC value; 0 for band-pass) or, if nil, free as well (shelves). Nil
    /// if singular or if N would not be positive.
    mutating func leastSquaresNumerator(_ den: SIMD3<Double>, fixing n0: Double?) -> SIMD3<Double>? {
        let first = n0 == nil ? 0 : 1
        let unknowns = 3 - first
        var normal = InlineArray<25, Double>(repeating: 0)
        var right = InlineArray<5, Double>(repeating: 0)
        for i in 0..<fitCount {
            let v = u[i]
            let d = den[0] + (den[1] + den[2] * v) * v
            let w = floorWeight[i]
            let s = 1 / (exp(target[i] / Self.decibelsPerNeper) * d)
            let row = SIMD3(1, v, v * v) * (s * w)
            let rhs = (1 - (n0 ?? 0) * s) * w
            for j in 0..<unknowns {
                right[j] += row[first + j] * rhs
                for k in 0..<unknowns { normal[j * 5 + k] += row[first + j] * row[first + k] }
            }
        }
        guard Self.solve(&normal, &right, unknowns) else { return nil }
        let candidate = n0.map { SIMD3($0, right[0], right[1]) } ?? SIMD3(right[0], right[1], right[2])
        guard candidate[0].isFinite && candidate[1].isFinite && candidate[2].isFinite else { return nil }
        // Band-pass: N = x (n1 + n2 x) must be positive inside (0, 1].
        let inX = candidate / scale
        let check = type == .bandPass ? SIMD3(inX[1], inX[2], 0) : inX
        return Self.minimum(check) > 0 ? candidate : nil
    }

    /// Solves a x = b (n ≤ 5, row stride 5) by Gaussian elimination with partial pivoting; b becomes x.
    static func solve(_ a: inout InlineArray<25, Double>, _ b: inout InlineArray<5, Double>, _ n: Int) -> Bool {
        for c in 0..<n {
            var pivot = c
            for r in (c + 1)..<n where abs(a[r * 5 + c]) > abs(a[pivot * 5 + c]) { pivot = r }
            let p = a[pivot * 5 + c]
            guard p != 0, p.isFinite else { return false }
            if pivot != c {
                for j in c..<n { a.swapAt(c * 5 + j, pivot * 5 + j) }
                b.swapAt(c, pivot)
            }
            for r in (c + 1)..<n {
                let factor = a[r * 5 + c] / p
                if factor == 0 { continue }
                for j in c..<n { a[r * 5 + j] -= factor * a[c * 5 + j] }
                b[r] -= factor * b[c]
            }
        }
        for c in stride(from: n - 1, through: 0, by: -1) {
            var s = b[c]
            for j in (c + 1)..<n { s -= a[c * 5 + j] * b[j] }
            b[c] = s / a[c * 5 + c]
        }
        return true
    }

    /// Runs the fit from `start`; nil if the grid is too small or the start is infeasible.
    mutating func refine(from start: BiquadCoefficients) -> BiquadCoefficients? {
        guard fitCount >= 6 else { return nil }
        let den0 = Self.squared(1, start.a1, start.a2) * scale
        var num = Self.squared(start.b0, start.b1, start.b2) * scale
        if notch { num = SIMD3(num[0], 0, 0) }
        var den = den0
        if notch {
            // n0 alone: the Levenberg–Marquardt steps below.
        } else if type.isShelf {
            // The least-squares numerator if its minimax error is smaller than the start's.
            weight = floorWeight
            current = 0
            if let candidate = leastSquaresNumerator(den0, fixing: nil), evaluate(candidate, den0, at: 0) != nil {
                let fitted = score()
                if evaluate(num, den0, at: 0) == nil || fitted < score() { num = candidate }
            }
        } else if firstFree < 2, let candidate = leastSquaresNumerator(den0, fixing: type == .bandPass ? 0 : den0[0]) {
            num = candidate
        }
        weight = floorWeight
        for i in fitCount..<count { weight[i] = 1 }
        current = 0
        guard var cost = evaluate(num, den, at: current) else { return nil }
        var best = (score: score(), num: num, den: den)
        let numeratorFree = notch ? 1 : 3 - firstFree
        let p = numeratorFree + 2
        // At most 6 Lawson rounds of at most 4 Levenberg–Marquardt steps, a round's steps ending early
        // once a step gains less than 0.1 % of the cost, and at most 64 trial evaluations in all (on the
        // test grids: 13–16 on average, 60 at most), which bounds the worst case.
        var evaluationsLeft = 64
        for _ in 0..<6 {
            var lambda = 1e-3
            var converged = false
            for _ in 0..<4 {
                // Gauss–Newton normal equations of the weighted dB residuals. The Jacobian row of a point
                // is (dn·uᵏ for the free numerator coefficients, dd·u, dd·u²), dn = K/N, dd = −K/D
                // (K = 10/ln 10), so the normal matrix needs only the weighted moments Σ w·dn²·uᵏ,
                // Σ w·dn·dd·uᵏ and Σ w·dd²·uᵏ.
                var numNum = InlineArray<5, Double>(repeating: 0)
                var numDen = InlineArray<5, Double>(repeating: 0)
                var denDen = InlineArray<5, Double>(repeating: 0)
                var gradNum = SIMD3<Double>(0, 0, 0)
                var gradDen = SIMD3<Double>(0, 0, 0)
                for i in 0..<count {
                    let r = residual[current + i]
                    if i >= fitCount && r == 0 { continue }  // an inactive guard
                    let w = weight[i]
                    let v = u[i]
                    let v2 = v * v
                    let powers = SIMD3(1, v, v2)
                    let dn = Self.decibelsPerNeper / numerator[current + i]
                    let dd = -Self.decibelsPerNeper / denominator[current + i]
                    let (wnn, wnd, wdd) = (w * dn * dn, w * dn * dd, w * dd * dd)
                    numNum[0] += wnn
                    numNum[1] += wnn * v
                    numNum[2] += wnn * v2
                    numNum[3] += wnn * v2 * v
                    numNum[4] += wnn * v2 * v2
                    numDen[1] += wnd * v
                    numDen[2] += wnd * v2
                    numDen[3] += wnd * v2 * v
                    numDen[4] += wnd * v2 * v2
                    denDen[2] += wdd * v2
                    denDen[3] += wdd * v2 * v
                    denDen[4] += wdd * v2 * v2
                    gradNum += (w * dn * r) * powers
                    gradDen += (w * dd * r) * powers
                }
                // Unknowns: numerator coefficients firstFree…2, then denominator coefficients 1 and 2. The
                // entry of two unknowns of powers k and l is the (k + l)-th moment of their kinds.
                var hessian = InlineArray<25, Double>(repeating: 0)
                var gradient = InlineArray<5, Double>(repeating: 0)
                for a in 0..<p {
                    let aNum = a < numeratorFree
                    let ka = aNum ? firstFree + a : a - numeratorFree + 1
                    gradient[a] = aNum ? gradNum[ka] : gradDen[ka]
                    for b in 0..<p {
                        let bNum = b < numeratorFree
                        let k = ka + (bNum ? firstFree + b : b - numeratorFree + 1)
                        switch (aNum, bNum) {
                        case (true, true): hessian[a * 5 + b] = numNum[k]
                        case (false, false): hessian[a * 5 + b] = denDen[k]
                        default: hessian[a * 5 + b] = numDen[k]
                        }
                    }
                }
                var accepted = false
                while lambda < 1e6 && evaluationsLeft > 0 {
                    var damped = hessian
                    var step = InlineArray<5, Double>(repeating: 0)
                    for a in 0..<p {
                        damped[a * 5 + a] += lambda * (hessian[a * 5 + a] + 1e-12)
                        step[a] = -gradient[a]
                    }
                    if Self.solve(&damped, &step, p) {
                        var nextNum = num
                        var nextDen = den
                        for j in 0..<numeratorFree { nextNum[firstFree + j] += step[j] }
                        nextDen[1] += step[p - 2]
                        nextDen[2] += step[p - 1]
                        evaluationsLeft -= 1
                        if let nextCost = evaluate(nextNum, nextDen, at: 64 - current), nextCost < cost {
                            num = nextNum
                            den = nextDen
                            converged = cost - nextCost < 1e-3 * nextCost
                            cost = nextCost
                            current = 64 - current
                            lambda = max(lambda / 3, 1e-7)
                            accepted = true
                            break
                        }
                    }
                    lambda *= 10
                }
                if !accepted || converged { break }
            }
            let s = score()
            if s < best.score { best = (s, num, den) }
            // Lawson: weights ∝ weights × |residual|, pushing the fit toward equal-ripple error.
            var total = 0.0
            for i in 0..<count {
                weight[i] *= abs(residual[current + i]) + 1e-3
                total += weight[i]
            }
            guard total > 0, total.isFinite else { break }
            let normalise = Double(count) / total
            cost = 0
            for i in 0..<count {
                weight[i] *= normalise
                cost += weight[i] * residual[current + i] * residual[current + i]
            }
        }
        let a = Self.factor(best.den / scale)
        if notch {
            // N = 16 b0² x0² (u − 1)² for the numerator b0 (1 − 2 cos ω0 z⁻¹ + z⁻²).
            let b0 = best.num[0].squareRoot() / (4 * scale[1])
            let b1 = -2 * (1 - 2 * scale[1]) * b0
            return BiquadCoefficients(b0: b0 / a.0, b1: b1 / a.0, b2: b0 / a.0, a1: a.1 / a.0, a2: a.2 / a.0)
        }
        let b = Self.factor(best.num / scale)
        return BiquadCoefficients(b0: b.0 / a.0, b1: b.1 / a.0, b2: b.2 / a.0, a1: a.1 / a.0, a2: a.2 / a.0)
    }
}
