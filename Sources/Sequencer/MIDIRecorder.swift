import MIDICore
import SMF
import Synchronization

/// Records live MIDI as it arrives and turns it into a Standard MIDI File.
///
/// Channel messages and SysEx are kept with their arrival times (`MIDITimestamp`); clock, active
/// sensing and other real-time bytes are not. The file is format 0 at a fixed tempo (120 BPM by
/// default) with 1920 ticks per quarter note, so a tick is about a quarter of a millisecond and
/// recorded times are within 0.13 ms of the arrivals. Time zero is `start`, so silence
/// before the first note is kept. Recording may happen on any thread.
public final class MIDIRecorder: Sendable {
    /// Time zero of the recording (`MIDITimestamp`, nanoseconds).
    public let start: UInt64
    /// The file's fixed tempo in beats per minute (120 by default), also used to turn arrivals into ticks:
    /// the one given to `init`, within what a Set Tempo event holds.
    public let beatsPerMinute: Double
    /// The file's division, in ticks per quarter note (1920 by default): the one given to `init`, within
    /// what a file's header holds.
    public let ticksPerQuarterNote: Int

    private let events = Mutex<[(arrival: UInt64, message: MIDIMessage)]>([])

    /// The longest quarter note a Set Tempo event holds, in microseconds (its 24 bits).
    private static let longestQuarterNote = 0xFF_FFFF

    /// A recorder whose time zero is `start` (`MIDITimestamp` nanoseconds, now by default), writing a
    /// file at `beatsPerMinute` with `ticksPerQuarterNote`.
    ///
    /// Both are clamped to what a file holds, so that any value makes a valid file: `beatsPerMinute` to
    /// 3.58…60 000 000 (a Set Tempo event's 1…16 777 215 µs per quarter note; 0 and below become
    /// 3.58, NaN becomes 120), `ticksPerQuarterNote` to 1…32 767 (the header's 15 bits). The
    /// properties hold the values used.
    public init(start: UInt64 = MIDITimestamp.now(), beatsPerMinute: Double = 120, ticksPerQuarterNote: Int = 1920) {
        self.start = start
        let slowest = 60_000_000 / Double(Self.longestQuarterNote)
        self.beatsPerMinute = beatsPerMinute.isNaN ? 120 : min(max(beatsPerMinute, slowest), 60_000_000)
        self.ticksPerQuarterNote = min(max(ticksPerQuarterNote, 1), 0x7FFF)
    }

    /// Adds a message that arrived at `arrival`.
    public func record(_ message: MIDIMessage, at arrival: UInt64) {
        switch message {
        case .noteOff, .noteOn, .polyphonicKeyPressure, .controlChange, .programChange, .channelPressure, .pitchBend,
            .systemExclusive:
            events.withLock { $0.append((arrival, message)) }
        default:
            break
        }
    }

    /// Messages recorded so far.
    public var count: Int { events.withLock { $0.count } }

    /// The tick of an arrival time.
    public func tick(at arrival: UInt64) -> Int {
        let seconds = Double(Int64(bitPattern: arrival &- start)) / 1e9
        return Self.wholeTick(seconds * beatsPerMinute / 60 * Double(ticksPerQuarterNote))
    }

    /// `ticks` rounded, 0 for negative ticks (and NaN), at most 2^62 (a time no song reaches).
    private static func wholeTick(_ ticks: Double) -> Int {
        guard ticks > 0 else { return 0 }
        return Int(min(ticks.rounded(), Double(1 << 62)))
    }

    /// The recording as a format-0 file: tempo and 4/4 at tick 0, then the messages in arrival order.
    public func midiFile() -> MIDIFile {
        midiFile { Double(Int64(bitPattern: $0 &- start)) / 1e9 }
    }

    /// The recording as a format-0 file with each message at `seconds(arrival)` seconds from the
    /// start (e.g. where the audio has it: the sample time it was played at), in arrival order. Times
    /// never go backwards: one before the previous message's (or NaN) counts as that message's.
    public func midiFile(seconds: (UInt64) -> Double) -> MIDIFile {
        let recorded = events.withLock { $0 }.sorted { $0.arrival < $1.arrival }
        let microsecondsPerQuarterNote = min(
            max(Int((60_000_000 / beatsPerMinute).rounded()), 1), Self.longestQuarterNote)
        var track = MIDIFile.Track()
        track.events.append(.init(tick: 0, .meta(.text(.trackName, Array("Pianola live".utf8)))))
        track.events.append(
            .init(tick: 0, .meta(.tempo(microsecondsPerQuarterNote: microsecondsPerQuarterNote))))
        track.events.append(
            .init(
                tick: 0,
                .meta(.timeSignature(numerator: 4, denominatorPower: 2, clocksPerClick: 24, thirtySecondsPerQuarter: 8))
            ))
        let ticksPerSecond = beatsPerMinute / 60 * Double(ticksPerQuarterNote)
        var previous = 0
        for (arrival, message) in recorded {
            // Never backwards (a mapped time can be a frame earlier than the previous message's).
            let tick = max(previous, Self.wholeTick(seconds(arrival) * ticksPerSecond))
            previous = tick
            if case .systemExclusive(let payload) = message {
                track.events.append(.init(tick: tick, .sysEx(payload + [0xF7])))
            } else {
                track.events.append(.init(tick: tick, .channel(message)))
            }
        }
        track.events.append(.init(tick: track.events.last?.tick ?? 0, .meta(.endOfTrack)))
        return MIDIFile(format: .singleTrack, division: .ticksPerQuarterNote(ticksPerQuarterNote), tracks: [track])
    }

    /// Writes the recording to `path` (through a temporary name and a rename).
    public func write(to path: String) throws(MIDIFileError) {
        try midiFile().write(to: path)
    }

    /// Writes the recording to `path` with each message at `seconds(arrival)` (see `midiFile(seconds:)`).
    public func write(to path: String, seconds: (UInt64) -> Double) throws(MIDIFileError) {
        try midiFile(seconds: seconds).write(to: path)
    }
}
