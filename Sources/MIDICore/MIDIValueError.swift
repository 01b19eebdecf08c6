/// A number in a MIDI message that MIDI 1.0 cannot carry: a channel above 15, a data value above
/// 127, a 14-bit value above 16383, a SysEx payload byte of 0x80 or more.
///
/// ``MIDIMessage/validated()`` throws it, and so does everything in Pianola that sends, plays or
/// writes a message (``MIDIMessage/bytes``, the sampler's note API, writing a MIDI file): an
/// out-of-range number is reported, never masked, clamped or dropped (see ``MIDIMessage``).
public struct MIDIValueError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The field as the message's case names it (`channel`, `note`, `velocity`, `pressure`,
    /// `controller`, `value`, `program`), or `SysEx byte`, `quarter frame`, `song position` or `song`
    /// for the system messages' numbers.
    public var field: String
    /// The number given.
    public var value: Int
    /// The numbers the field can carry.
    public var range: ClosedRange<Int>

    /// An error for `field` holding `value`, outside `range`.
    public init(field: String, value: Int, range: ClosedRange<Int>) {
        self.field = field
        self.value = value
        self.range = range
    }

    /// "note 250 is out of range (0-127)".
    public var description: String {
        "\(field) \(value) is out of range (\(range.lowerBound)-\(range.upperBound))"
    }
}
