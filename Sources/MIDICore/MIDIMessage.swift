/// One MIDI 1.0 message: channel voice (and channel mode, as control changes 120-127), system
/// exclusive, system common or system real-time.
///
/// Channels are 0-15 (the MIDI "channel 10" of drums is `9`), data values 0-127 and pitch bend
/// 0-16383 with 8192 at the centre. The type holds a message, not a time: files, players and
/// inputs pair it with their own timestamps.
///
/// ## Numbers out of range
///
/// The cases hold `UInt8` and `UInt16` fields, which can hold more than MIDI 1.0 carries:
/// `.noteOn(channel: 20, note: 250, velocity: 200)` builds. Pianola's rule is that such a number
/// is reported where it is found, as a ``MIDIValueError`` naming the field, the value and its
/// range; it is never masked to its low bits, clamped or dropped without a word:
///
/// - Build a message from numbers your code did not write with ``validated()``:
///   `try MIDIMessage.noteOn(channel: c, note: n, velocity: v).validated()`. The byte
///   initializers (``init(status:data1:data2:)``, ``init(channelStatus:_:_:)``) return nil for a
///   data byte of 0x80 or more.
/// - Turning a message into bytes checks it: ``bytes``, ``encode(into:)`` and
///   ``MIDIStreamEncoder/encode(_:into:)`` throw, ``encodedDataBytes(into:_:)`` returns nil, and
///   ``MIDIEventQueue/push(_:arrival:source:)`` refuses the message (returns false).
/// - Sending one to a sampler throws (`SamplerNode.startNote(_:withVelocity:onChannel:)`,
///   `sendController(_:withValue:onChannel:)`, `sendMIDI(_:)` and the rest of its note API).
/// - Sending one to a MIDI output refuses it: `RTPMIDIListener.send(_:)` throws, and
///   `ALSASequencerOutput.send(_:at:to:)` sends nothing and counts it in `failedSendCount`.
/// - Writing a MIDI file holding one throws (`MIDIFile.serialized(runningStatus:)` and
///   `write(to:runningStatus:)` throw `MIDIFileError.valueOutOfRange`, naming the track and event).
public enum MIDIMessage: Hashable, Sendable {
    /// A note-off: the `note` (0-127, 60 is middle C) and its release `velocity` (0-127).
    case noteOff(channel: UInt8, note: UInt8, velocity: UInt8)
    /// A note-on; velocity 0 is a note-off by convention and is kept as written.
    case noteOn(channel: UInt8, note: UInt8, velocity: UInt8)
    /// Polyphonic key pressure (aftertouch) on one held `note`: `pressure` 0-127.
    case polyphonicKeyPressure(channel: UInt8, note: UInt8, pressure: UInt8)
    /// A control change: `controller` 0-127 set to `value` 0-127. Controllers 120-127 are the channel
    /// mode messages (All Sound Off, Reset All Controllers, All Notes Off and the mode changes).
    case controlChange(channel: UInt8, controller: UInt8, value: UInt8)
    /// A program change: `program` 0-127 (General MIDI lists count them from 1).
    case programChange(channel: UInt8, program: UInt8)
    /// Channel pressure (aftertouch) for every note on the channel: `pressure` 0-127.
    case channelPressure(channel: UInt8, pressure: UInt8)
    /// A pitch bend: `value` 0-16383, `pitchBendCentre` (8192) for no bend; how far the extremes bend is
    /// the receiver's setting (the pitch-bend sensitivity RPN), not part of the message.
    case pitchBend(channel: UInt8, value: UInt16)
    /// A complete system-exclusive message: the bytes between `F0` and `F7`, both excluded.
    case systemExclusive([UInt8])
    /// MIDI Time Code quarter frame (`F1`): the data byte, a 3-bit piece number and a 4-bit value.
    case timeCodeQuarterFrame(UInt8)
    /// Song Position Pointer (`F2`): the position from the start of the song in MIDI beats (sixteenth
    /// notes, six timing clocks each), 0-16383.
    case songPositionPointer(UInt16)
    /// Song Select (`F3`): the number of the song or sequence to play, 0-127.
    case songSelect(UInt8)
    /// Tune Request (`F6`): asks analogue synthesizers to tune their oscillators.
    case tuneRequest
    /// Timing Clock (`F8`): sent 24 times per quarter note by a clock source.
    case timingClock
    /// Start (`FA`): play from the beginning of the song.
    case start
    /// Continue (`FB`): play on from where playback stopped (or from the last Song Position Pointer).
    case `continue`
    /// Stop (`FC`): stop playing, keeping the song position.
    case stop
    /// Active Sensing (`FE`): a keep-alive; a receiver that has seen one turns its notes off when the
    /// stream then goes silent for about 300 ms.
    case activeSensing
    /// System Reset (`FF`): asks receivers to return to their power-up state. (In a MIDI file, `FF`
    /// starts a meta event instead.)
    case systemReset

    /// The pitch-bend value of a centred wheel.
    public static let pitchBendCentre: UInt16 = 8192

    /// The channel of a channel message, nil for system messages.
    public var channel: UInt8? {
        switch self {
        case .noteOff(let channel, _, _), .noteOn(let channel, _, _), .polyphonicKeyPressure(let channel, _, _),
            .controlChange(let channel, _, _), .programChange(let channel, _), .channelPressure(let channel, _),
            .pitchBend(let channel, _):
            return channel
        default:
            return nil
        }
    }

    /// The status byte that starts this message on the wire. For a channel above 15 it holds the
    /// channel's low four bits only: such a message has no status byte of its own, and
    /// ``validated()`` and the encoders refuse it.
    public var statusByte: UInt8 {
        switch self {
        case .noteOff(let channel, _, _): return 0x80 | channel & 0x0F
        case .noteOn(let channel, _, _): return 0x90 | channel & 0x0F
        case .polyphonicKeyPressure(let channel, _, _): return 0xA0 | channel & 0x0F
        case .controlChange(let channel, _, _): return 0xB0 | channel & 0x0F
        case .programChange(let channel, _): return 0xC0 | channel & 0x0F
        case .channelPressure(let channel, _): return 0xD0 | channel & 0x0F
        case .pitchBend(let channel, _): return 0xE0 | channel & 0x0F
        case .systemExclusive: return 0xF0
        case .timeCodeQuarterFrame: return 0xF1
        case .songPositionPointer: return 0xF2
        case .songSelect: return 0xF3
        case .tuneRequest: return 0xF6
        case .timingClock: return 0xF8
        case .start: return 0xFA
        case .continue: return 0xFB
        case .stop: return 0xFC
        case .activeSensing: return 0xFE
        case .systemReset: return 0xFF
        }
    }

    /// True for note-on with a non-zero velocity.
    public var isNoteStart: Bool {
        if case .noteOn(_, _, let velocity) = self { return velocity > 0 }
        return false
    }

    /// True for note-off, and for note-on with velocity 0.
    public var isNoteEnd: Bool {
        switch self {
        case .noteOff: return true
        case .noteOn(_, _, let velocity): return velocity == 0
        default: return false
        }
    }

    /// Builds a channel voice message from a status byte (0x80-0xEF) and its data bytes. Returns nil
    /// for a status byte that is not a channel status, and for a data byte of 0x80 or more (on the
    /// wire that is a status byte, not data; it is not masked into another value).
    @inlinable
    public init?(channelStatus status: UInt8, _ data1: UInt8, _ data2: UInt8 = 0) {
        guard data1 < 0x80, data2 < 0x80 else { return nil }
        let channel = status & 0x0F
        let (a, b) = (data1, data2)
        switch status & 0xF0 {
        case 0x80: self = .noteOff(channel: channel, note: a, velocity: b)
        case 0x90: self = .noteOn(channel: channel, note: a, velocity: b)
        case 0xA0: self = .polyphonicKeyPressure(channel: channel, note: a, pressure: b)
        case 0xB0: self = .controlChange(channel: channel, controller: a, value: b)
        case 0xC0: self = .programChange(channel: channel, program: a)
        case 0xD0: self = .channelPressure(channel: channel, pressure: a)
        case 0xE0: self = .pitchBend(channel: channel, value: UInt16(a) | UInt16(b) << 7)
        default: return nil
        }
    }

    /// A message from its status byte and data bytes, without allocating: channel messages,
    /// system common and real-time messages; nil for SysEx (F0, F7), undefined status bytes and a
    /// data byte of 0x80 or more.
    @inlinable
    public init?(status: UInt8, data1: UInt8 = 0, data2: UInt8 = 0) {
        guard data1 < 0x80, data2 < 0x80 else { return nil }
        if let message = MIDIMessage(channelStatus: status, data1, data2) {
            self = message
            return
        }
        let (a, b) = (data1, data2)
        switch status {
        case 0xF1: self = .timeCodeQuarterFrame(a)
        case 0xF2: self = .songPositionPointer(UInt16(a) | UInt16(b) << 7)
        case 0xF3: self = .songSelect(a)
        case 0xF6: self = .tuneRequest
        case 0xF8: self = .timingClock
        case 0xFA: self = .start
        case 0xFB: self = .continue
        case 0xFC: self = .stop
        case 0xFE: self = .activeSensing
        case 0xFF: self = .systemReset
        default: return nil
        }
    }

    /// Writes the message's data bytes (none, one or two) without allocating; returns how many, or
    /// nil (writing nothing) when a number is out of range (see ``validated()``). SysEx writes none
    /// (its payload is the associated array).
    @inlinable
    public func encodedDataBytes(into first: inout UInt8, _ second: inout UInt8) -> Int? {
        guard firstValueOutOfRange == nil else { return nil }
        switch self {
        case .noteOff(_, let a, let b), .noteOn(_, let a, let b), .polyphonicKeyPressure(_, let a, let b),
            .controlChange(_, let a, let b):
            (first, second) = (a, b)
            return 2
        case .programChange(_, let a), .channelPressure(_, let a), .timeCodeQuarterFrame(let a), .songSelect(let a):
            first = a
            return 1
        case .pitchBend(_, let value), .songPositionPointer(let value):
            (first, second) = (UInt8(value & 0x7F), UInt8(value >> 7))
            return 2
        case .systemExclusive, .tuneRequest, .timingClock, .start, .continue, .stop, .activeSensing, .systemReset:
            return 0
        }
    }

    /// The number of data bytes that follow a status byte, or nil for a status with no defined
    /// length (SysEx, and the undefined F4, F5, F9 and FD).
    @inlinable
    public static func dataLength(ofStatus status: UInt8) -> Int? {
        switch status {
        case 0x80...0xBF, 0xE0...0xEF: return 2
        case 0xC0...0xDF: return 1
        case 0xF1, 0xF3: return 1
        case 0xF2: return 2
        case 0xF6, 0xF8, 0xFA, 0xFB, 0xFC, 0xFE, 0xFF: return 0
        default: return nil
        }
    }

    /// The message itself when every number is one MIDI 1.0 carries; otherwise throws
    /// ``MIDIValueError`` naming the first field out of range (channel, then the data in order).
    ///
    /// The cases cannot check what they are given; this is the check, for a message built from
    /// numbers your code did not write:
    ///
    /// ```swift
    /// let message = try MIDIMessage.noteOn(channel: channel, note: note, velocity: velocity).validated()
    /// ```
    public func validated() throws(MIDIValueError) -> MIDIMessage {
        if let error = firstValueOutOfRange { throw error }
        return self
    }

    /// The first number out of range, nil when there is none. Builds no array, so the producer
    /// side of a queue may ask.
    @usableFromInline
    var firstValueOutOfRange: MIDIValueError? {
        func check(_ field: String, _ value: Int, _ maximum: Int) -> MIDIValueError? {
            value > maximum ? MIDIValueError(field: field, value: value, range: 0...maximum) : nil
        }
        switch self {
        case .noteOff(let channel, let note, let velocity), .noteOn(let channel, let note, let velocity):
            return check("channel", Int(channel), 15) ?? check("note", Int(note), 127)
                ?? check("velocity", Int(velocity), 127)
        case .polyphonicKeyPressure(let channel, let note, let pressure):
            return check("channel", Int(channel), 15) ?? check("note", Int(note), 127)
                ?? check("pressure", Int(pressure), 127)
        case .controlChange(let channel, let controller, let value):
            return check("channel", Int(channel), 15) ?? check("controller", Int(controller), 127)
                ?? check("value", Int(value), 127)
        case .programChange(let channel, let program):
            return check("channel", Int(channel), 15) ?? check("program", Int(program), 127)
        case .channelPressure(let channel, let pressure):
            return check("channel", Int(channel), 15) ?? check("pressure", Int(pressure), 127)
        case .pitchBend(let channel, let value):
            return check("channel", Int(channel), 15) ?? check("value", Int(value), 16383)
        case .systemExclusive(let data):
            // Indices, not the bytes: iterating a range of `Int` allocates nothing even unspecialized.
            for index in data.indices where data[index] > 0x7F { return check("SysEx byte", Int(data[index]), 127) }
            return nil
        case .timeCodeQuarterFrame(let value): return check("quarter frame", Int(value), 127)
        case .songPositionPointer(let value): return check("song position", Int(value), 16383)
        case .songSelect(let value): return check("song", Int(value), 127)
        case .tuneRequest, .timingClock, .start, .continue, .stop, .activeSensing, .systemReset: return nil
        }
    }

    /// Appends the message's bytes to `bytes` (SysEx framed by `F0` … `F7`); throws
    /// ``MIDIValueError``, appending nothing, when a number is out of range.
    public func encode(into bytes: inout [UInt8]) throws(MIDIValueError) {
        if let error = firstValueOutOfRange { throw error }
        encode(into: &bytes, withStatus: true)
    }

    /// Appends the message's bytes, without its status byte when `withStatus` is false (running
    /// status; SysEx keeps its framing). Appends byte by byte: no temporary arrays. The caller has
    /// checked the numbers (`firstValueOutOfRange`).
    func encode(into bytes: inout [UInt8], withStatus: Bool) {
        let isSystemExclusive = if case .systemExclusive = self { true } else { false }
        if withStatus && !isSystemExclusive { bytes.append(statusByte) }
        switch self {
        case .noteOff(_, let a, let b), .noteOn(_, let a, let b), .polyphonicKeyPressure(_, let a, let b),
            .controlChange(_, let a, let b):
            bytes.append(a)
            bytes.append(b)
        case .programChange(_, let a), .channelPressure(_, let a), .timeCodeQuarterFrame(let a), .songSelect(let a):
            bytes.append(a)
        case .pitchBend(_, let value), .songPositionPointer(let value):
            bytes.append(UInt8(value & 0x7F))
            bytes.append(UInt8(value >> 7))
        case .systemExclusive(let data):
            bytes.append(0xF0)
            bytes.append(contentsOf: data)
            bytes.append(0xF7)
        case .tuneRequest, .timingClock, .start, .continue, .stop, .activeSensing, .systemReset:
            break
        }
    }

    /// The message's bytes; throws ``MIDIValueError`` when a number is out of range.
    public var bytes: [UInt8] {
        get throws(MIDIValueError) {
            var bytes: [UInt8] = []
            try encode(into: &bytes)
            return bytes
        }
    }
}
