/// One parameter of an effect, as its parameter table lists it: what `pianola fx list` prints
/// and what `--fx NAME:key=value` checks values against.
public struct EffectParameter: Hashable, Sendable {
    public enum Unit: String, Hashable, Sendable {
        case hertz = "Hz"
        case decibels = "dB"
        case octaves = "octaves"
        case milliseconds = "ms"
        case percent = "%"
        case seconds = "s"
        case boolean = "on/off"
        case choice = "name"
        case number = ""
    }

    /// The key (`freq`, `gain`, …).
    public let identifier: String
    /// A short description.
    public let name: String
    public let range: ClosedRange<Double>
    public let defaultValue: Double
    public let unit: Unit
    /// For `.choice` parameters: the names, in the order of their values (0, 1, …).
    public let choices: [String]

    public init(
        _ identifier: String, _ name: String, range: ClosedRange<Double>, default defaultValue: Double, unit: Unit,
        choices: [String] = []
    ) {
        self.identifier = identifier
        self.name = name
        self.range = range
        self.defaultValue = defaultValue
        self.unit = unit
        self.choices = choices
    }
}
