/// What an effect is and what it takes: its entry in `pianola fx list`.
public struct EffectDescription: Sendable {
    /// The effect's name as specs give it (`eq`, `filter`, `reverb`, `limiter`).
    public let name: String
    /// A one-line description, printed after the name by `pianola fx list`.
    public let summary: String
    /// The parameters the effect takes, in the order `pianola fx list` prints them; `EffectSpec.make(name:_:)`
    /// refuses any other key.
    public let parameters: [EffectParameter]

    /// The Q range of `eq` and `filter`: the bands' bandwidth range, 0.05 … 5 octaves, as Q (rounded
    /// inward; a wider Q would be clamped silently).
    static let qRange: ClosedRange<Double> = 0.19...28.8
    /// `q` of `eq` and `filter`: the bandwidth as a quality factor. Its default is the Q of `bw`'s
    /// default (1 octave: Q ≈ 1.414), the band a spec without either gets.
    static let q = EffectParameter(
        "q", "quality factor (instead of bw)", range: qRange,
        default: FilterBand.q(forBandwidth: EQNode.bandParameters.first { $0.identifier == "bw" }!.defaultValue),
        unit: .number)
    /// `matched` of `eq` and `filter`: the design.
    static let matched = EffectParameter(
        "matched", "matched design (follows the analog prototype up to Nyquist) instead of the cookbook",
        range: 0...1, default: 0, unit: .boolean)
}
