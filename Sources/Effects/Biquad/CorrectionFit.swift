#if canImport(Glibc)
    import Glibc
#endif

/// The fit of the settled matched design's second section (`BandCoefficients.matched`): its grid and
/// working storage, of fixed capacity so that it lives on the stack (no heap allocation: it runs on the
/// audio thread).
///
/// The correction's squared magnitude is N(x)/D(x), x = sin²(ω/2), with N = n0 + n1 x + n2 x² and
/// D = 1 + d1 x + d2 x².
struct CorrectionFit {
    typealias Buffer = InlineArray<64, Double>
    /// Decibels per neper of power, 10/ln 10.
    static let decibelsPerNeper = 4.342_944_819_032_518
    var x = Buffer(repeating: 0)
    /// What the structure misses (dB): the analog response minus the structure's.
    var target = Buffer(repeating: 0)
    /// 1 up to 0.45 × rate, 0.3 beyond.
    var base = Buffer(repeating: 0)
    var count = 0
    /// Lawson weights of the points.
    var weight = Buffer(repeating: 0)
    /// Residuals (dB) and the values of N and D at every point: the current solution at offset `current`,
    /// a trial at 64 − `current` (accepting a trial flips the offset; nothing is copied).
    var residual = InlineArray<128, Double>(repeating: 0)
    var numerator = InlineArray<128, Double>(repeating: 0)
    var denominator = InlineArray<128, Double>(repeating: 0)
    var current = 0

    init(
        _ type: FilterType, _ f0: Double, _ gain: Double, _ bw: Double, _ rate: Double,
        structure: BiquadCoefficients
    ) {
        let q = type.prototypeQ(bandwidth: bw)
        let amplitude = pow(10, gain / 40)
        let top = 0.45 * rate
        func add(_ f: Double, base: Double) {
            guard f >= 20, f <= 0.5 * rate, count < 64 else { return }
            let analog = Self.analog(type, f / f0, q, amplitude)
            let digital = 20 * log10(structure.magnitude(atFrequency: f, sampleRate: rate))
            // Both vanish at a notch's frequency: its ratio is left to the neighbouring points.
            guard analog > -120, digital > -120, analog.isFinite, digital.isFinite else { return }
            let s = sin(Double.pi * f / rate)
            x[count] = s * s
            target[count] = analog - digital
            self.base[count] = base
            count += 1
        }
        // 40 log-spaced from 20 Hz to 0.45 × rate.
        let logStep = pow(top / 20, 1.0 / 39)
        var f = 20.0
        for k in 0..<40 {
            add(k == 39 ? top : f, base: 1)
            f *= logStep
        }
        // Across the resonance: 13 over ±2 bandwidths (plain types: ±1 octave); a resonant shelf's
        // peak and dip, at f0/√A and f0·√A, 6 over ±1 bandwidth each.
        func addBand(around center: Double, octaves: Double, points: Int) {
            let step = pow(2, octaves / Double(points - 1))
            var f = center * pow(2, -octaves / 2)
            for _ in 0..<points {
                if f <= top * (1 + 1e-12) { add(f, base: 1) }
                f *= step
            }
        }
        if type == .resonantLowShelf || type == .resonantHighShelf {
            let root = amplitude.squareRoot()
            addBand(around: f0 / root, octaves: 2 * bw, points: 6)
            addBand(around: f0 * root, octaves: 2 * bw, points: 6)
        } else {
            addBand(around: f0, octaves: type.usesBandwidth ? 4 * bw : 2, points: 13)
        }
        // Between 0.45 × rate and Nyquist, with less weight.
        for k in 1...5 { add((0.45 + 0.01 * Double(k)) * rate, base: 0.3) }
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
        case .parametric:
            let a2 = amplitude * amplitude
            return 10 * log10((real + x2 * a2 / (q * q)) / (real + x2 / (a2 * q * q)))
        }
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

    /// The minimum of c0 + c1 x + c2 x² over 0 ≤ x ≤ 1 (−1 if a coefficient is not finite: callers
    /// compare with `> 0`).
    static func minimum(_ c: SIMD3<Double>) -> Double {
        guard c[0].isFinite && c[1].isFinite && c[2].isFinite else { return -1 }
        var m = min(c[0], c[0] + c[1] + c[2])
        if c[2] > 0 {
            let vertex = -c[1] / (2 * c[2])
            if vertex > 0 && vertex < 1 { m = min(m, c[0] - c[1] * c[1] / (4 * c[2])) }
        }
        return m
    }

    /// Fills the residuals and N, D values at `offset` for the quadratics `num` and `den` and returns the
    /// weighted squared error; nil if N or D is not positive on [0, 1].
    mutating func evaluate(_ num: SIMD3<Double>, _ den: SIMD3<Double>, at offset: Int) -> Double? {
        guard Self.minimum(den) > 0, Self.minimum(num) > 0 else { return nil }
        var cost = 0.0
        for i in 0..<count {
            let v = x[i]
            let n = num[0] + (num[1] + num[2] * v) * v
            let d = den[0] + (den[1] + den[2] * v) * v
            numerator[offset + i] = n
            denominator[offset + i] = d
            let r = Self.decibelsPerNeper * log(n / d) - target[i]
            residual[offset + i] = r
            cost += weight[i] * r * r
        }
        return cost
    }

    /// The minimax measure of the current solution: the worst base-weighted error.
    func score() -> Double {
        var worst = 0.0
        for i in 0..<count { worst = max(worst, base[i] * abs(residual[current + i])) }
        return worst
    }

    /// The start: N and D from one linear least-squares fit of the equation error N/T − D (T the
    /// target as a power ratio); nil if singular or if N or D would not be positive.
    func linearStart() -> (SIMD3<Double>, SIMD3<Double>)? {
        var normal = InlineArray<25, Double>(repeating: 0)
        var right = InlineArray<5, Double>(repeating: 0)
        for i in 0..<count {
            let v = x[i]
            let t = 1 / exp(target[i] / Self.decibelsPerNeper)
            let w = base[i]
            let row: InlineArray<5, Double> = [t * w, v * t * w, v * v * t * w, -v * w, -v * v * w]
            for j in 0..<5 {
                right[j] += row[j] * w
                for k in 0..<5 { normal[j * 5 + k] += row[j] * row[k] }
            }
        }
        guard Self.solve(&normal, &right, 5) else { return nil }
        let num = SIMD3(right[0], right[1], right[2])
        let den = SIMD3(1, right[3], right[4])
        guard Self.minimum(num) > 0, Self.minimum(den) > 0 else { return nil }
        return (num, den)
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

    /// Runs the fit; the correction biquad, or nil if the grid is too small or nothing feasible was found.
    mutating func run() -> BiquadCoefficients? {
        guard count >= 6 else { return nil }
        var mean = 0.0
        for i in 0..<count { mean += target[i] }
        mean /= Double(count)
        let flat = (SIMD3(exp(mean / Self.decibelsPerNeper), 0, 0), SIMD3<Double>(1, 0, 0))
        var (num, den) = linearStart() ?? flat
        weight = base
        current = 0
        guard
            var cost = evaluate(num, den, at: current)
                ?? {
                    (num, den) = flat
                    return evaluate(num, den, at: current)
                }()
        else { return nil }
        var best = (score: score(), num: num, den: den)
        // At most 6 Lawson rounds of at most 4 Levenberg–Marquardt steps, a round's steps ending early
        // once a step gains less than 0.1 % of the cost, and at most 64 trial evaluations in all.
        var evaluationsLeft = 64
        for _ in 0..<6 {
            var lambda = 1e-3
            var converged = false
            for _ in 0..<4 {
                let (hessian, gradient) = normalEquations()
                var accepted = false
                while lambda < 1e6 && evaluationsLeft > 0 {
                    var damped = hessian
                    var step = InlineArray<5, Double>(repeating: 0)
                    for a in 0..<5 {
                        damped[a * 5 + a] += lambda * (hessian[a * 5 + a] + 1e-12)
                        step[a] = -gradient[a]
                    }
                    if Self.solve(&damped, &step, 5) {
                        let nextNum = num + SIMD3(step[0], step[1], step[2])
                        let nextDen = den + SIMD3(0, step[3], step[4])
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
            guard let reweighted = reweight() else { break }
            cost = reweighted
        }
        let a = Self.factor(best.den)
        let b = Self.factor(best.num)
        return BiquadCoefficients(b0: b.0 / a.0, b1: b.1 / a.0, b2: b.2 / a.0, a1: a.1 / a.0, a2: a.2 / a.0)
    }

    /// Gauss–Newton normal equations of the weighted dB residuals. The Jacobian row of a point
    /// is (dn, dn·x, dn·x², dd·x, dd·x²), dn = K/N, dd = −K/D (K = 10/ln 10), so the normal
    /// matrix needs only the weighted moments Σ w·dn²·xᵏ, Σ w·dn·dd·xᵏ and Σ w·dd²·xᵏ.
    /// Returns the normal matrix (5 × 5, row-major) and the gradient, at the fit's `current` point.
    /// `mutating` though it only reads: as a non-mutating method, the fit (some 5 KB of
    /// fixed storage) was copied at every call, and a design took 2.5 times as long.
    @inline(__always)
    private mutating func normalEquations() -> (hessian: InlineArray<25, Double>, gradient: InlineArray<5, Double>) {
        var numNum = InlineArray<5, Double>(repeating: 0)
        var numDen = InlineArray<5, Double>(repeating: 0)
        var denDen = InlineArray<5, Double>(repeating: 0)
        var gradNum = SIMD3<Double>(0, 0, 0)
        var gradDen = SIMD3<Double>(0, 0, 0)
        for i in 0..<count {
            let r = residual[current + i]
            let w = weight[i]
            let v = x[i]
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
        // Unknowns: n0, n1, n2, d1, d2. The entry of two unknowns of powers k and l is the
        // (k + l)-th moment of their kinds.
        var hessian = InlineArray<25, Double>(repeating: 0)
        var gradient = InlineArray<5, Double>(repeating: 0)
        for a in 0..<5 {
            let aNum = a < 3
            let ka = aNum ? a : a - 2
            gradient[a] = aNum ? gradNum[ka] : gradDen[ka]
            for b in 0..<5 {
                let bNum = b < 3
                let k = ka + (bNum ? b : b - 2)
                switch (aNum, bNum) {
                case (true, true): hessian[a * 5 + b] = numNum[k]
                case (false, false): hessian[a * 5 + b] = denDen[k]
                default: hessian[a * 5 + b] = numDen[k]
                }
            }
        }
        return (hessian, gradient)
    }
    /// Lawson's step: each weight times its point's |residual|, pushing the fit toward equal-ripple
    /// error, the weights normalised to a mean of 1. Returns the weighted cost under the new
    /// weights; nil when they do not sum to a positive, finite total (the fit stops there).
    @inline(__always)
    private mutating func reweight() -> Double? {
        var total = 0.0
        for i in 0..<count {
            weight[i] *= abs(residual[current + i]) + 1e-3
            total += weight[i]
        }
        guard total > 0, total.isFinite else { return nil }
        let normalise = Double(count) / total
        var cost = 0.0
        for i in 0..<count {
            weight[i] *= normalise
            cost += weight[i] * residual[current + i] * residual[current + i]
        }
        return cost
    }

    /// The correction's mean level (dB) over the fit points up to 0.45 × rate: moved into the first
    /// section, it leaves the correction near 0 dB and the first section near the prototype, so that
    /// gliding from or to the one-section closed form never passes through a large gain.
    func meanLevel(of correction: BiquadCoefficients) -> Double {
        let num = Self.squared(correction.b0, correction.b1, correction.b2)
        let den = Self.squared(1, correction.a1, correction.a2)
        var sum = 0.0
        var points = 0
        for i in 0..<count where base[i] == 1 {
            let v = x[i]
            sum +=
                Self.decibelsPerNeper * log((num[0] + (num[1] + num[2] * v) * v) / (den[0] + (den[1] + den[2] * v) * v))
            points += 1
        }
        return points > 0 ? sum / Double(points) : 0
    }
}
