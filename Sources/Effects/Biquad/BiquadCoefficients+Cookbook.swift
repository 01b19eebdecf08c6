#if canImport(Glibc)
    import Glibc
#endif

extension BiquadCoefficients {
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
}
