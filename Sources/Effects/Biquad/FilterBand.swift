#if canImport(Glibc)
    import Glibc
#endif

/// The settings of one band.
public struct FilterBand: Hashable, Sendable {
    /// The filter shape. It decides which of `gain` and `bandwidth` shape the response (`FilterType.usesGain`,
    /// `FilterType.usesBandwidth`); the other is ignored.
    public var type: FilterType
    /// Hz.
    public var frequency: Double
    /// dB (for parametric and shelves).
    public var gain: Double
    /// Octaves (for parametric, band-pass, band-stop and the resonant types).
    public var bandwidth: Double

    /// A band of `type` at `frequency` Hz, with `gain` dB (default 0) and `bandwidth` octaves (default 1). The
    /// values are stored as given: the coefficient designs keep the frequency between 1 Hz and just below
    /// Nyquist and the bandwidth at 0.001 octave or more.
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
