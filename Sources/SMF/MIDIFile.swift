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
    /// The header's time division: ticks per quarter note (tempo-relative) or SMPTE frames per second
    /// and ticks per frame (absolute). It gives every event's `tick` its length.
    public var division: Division
    /// The `MTrk` chunks in file order: one in a format 0 file, tracks played together in format 1,
    /// independent sequences in format 2.
    public var tracks: [Track]

    /// Makes a file from its parts; by default an empty format 1 file at 480 ticks per quarter note.
    public init(format: Format = .multiTrack, division: Division = .ticksPerQuarterNote(480), tracks: [Track] = []) {
        self.format = format
        self.division = division
        self.tracks = tracks
    }

    /// How the tracks relate; the raw value is the header's format word (0, 1 or 2), which is also
    /// what the type encodes to.
    public enum Format: Int, Hashable, Sendable, Codable {
        /// Format 0: one track holding every channel's events.
        case singleTrack = 0
        /// Format 1: tracks that play together from tick 0 (tempo and meter usually in the first one). The
        /// reader also uses it for a format word it does not know.
        case multiTrack = 1
        /// Format 2: independent single-track sequences; `durationSeconds` plays them one after another.
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

        /// Whether ticks are SMPTE time (fixed fractions of a second, no tempo) rather than beats.
        public var isSMPTE: Bool {
            if case .smpte = self { return true }
            return false
        }
    }

    /// One track chunk: its events in the order the file gives them.
    public struct Track: Hashable, Sendable {
        /// The events in tick order, ending with `endOfTrack` in a track the reader returned. Nothing
        /// checks the order: the writer puts an event earlier than the one before it at that one's
        /// tick, and leaves out events after an `endOfTrack`.
        public var events: [Event]
        /// Makes a track of `events` (none by default), as given: nothing is sorted and no `endOfTrack`
        /// is added until the file is written.
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
        /// The absolute time in ticks from the start of the track (0 or more), in units of the file's
        /// `division`.
        public var tick: Int
        /// What happens at `tick`: a channel message, a meta event or SysEx bytes.
        public var payload: Payload
        /// Makes an event carrying `payload` at `tick`.
        public init(tick: Int, _ payload: Payload) {
            self.tick = tick
            self.payload = payload
        }
    }

    /// What an event carries, by the kind of its status byte in the track chunk.
    public enum Payload: Hashable, Sendable {
        /// A channel voice or mode message.
        case channel(MIDIMessage)
        /// A meta event (`FF`, type, length, data): tempo, time signature, text, End of Track and others.
        case meta(MetaEvent)
        /// An `F0` SysEx packet: the bytes after its length, usually ending in `F7`.
        case sysEx([UInt8])
        /// An `F7` packet: a continuation of a split SysEx, or an escape carrying any bytes.
        case escape([UInt8])
    }

    /// The kind of a text meta event (types 01-09); the raw value is the meta type byte.
    public enum TextKind: UInt8, Hashable, Sendable, CaseIterable {
        /// In type order, 01-09: `text` (any text; `.kar` files keep lyrics here after an `@T` header),
        /// `copyright` (a copyright notice), `trackName` (Sequence/Track Name), `instrumentName`, `lyric`
        /// (usually a syllable or word per event), `marker` (a section name or rehearsal mark), `cuePoint`
        /// (something happening on stage or screen), `programName` (the patch the track expects) and
        /// `deviceName` (the device or port the track is meant for).
        case text = 1, copyright, trackName, instrumentName, lyric, marker, cuePoint, programName, deviceName
    }

    /// A meta event. The cases whose payload would not fit in eight bytes are `indirect`, which
    /// keeps `Event` at 16 bytes: parsed files take half the memory (and page faults) otherwise.
    public enum MetaEvent: Hashable, Sendable {
        /// Sequence Number (type 00): the number of a format 2 sequence or of a pattern; nil when the
        /// event has no data bytes (the sequence's place in the file numbers it then).
        case sequenceNumber(UInt16?)
        /// A text event of the given kind, with its bytes as stored: no encoding is assumed
        /// (`decodeText` reads them as UTF-8 or Latin-1).
        indirect case text(TextKind, [UInt8])
        /// MIDI Channel Prefix (type 20): the channel (0-15) that the following meta and SysEx events
        /// concern. Kept and written back; playback ignores it.
        case channelPrefix(UInt8)
        /// MIDI Port (type 21): the number of the output port the track is meant for. Kept and written
        /// back; playback ignores it.
        case port(UInt8)
        /// End of Track (type 2F): the last event of every track; its tick is the track's length.
        case endOfTrack
        /// Set Tempo (type 51): microseconds per quarter note from this tick on (500 000 is 120 BPM), a
        /// 24-bit value in the file. `TempoMap` ignores it when it is 0 or the division is SMPTE.
        indirect case tempo(microsecondsPerQuarterNote: Int)
        /// SMPTE Offset (type 54): the SMPTE time at which the track starts, as stored: hours (the top
        /// bits carry the frame rate), minutes, seconds, frames and hundredths of a frame. Kept and
        /// written back; playback ignores it.
        case smpteOffset(hours: UInt8, minutes: UInt8, seconds: UInt8, frames: UInt8, subframes: UInt8)
        /// Time signature: numerator, denominator as a power of two, MIDI clocks per metronome
        /// click, notated 32nd notes per MIDI quarter note.
        case timeSignature(
            numerator: UInt8, denominatorPower: UInt8, clocksPerClick: UInt8, thirtySecondsPerQuarter: UInt8)
        /// Key signature: sharps (positive) or flats (negative), and minor mode.
        case keySignature(sharps: Int8, minor: Bool)
        /// Sequencer-Specific (type 7F): a manufacturer ID (one byte, or three starting with 00) and its
        /// data, kept as stored.
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
