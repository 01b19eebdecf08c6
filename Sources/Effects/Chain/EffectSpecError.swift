/// Why an effect description was refused: one line that names the effect, the parameter and what
/// it accepts.
public struct EffectSpecError: Error, Equatable, Sendable, CustomStringConvertible {
    public let description: String
    /// An error whose message is `description`.
    public init(_ description: String) { self.description = description }
}
