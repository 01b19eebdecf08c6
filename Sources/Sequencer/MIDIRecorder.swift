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
    /// The file's fixed tempo in beats per minute (120 by default), also used to turn arrivals into ticks.
    public let beatsPerMinute: Double
    /// The file's division, in ticks per quarter note (1920 by default).
    public let ticksPerQuarterNote: Int

    private let events = Mutex<[(arrival: UInt64, message: MIDIMessage)]>([])

    /// A recorder whose time zero is `start` (`MIDITimestamp` nanoseconds, now by default). Neither
    /// `beatsPerMinute` nor `ticksPerQuarterNote` is checked: both must be positive.
    public init(start: UInt64 = MIDITimestamp.now(), beatsPerMinute: Double = 120, ticksPerQuarterNote: Int = 1920) {
        self.start = start
        self.beatsPerMinute = beatsPerMinute
        self.ticksPerQuarterNote = ticksPerQuarterNote
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
        return max(0, Int((seconds * beatsPerMinute / 60 * Double(ticksPerQuarterNote)).rounded()))
    }

    /// The recording as a format-0 file: tempo and 4/4 at tick 0, then the messages in arrival order.
    public func midiFile() -> MIDIFile {
        midiFile { Double(Int64(bitPattern: $0 &- start)) / 1e9 }
    }

    /// The recording as a format-0 file with each message at `seconds(arrival)` seconds from the
    /// start (e.g. where the audio has it: the sample time it was played at), in arrival order.
    public func midiFile(seconds: (UInt64) -> Double) -> MIDIFile {
        let recorded = events.withLock { $0 }.sorted { $0.arrival < $1.arrival }
        var track = MIDIFile.Track()
        track.events.append(.init(tick: 0, .meta(.text(.trackName, Array("Pianola live".utf8)))))
        track.events.append(
            .init(tick: 0, .meta(.tempo(microsecondsPerQuarterNote: Int((60_000_000 / beatsPerMinute).rounded())))))
        track.events.append(
            .init(
                tick: 0,
                .meta(.timeSignature(numerator: 4, denominatorPower: 2, clocksPerClick: 24, thirtySecondsPerQuarter: 8))
            ))
        let ticksPerSecond = beatsPerMinute / 60 * Double(ticksPerQuarterNote)
        var previous = 0
        for (arrival, message) in recorded {
            // Never backwards (a mapped time can be a frame earlier than the previous message's).
            let tick = max(previous, Int((seconds(arrival) * ticksPerSecond).rounded()))
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
