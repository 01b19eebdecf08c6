/// Where a modulator takes its input: a MIDI controller or one of the note's and channel's
/// values, with a direction, a polarity and a curve (SoundFont 2.04, 8.2.1).
public struct ModulatorSource: Sendable, Hashable {
    /// The file's 16-bit source operator.
    public var rawValue: UInt16

    /// A source from the file's 16-bit operator.
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    /// The shape that maps the source's normalized value.
    public enum Curve: Sendable, Hashable {
        /// The value as it is.
        case linear
        /// The spec's concave curve: slow at first, then steep (a level in decibels).
        case concave
        /// The mirror of the concave curve.
        case convex
        /// 0 below the middle, 1 from it on.
        case `switch`
        /// A curve number the specification does not define.
        case unknown(Int)
    }

    /// The value a source reads when it is not a MIDI controller (SoundFont 2.04, 8.2.1).
    public enum General: UInt16, Sendable, Hashable {
        /// No source: the modulator reads 0 (as a first source) or 1 (as an amount source).
        case none = 0
        /// The note's velocity.
        case noteOnVelocity = 2
        /// The note's key number.
        case noteOnKey = 3
        /// The note's polyphonic pressure.
        case polyPressure = 10
        /// The channel's pressure.
        case channelPressure = 13
        /// The pitch wheel.
        case pitchWheel = 14
        /// The pitch wheel's range (RPN 0).
        case pitchWheelSensitivity = 16
        /// Another modulator's output (a linked modulator, SoundFont 2.04).
        case link = 127
    }

    /// The controller number or general source index (the low seven bits).
    public var index: Int { Int(rawValue & 0x7F) }
    /// Whether ``index`` is a MIDI continuous controller number rather than a general source.
    public var isController: Bool { rawValue & 0x80 != 0 }
    /// Whether the value runs from maximum to minimum.
    public var isNegative: Bool { rawValue & 0x100 != 0 }
    /// Whether the value maps to −1…1 rather than 0…1.
    public var isBipolar: Bool { rawValue & 0x200 != 0 }
    /// The mapping curve.
    public var curve: Curve {
        switch rawValue >> 10 {
        case 0: .linear
        case 1: .concave
        case 2: .convex
        case 3: .switch
        case let other: .unknown(Int(other))
        }
    }
    /// The general source, when the source is not a MIDI controller and names one the
    /// specification defines.
    public var general: General? { isController ? nil : General(rawValue: UInt16(index)) }

    /// Whether this source is "no controller".
    public var isNone: Bool { !isController && index == 0 }

    /// Whether FluidSynth accepts this source: a general source the specification defines (a
    /// link excepted), or a controller other than bank select (0, 32), data entry (6, 38), the
    /// (N)RPN selectors (98–101) and channel mode messages (120–127); and a defined curve.
    /// `allowingNone` accepts "no controller" (an amount source may be none).
    public func isValid(allowingNone: Bool) -> Bool {
        if case .unknown = curve { return false }
        if isController {
            return ![0, 6, 32, 38, 98, 99, 100, 101].contains(index) && index < 120
        }
        guard let general, general != .link else { return false }
        return general != .none || allowingNone
    }
}

/// A modulator: a source, scaled by an amount and by a second source, added to a generator
/// (SoundFont 2.04, 8.2).
public struct Modulator: Sendable, Hashable {
    /// The primary source.
    public var source: ModulatorSource
    /// The generator the output is added to.
    public var destination: Generator
    /// The output's full scale, in the destination generator's units.
    public var amount: Int16
    /// The source that scales the amount (1 when it is "no controller").
    public var amountSource: ModulatorSource
    /// The transform applied to the output: 0 linear, 2 absolute value.
    public var transform: UInt16

    /// A modulator from its five fields.
    public init(
        source: ModulatorSource, destination: Generator, amount: Int16, amountSource: ModulatorSource,
        transform: UInt16 = 0
    ) {
        self.source = source
        self.destination = destination
        self.amount = amount
        self.amountSource = amountSource
        self.transform = transform
    }

    /// Whether the two modulators are "identical" in the specification's sense (9.5.1): the
    /// same sources and destination, whatever their amounts.
    public func isIdentical(to other: Modulator) -> Bool {
        source == other.source && amountSource == other.amountSource && destination == other.destination
    }
}
