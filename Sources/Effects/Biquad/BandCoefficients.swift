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
