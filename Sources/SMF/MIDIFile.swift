import MIDICore

/// A Standard MIDI File: format, time division and tracks of timed events.
///
/// Events carry absolute times in ticks. The model keeps what a file says, not what a player
/// would make of it: a note-on with velocity 0 stays a note-on, text stays as the file's bytes,
/// and every track ends with an `endOfTrack` meta event (the reader adds one, with a diagnostic,
/// where a file left it out). Writing a file read from disk and reading it back gives an equal
/// value.
public struct MIDIFile: Hashable, Sendable {
    /// SMF format: 0 (one track), 1 (simultaneous tracks), 2 (independent sequences).
    public var format: Format
    public var division: Division
    public var tracks: [Track]

    public init(format: Format = .multiTrack, division: Division = .ticksPerQuarterNote(480), tracks: [Track] = []) {
        self.format = format
        self.division = division
        self.tracks = tracks
    }

    public enum Format: Int, Hashable, Sendable, Codable {
        case singleTrack = 0
        case multiTrack = 1
        case multiSequence = 2
    }

    /// The header's time division.
    public enum Division: Hashable, Sendable {
        /// Pulses per quarter note (PPQN).
        case ticksPerQuarterNote(Int)
        /// SMPTE time code: frames per second (24, 25, 29 for 30 drop-frame, 30) and ticks per frame.
        case smpte(framesPerSecond: Int, ticksPerFrame: Int)

        /// The header's 16-bit division word.
        public var rawValue: UInt16 {
            switch self {
            case .ticksPerQuarterNote(let ticks): return UInt16(ticks & 0x7FFF)
            case .smpte(let fps, let ticks): return UInt16(UInt8(bitPattern: Int8(-fps))) << 8 | UInt16(ticks & 0xFF)
            }
        }
    }

    public struct Track: Hashable, Sendable {
        public var events: [Event]
        public init(events: [Event] = []) { self.events = events }

        /// The track name (first Sequence/Track Name meta event at tick 0), if any.
        public var name: String? {
            for event in events {
                guard event.tick == 0 else { break }
                if case .meta(.text(.trackName, let bytes)) = event.payload { return MetaEvent.decodeText(bytes) }
            }
            return nil
        }

        /// The tick of the last event (the End of Track event's tick for a well-formed track).
        public var length: Int { events.last?.tick ?? 0 }
    }

    /// One event at an absolute time.
    public struct Event: Hashable, Sendable {
        public var tick: Int
        public var payload: Payload
        public init(tick: Int, _ payload: Payload) {
            self.tick = tick
            self.payload = payload
        }
    }

    public enum Payload: Hashable, Sendable {
        /// A channel voice or mode message.
        case channel(MIDIMessage)
        case meta(MetaEvent)
        /// An `F0` SysEx packet: the bytes after its length, usually ending in `F7`.
        case sysEx([UInt8])
        /// An `F7` packet: a continuation of a split SysEx, or an escape carrying any bytes.
        case escape([UInt8])
    }

    public enum TextKind: UInt8, Hashable, Sendable, CaseIterable {
        case text = 1, copyright, trackName, instrumentName, lyric, marker, cuePoint, programName, deviceName
    }

    /// A meta event. The cases whose payload would not fit in eight bytes are `indirect`, which
    /// keeps `Event` at 16 bytes: parsed files take half the memory (and page faults) otherwise.
    public enum MetaEvent: Hashable, Sendable {
        case sequenceNumber(UInt16?)
        indirect case text(TextKind, [UInt8])
        case channelPrefix(UInt8)
        case port(UInt8)
        case endOfTrack
        indirect case tempo(microsecondsPerQuarterNote: Int)
        case smpteOffset(hours: UInt8, minutes: UInt8, seconds: UInt8, frames: UInt8, subframes: UInt8)
        /// Time signature: numerator, denominator as a power of two, MIDI clocks per metronome
        /// click, notated 32nd notes per MIDI quarter note.
        case timeSignature(
            numerator: UInt8, denominatorPower: UInt8, clocksPerClick: UInt8, thirtySecondsPerQuarter: UInt8)
        /// Key signature: sharps (positive) or flats (negative), and minor mode.
        case keySignature(sharps: Int8, minor: Bool)
        case sequencerSpecific([UInt8])
        /// A meta event of a type this model does not name, kept as it was.
        indirect case unknown(type: UInt8, data: [UInt8])

        /// The meta type byte (after `FF`).
        public var type: UInt8 {
            switch self {
            case .sequenceNumber: return 0x00
            case .text(let kind, _): return kind.rawValue
            case .channelPrefix: return 0x20
            case .port: return 0x21
            case .endOfTrack: return 0x2F
            case .tempo: return 0x51
            case .smpteOffset: return 0x54
            case .timeSignature: return 0x58
            case .keySignature: return 0x59
            case .sequencerSpecific: return 0x7F
            case .unknown(let type, _): return type
            }
        }

        /// Text in UTF-8 when it is valid UTF-8, else read as Latin-1 (common in older files).
        public static func decodeText(_ bytes: [UInt8]) -> String {
            if let text = String(validating: bytes, as: UTF8.self) { return text }
            return String(String.UnicodeScalarView(bytes.map { Unicode.Scalar($0) }))
        }
    }
}
