#if canImport(Glibc)
    import Glibc
#endif

// Designs by impulse invariance (z = e^{sT}): the analog prototype's poles (and zeros) mapped onto the
// z-plane, so that a resonance keeps its frequency, height and width up to Nyquist.

extension BiquadCoefficients {
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

    /// The analog prototype's poles and zeros mapped by impulse invariance (z = e^{sT}), b0 = 1: the
    /// first section of the matched design (before its gain is set). High-pass keeps a double zero at
    /// DC, band-pass one, the notch its zeros on the unit circle at the frequency; low-pass has none. A pole or zero pair
    /// whose frequency lies at or above Nyquist (a shelf's, far enough up) is left out: the correction
    /// takes its smooth skirt below Nyquist.
    static func structure(
        _ type: FilterType, _ f0: Double, _ gain: Double, _ bw: Double, _ rate: Double
    ) -> BiquadCoefficients {
        let q = type.prototypeQ(bandwidth: bw)
        let w0 = 2 * Double.pi * f0 / rate
        let zeta = 1 / (2 * q)
        func pair(_ w: Double, _ zeta: Double) -> (Double, Double) {
            guard w * max(0, 1 - zeta * zeta).squareRoot() < Double.pi else { return (0, 0) }
            return impulseInvariant(w, zeta: zeta)
        }
        let poles: (Double, Double)
        let zeros: (Double, Double)
        switch type {
        case .lowPass, .resonantLowPass: (poles, zeros) = (pair(w0, zeta), (0, 0))
        case .highPass, .resonantHighPass: (poles, zeros) = (pair(w0, zeta), (-2, 1))
        case .bandPass: (poles, zeros) = (pair(w0, zeta), (-1, 0))
        case .bandStop: (poles, zeros) = (pair(w0, zeta), (-2 * cos(w0), 1))
        case .parametric:
            // (s² + s·A/Q + 1)/(s² + s/(A·Q) + 1).
            let amplitude = pow(10, gain / 40)
            (poles, zeros) = (pair(w0, zeta / amplitude), pair(w0, zeta * amplitude))
        case .lowShelf, .resonantLowShelf, .highShelf, .resonantHighShelf:
            // Low shelf A·(s² + (√A/Q)s + A)/(A s² + (√A/Q)s + 1): poles at f0/√A, zeros at f0·√A, both
            // damped by 1/(2Q); the high shelf the other way round.
            let root = pow(10, gain / 80)
            let isLow = type == .lowShelf || type == .resonantLowShelf
            (poles, zeros) = (pair(isLow ? w0 / root : w0 * root, zeta), pair(isLow ? w0 * root : w0 / root, zeta))
        }
        return BiquadCoefficients(b0: 1, b1: zeros.0, b2: zeros.1, a1: poles.0, a2: poles.1)
    }
}
