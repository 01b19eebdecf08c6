/// Why an effect description was refused: one line that names the effect, the parameter and what
/// it accepts.
public struct EffectSpecError: Error, Equatable, Sendable, CustomStringConvertible {
    public let description: String
    /// An error whose message is `description`.
    public init(_ description: String) { self.description = description }

    /// How an unknown effect's description ends: where the effects are listed, for a caller to
    /// put in its own words (the `pianola` command names `pianola fx list`).
    public static let catalogHint = "see EffectSpec.catalog"
}
