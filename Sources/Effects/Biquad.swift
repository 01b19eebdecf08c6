#if canImport(Glibc)
    import Glibc
#endif

/// The filter shapes of an EQ band, as AVAudioUnitEQ names them.
public enum FilterType: String, CaseIterable, Hashable, Sendable {
    /// A peak or dip of `gain` dB at the frequency, `bandwidth` octaves wide.
    case parametric
    /// Second-order Butterworth low-pass: −3 dB at the frequency.
    case lowPass
    /// Second-order Butterworth high-pass: −3 dB at the frequency.
    case highPass
    /// Second-order low-pass with a resonance set by `bandwidth` (narrower: higher peak).
    case resonantLowPass
    case resonantHighPass
    /// Band-pass with 0 dB at the frequency, `bandwidth` octaves wide.
    case bandPass
    /// Notch at the frequency, `bandwidth` octaves wide.
    case bandStop
    /// Shelf of `gain` dB below the frequency (half the gain at the frequency), steepest without overshoot.
    case lowShelf
    /// Shelf of `gain` dB above the frequency.
    case highShelf
    /// Shelves whose slope (and overshoot) is set by `bandwidth`.
    case resonantLowShelf
    case resonantHighShelf

    /// The cases in order, stored once (`allCases` allocates a new array on every call).
    static let table = FilterType.allCases

    /// Whether `gain` shapes the response.
    public var usesGain: Bool {
        switch self {
        case .parametric, .lowShelf, .highShelf, .resonantLowShelf, .resonantHighShelf: return true
        default: return false
        }
    }

    /// The analog prototype's Q: Butterworth (1/√2) for the plain low-pass, high-pass and shelves,
    /// else that of `bandwidth` octaves.
    func prototypeQ(bandwidth: Double) -> Double {
        usesBandwidth ? FilterBand.q(forBandwidth: bandwidth) : 0.5.squareRoot()
    }

    /// Whether `bandwidth` shapes the response.
    public var usesBandwidth: Bool {
        switch self {
        case .lowPass, .highPass, .lowShelf, .highShelf: return false
        default: return true
        }
    }
}

/// How a band's analog prototype becomes a digital filter.
public enum FilterDesign: String, CaseIterable, Hashable, Sendable {
    /// Robert Bristow-Johnson's Audio EQ Cookbook (bilinear transform, prewarped at the
    /// frequency): what AVAudioUnitEQ and most EQs do. Responses cramp near Nyquist.
    case cookbook
    /// Responses matched to the analog prototype up to near Nyquist, so high bands keep their
    /// shape: two biquads per band. The first maps the prototype's poles by impulse invariance, as
    /// Martin Vicanek's matched second-order filters (2016) do, and its zeros the same way (or keeps
    /// them exact at DC, or on the unit circle for the notch), which keeps every resonance's
    /// frequency, height and width however narrow; the second corrects what remains, a smooth curve,
    /// by a minimax fit of the magnitude in dB. Within 1 dB of the prototype up to 0.45 × the sample
    /// rate over the parameters' whole range (tested from 10 Hz to 21 kHz, −96 to +24 dB, 0.05 to 5
    /// octaves, at 44.1 and 48 kHz: up to 0.8 dB for resonant shelves of 0.05 to 0.1 octave, 0.55
    /// dB or less for every other type).
    /// While a band glides it uses one section, Vicanek's closed form (shelves: the cookbook's); once
    /// it settles the two-section design is computed (on the audio thread, bounded: 34 µs on average
    /// and 61 µs at worst on a current x86-64 core, see BENCHMARKS.md; one per 512 frames of a
    /// quantum, at least one) and the band cross-fades to it over 32 sub-blocks of 16 samples, as it
    /// does back to the closed form when it moves again.
    case matched

    /// The cases in order, stored once.
    static let table = FilterDesign.allCases
}

/// The settings of one band.
public struct FilterBand: Hashable, Sendable {
    public var type: FilterType
    /// Hz.
    public var frequency: Double
    /// dB (for parametric and shelves).
    public var gain: Double
    /// Octaves (for parametric, band-pass, band-stop and the resonant types).
    public var bandwidth: Double

    public init(type: FilterType, frequency: Double, gain: Double = 0, bandwidth: Double = 1) {
        self.type = type
        self.frequency = frequency
        self.gain = gain
        self.bandwidth = bandwidth
    }

    /// The Q of a bandwidth in octaves (the analog relation: 1/Q = 2 sinh(ln 2 / 2 · BW)).
    public static func q(forBandwidth octaves: Double) -> Double { 1 / (2 * sinh(log(2) / 2 * octaves)) }

    /// The settings with those its type ignores set to their defaults (gain 0 dB, bandwidth 1
    /// octave): changing an ignored parameter changes nothing.
    var effective: FilterBand {
        FilterBand(
            type: type, frequency: frequency, gain: type.usesGain ? gain : 0,
            bandwidth: type.usesBandwidth ? bandwidth : 1)
    }
}

/// Normalized second-order coefficients: H(z) = (b0 + b1 z⁻¹ + b2 z⁻²) / (1 + a1 z⁻¹ + a2 z⁻²).
public struct BiquadCoefficients: Hashable, Sendable {
    public var b0, b1, b2, a1, a2: Double

    public init(b0: Double, b1: Double, b2: Double, a1: Double, a2: Double) {
        (self.b0, self.b1, self.b2, self.a1, self.a2) = (b0, b1, b2, a1, a2)
    }

    /// A wire.
    public static let identity = BiquadCoefficients(b0: 1, b1: 0, b2: 0, a1: 0, a2: 0)

    /// The Audio EQ Cookbook coefficients of `band` at `sampleRate` (`BandCoefficients` gives either
    /// design). The frequency is kept below Nyquist.
    public init(_ band: FilterBand, sampleRate: Double) {
        let frequency = min(max(band.frequency, 1), sampleRate * 0.4999)
        self = Self.cookbook(band.type, frequency, band.gain, max(band.bandwidth, 0.001), sampleRate)
    }

    /// RBJ Audio EQ Cookbook.
    static func cookbook(
        _ type: FilterType, _ f0: Double, _ gain: Double, _ bw: Double, _ rate: Double
    )
        -> BiquadCoefficients
    {
        let w0 = 2 * Double.pi * f0 / rate
        let c = cos(w0)
        let s = sin(w0)
        let a = pow(10, gain / 40)
        // (The bandwidth's sinh argument grows without bound as the frequency nears Nyquist, where
        // sin ω0 → 0: capped at 20, which keeps the poles inside the unit circle there; below about
        // 0.46 × rate it is never reached.)
        let alphaBW = s * sinh(min(log(2) / 2 * bw * w0 / s, 20))
        let alphaQ = s / (2 * FilterBand.q(forBandwidth: bw))
        let butterworth = s / (2 * 0.5.squareRoot())
        let (b0, b1, b2, a0, a1, a2): (Double, Double, Double, Double, Double, Double)
        switch type {
        case .lowPass, .resonantLowPass:
            let alpha = type == .lowPass ? butterworth : alphaQ
            (b0, b1, b2) = ((1 - c) / 2, 1 - c, (1 - c) / 2)
            (a0, a1, a2) = (1 + alpha, -2 * c, 1 - alpha)
        case .highPass, .resonantHighPass:
            let alpha = type == .highPass ? butterworth : alphaQ
            (b0, b1, b2) = ((1 + c) / 2, -(1 + c), (1 + c) / 2)
            (a0, a1, a2) = (1 + alpha, -2 * c, 1 - alpha)
        case .bandPass:
            (b0, b1, b2) = (alphaBW, 0, -alphaBW)
            (a0, a1, a2) = (1 + alphaBW, -2 * c, 1 - alphaBW)
        case .bandStop:
            (b0, b1, b2) = (1, -2 * c, 1)
            (a0, a1, a2) = (1 + alphaBW, -2 * c, 1 - alphaBW)
        case .parametric:
            (b0, b1, b2) = (1 + alphaBW * a, -2 * c, 1 - alphaBW * a)
            (a0, a1, a2) = (1 + alphaBW / a, -2 * c, 1 - alphaBW / a)
        case .lowShelf, .resonantLowShelf, .highShelf, .resonantHighShelf:
            // Slope S = 1 (the steepest without overshoot) for plain shelves; Q from the bandwidth
            // for the resonant ones.
            let alpha = type == .lowShelf || type == .highShelf ? s / 2 * 2.0.squareRoot() : alphaQ
            let root = 2 * a.squareRoot() * alpha
            if type == .lowShelf || type == .resonantLowShelf {
                (b0, b1, b2) = (
                    a * ((a + 1) - (a - 1) * c + root), 2 * a * ((a - 1) - (a + 1) * c),
                    a * ((a + 1) - (a - 1) * c - root)
                )
                (a0, a1, a2) = (
                    (a + 1) + (a - 1) * c + root, -2 * ((a - 1) + (a + 1) * c), (a + 1) + (a - 1) * c - root
                )
            } else {
                (b0, b1, b2) = (
                    a * ((a + 1) + (a - 1) * c + root), -2 * a * ((a - 1) + (a + 1) * c),
                    a * ((a + 1) + (a - 1) * c - root)
                )
                (a0, a1, a2) = ((a + 1) - (a - 1) * c + root, 2 * ((a - 1) - (a + 1) * c), (a + 1) - (a - 1) * c - root)
            }
        }
        return BiquadCoefficients(b0: b0 / a0, b1: b1 / a0, b2: b2 / a0, a1: a1 / a0, a2: a2 / a0)
    }

    /// The pair s² + 2ζω s + ω² (ω in radians per sample) by impulse invariance: the digital
    /// quadratic 1 + c1 z⁻¹ + c2 z⁻² with roots e^{s}.
    static func impulseInvariant(_ w: Double, zeta: Double) -> (c1: Double, c2: Double) {
        guard zeta > 1 else {
            return (-2 * exp(-zeta * w) * cos(w * (1 - zeta * zeta).squareRoot()), exp(-2 * zeta * w))
        }
        // Two real roots, −w/(ζ + √(ζ² − 1)) and −w(ζ + √(ζ² − 1)), each mapped on its own (the product
        // of e^{−ζw} and cosh overflows for a large ζ: a +96 dB parametric's zeros).
        let spread = zeta + (zeta * zeta - 1).squareRoot()
        return (-(exp(-w / spread) + exp(-w * spread)), exp(-2 * zeta * w))
    }

    /// Vicanek's matched designs (and a notch in the same manner); nil for the shelves.
    static func matched(
        _ type: FilterType, _ f0: Double, _ gain: Double, _ bw: Double, _ rate: Double
    )
        -> BiquadCoefficients?
    {
        let w0 = 2 * Double.pi * f0 / rate
        let q: Double
        var g = 1.0
        switch type {
        case .lowPass, .highPass: q = 0.5.squareRoot()
        case .resonantLowPass, .resonantHighPass, .bandPass, .bandStop: q = FilterBand.q(forBandwidth: bw)
        case .parametric:
            q = FilterBand.q(forBandwidth: bw)
            g = pow(10, gain / 20)
        default: return nil
        }
        // Poles of the analog prototype, by impulse invariance.
        let (a1, a2) = impulseInvariant(w0, zeta: type == .parametric ? 1 / (2 * q * g.squareRoot()) : 1 / (2 * q))
        let bigA0 = (1 + a1 + a2) * (1 + a1 + a2)
        let bigA1 = (1 - a1 + a2) * (1 - a1 + a2)
        let bigA2 = -4 * a2
        let phi1 = sin(w0 / 2) * sin(w0 / 2)
        let phi0 = 1 - phi1
        let phi2 = 4 * phi0 * phi1
        let sum = bigA0 * phi0 + bigA1 * phi1 + bigA2 * phi2
        switch type {
        case .lowPass, .resonantLowPass:
            let r1 = sum * q * q
            let bigB1 = (r1 - bigA0 * phi0) / phi1
            let b0 = (bigA0.squareRoot() + max(0, bigB1).squareRoot()) / 2
            return BiquadCoefficients(b0: b0, b1: bigA0.squareRoot() - b0, b2: 0, a1: a1, a2: a2)
        case .highPass, .resonantHighPass:
            let b0 = q * max(0, sum).squareRoot() / (4 * phi1)
            return BiquadCoefficients(b0: b0, b1: -2 * b0, b2: b0, a1: a1, a2: a2)
        case .bandStop:
            // (Not in the paper.) The zeros on the unit circle at the frequency, as in the analog
            // notch; unity at DC.
            let k = (1 + a1 + a2) / (4 * phi1)
            return BiquadCoefficients(b0: k, b1: -2 * cos(w0) * k, b2: k, a1: a1, a2: a2)
        case .bandPass:
            let r1 = sum
            let r2 = -bigA0 + bigA1 + 4 * (phi0 - phi1) * bigA2
            let bigB2 = (r1 - r2 * phi1) / (4 * phi1 * phi1)
            let bigB1 = r2 + 4 * (phi1 - phi0) * bigB2
            let b1 = -max(0, bigB1).squareRoot() / 2
            let b0 = ((max(0, bigB2 + b1 * b1)).squareRoot() - b1) / 2
            return BiquadCoefficients(b0: b0, b1: b1, b2: -b0 - b1, a1: a1, a2: a2)
        default:  // parametric
            let r1 = sum * g * g
            let r2 = (-bigA0 + bigA1 + 4 * (phi0 - phi1) * bigA2) * g * g
            let bigB0 = bigA0
            let bigB2 = (r1 - r2 * phi1 - bigB0) / (4 * phi1 * phi1)
            let bigB1 = r2 + bigB0 + 4 * (phi1 - phi0) * bigB2
            let b1 = (1 + a1 + a2 - max(0, bigB1).squareRoot()) / 2
            let w = 1 + a1 + a2 - b1
            let b0 = (w + max(0, w * w + bigB2).squareRoot()) / 2
            return BiquadCoefficients(b0: b0, b1: b1, b2: -bigB2 / (4 * b0), a1: a1, a2: a2)
        }
    }

    /// The magnitude response at `frequency` (linear).
    public func magnitude(atFrequency frequency: Double, sampleRate: Double) -> Double {
        let w = 2 * Double.pi * frequency / sampleRate
        let (c1, s1, c2, s2) = (cos(w), sin(w), cos(2 * w), sin(2 * w))
        let numerator = ((b0 + b1 * c1 + b2 * c2), -(b1 * s1 + b2 * s2))
        let denominator = ((1 + a1 * c1 + a2 * c2), -(a1 * s1 + a2 * s2))
        return
            ((numerator.0 * numerator.0 + numerator.1 * numerator.1)
            / (denominator.0 * denominator.0 + denominator.1 * denominator.1)).squareRoot()
    }

    /// Linear interpolation between two sets (stable for second order: the stability region
    /// of (a1, a2) is convex).
    @inline(__always)
    func interpolated(to other: BiquadCoefficients, _ t: Double) -> BiquadCoefficients {
        BiquadCoefficients(
            b0: b0 + (other.b0 - b0) * t, b1: b1 + (other.b1 - b1) * t, b2: b2 + (other.b2 - b2) * t,
            a1: a1 + (other.a1 - a1) * t, a2: a2 + (other.a2 - a2) * t)
    }
}

/// The digital filter of a band: a biquad and a second one in cascade. The cookbook design is one
/// biquad (`correction` is `.identity`); the matched design maps the analog poles and zeros by impulse
/// invariance in `main` and corrects the remaining smooth error in `correction`.
public struct BandCoefficients: Hashable, Sendable {
    /// The first section.
    public var main: BiquadCoefficients
    /// The second section (`.identity` when there is none).
    public var correction: BiquadCoefficients

    /// A cascade of `main` and `correction` (none by default).
    public init(main: BiquadCoefficients, correction: BiquadCoefficients = .identity) {
        self.main = main
        self.correction = correction
    }

    /// The filter of `band` at `sampleRate` in `design`. The frequency is kept below Nyquist.
    public init(_ band: FilterBand, sampleRate: Double, design: FilterDesign = .cookbook) {
        self.init(band, sampleRate: sampleRate, design: design, refined: true)
    }

    /// `refined: false` gives Vicanek's closed form for the matched design, one section (what a band
    /// uses while it glides, every 16 samples; cookbook shelves), `true` the two-section design (once it
    /// has settled).
    init(_ band: FilterBand, sampleRate: Double, design: FilterDesign, refined: Bool) {
        let frequency = min(max(band.frequency, 1), sampleRate * 0.4999)
        let bandwidth = max(band.bandwidth, 0.001)
        if design == .matched {
            if refined, let matched = Self.matched(band.type, frequency, band.gain, bandwidth, sampleRate) {
                self = matched
                return
            }
            if let closed = BiquadCoefficients.matched(band.type, frequency, band.gain, bandwidth, sampleRate),
                closed.isFiniteAndStable
            {
                self.init(main: closed)
                return
            }
        }
        let cookbook = BiquadCoefficients(band, sampleRate: sampleRate)
        self.init(main: cookbook.isFiniteAndStable ? cookbook : .identity)
    }

    /// Each section moved the fraction `t` of the way to `other`'s.
    func interpolated(to other: BandCoefficients, _ t: Double) -> BandCoefficients {
        BandCoefficients(
            main: main.interpolated(to: other.main, t), correction: correction.interpolated(to: other.correction, t))
    }

    /// The magnitude response at `frequency` (linear).
    public func magnitude(atFrequency frequency: Double, sampleRate: Double) -> Double {
        main.magnitude(atFrequency: frequency, sampleRate: sampleRate)
            * correction.magnitude(atFrequency: frequency, sampleRate: sampleRate)
    }
}
