/// One parameter of an effect, as its parameter table lists it: what `pianola fx list` prints
/// and what `--fx NAME:key=value` checks values against.
public struct EffectParameter: Hashable, Sendable {
    /// The unit of a parameter's values. The raw value is the label `pianola fx list` and range errors print
    /// after a number (empty for `.number`).
    public enum Unit: String, Hashable, Sendable {
        /// Frequency in hertz (`Hz`).
        case hertz = "Hz"
        /// Level or gain in decibels (`dB`).
        case decibels = "dB"
        /// Bandwidth in octaves.
        case octaves = "octaves"
        /// Time in milliseconds (`ms`).
        case milliseconds = "ms"
        /// A proportion in percent (`%`).
        case percent = "%"
        /// Time in seconds (`s`).
        case seconds = "s"
        /// On or off, stored as 1 or 0; specs accept on/off, true/false, yes/no or 1/0.
        case boolean = "on/off"
        /// One of `choices`, given by name (case-insensitively) and stored as its index.
        case choice = "name"
        /// A plain number without a unit (a Q, a band number).
        case number = ""
    }

    /// The key (`freq`, `gain`, …).
    public let identifier: String
    /// A short description.
    public let name: String
    /// The values accepted, in `unit`: `EffectSpec.make(name:_:)` refuses a number outside it. For a `.choice`
    /// parameter it is 0 … `choices.count - 1` (the name is checked instead), for a `.boolean` one 0 … 1.
    public let range: ClosedRange<Double>
    /// The value the effect takes when a spec leaves the parameter out, as `pianola fx list` prints it (for a
    /// choice, an index into `choices`; for a boolean, 0 or 1).
    public let defaultValue: Double
    /// The unit of `range` and `defaultValue`; `.boolean` parameters are parsed as on/off rather than numbers.
    public let unit: Unit
    /// For `.choice` parameters: the names, in the order of their values (0, 1, …).
    public let choices: [String]

    /// A parameter keyed `identifier` and described by `name`, taking values in `range` (in `unit`), with a
    /// default and, for a `.choice` parameter, the names of its values in order.
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
