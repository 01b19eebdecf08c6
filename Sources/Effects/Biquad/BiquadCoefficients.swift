#if canImport(Glibc)
    import Glibc
#endif

/// Normalized second-order coefficients: H(z) = (b0 + b1 z⁻¹ + b2 z⁻²) / (1 + a1 z⁻¹ + a2 z⁻²).
public struct BiquadCoefficients: Hashable, Sendable {
    /// The coefficients of H(z) above, normalized so that a0 = 1: `b0`, `b1` and `b2` weight the input
    /// sample and the two before it, `a1` and `a2` the two previous outputs, which are subtracted
    /// (y₀ = b0·x₀ + b1·x₁ + b2·x₂ − a1·y₁ − a2·y₂).
    public var b0, b1, b2, a1, a2: Double

    /// Coefficients given directly, already normalized (a0 = 1); neither clamped nor checked for stability.
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

    /// The filter times `gain` (the numerator scaled).
    func scaled(by gain: Double) -> BiquadCoefficients {
        BiquadCoefficients(b0: b0 * gain, b1: b1 * gain, b2: b2 * gain, a1: a1, a2: a2)
    }

    /// The reciprocal filter 1/H (nil unless it is finite and stable: H's zeros inside the unit circle).
    var inverse: BiquadCoefficients? {
        guard b0 != 0 else { return nil }
        let inverse = BiquadCoefficients(b0: 1 / b0, b1: a1 / b0, b2: a2 / b0, a1: b1 / b0, a2: b2 / b0)
        return inverse.isFiniteAndStable ? inverse : nil
    }

    /// All coefficients finite and both poles inside the unit circle, with a margin (the stability
    /// triangle |a2| < 1, |a1| < 1 + a2, each by 1e-12: legitimate designs down to 1 Hz at 192 kHz keep
    /// 1 + a1 + a2 ≈ ω0² > 1e-9).
    var isFiniteAndStable: Bool {
        b0.isFinite && b1.isFinite && b2.isFinite && a1.isFinite && a2.isFinite && abs(a2) < 1 - 1e-12
            && abs(a1) < 1 + a2 - 1e-12
    }
}
