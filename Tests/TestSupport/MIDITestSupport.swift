import AudioGraph
import MIDICore
import SMF

/// A MIDI destination that records what it receives, with absolute frame times, and outputs silence.
public final class RecordingNode: AudioNode, MIDIReceivingNode, @unchecked Sendable {
    public var received: [(frame: Int64, message: MIDIMessage)] = []
    private var quantumStart: Int64 = 0
    private var pending: [(Int, MIDIMessage)] = []
    public init() { super.init(name: "recorder") }
    public func receive(_ message: MIDIMessage, atFrameOffset frameOffset: Int) {
        pending.append((frameOffset, message))
    }
    override public func render(into output: AudioBuffer, inputs: RenderInputs, frameCount: Int, time: AudioTime) {
        for (offset, message) in pending { received.append((time.sampleTime + Int64(offset), message)) }
        pending.removeAll()
        output.clear(frames: frameCount)
    }
    public var notesOn: [(Int64, UInt8)] {
        received.compactMap {
            if case .noteOn(_, let key, let velocity) = $0.message, velocity > 0 {
                return ($0.frame, key)
            } else {
                return nil
            }
        }
    }
}

/// A format-1 file from (tick, message) lists per track, 480 PPQN, with tempo events in track 0.
public func makeFile(tempos: [(Int, Int)] = [], tracks: [[(Int, MIDIMessage)]]) -> MIDIFile {
    var conductor = tempos.map { MIDIFile.Event(tick: $0.0, .meta(.tempo(microsecondsPerQuarterNote: $0.1))) }
    let end = (tracks.flatMap { $0.map(\.0) } + tempos.map(\.0)).max() ?? 0
    conductor.append(MIDIFile.Event(tick: end, .meta(.endOfTrack)))
    let rest = tracks.map { events in
        MIDIFile.Track(
            events: events.map { MIDIFile.Event(tick: $0.0, .channel($0.1)) } + [
                MIDIFile.Event(tick: end, .meta(.endOfTrack))
            ])
    }
    return MIDIFile(
        format: .multiTrack, division: .ticksPerQuarterNote(480), tracks: [MIDIFile.Track(events: conductor)] + rest)
}

/// A note-on for `key`.
public func on(_ key: UInt8, channel: UInt8 = 0, velocity: UInt8 = 100) -> MIDIMessage {
    .noteOn(channel: channel, note: key, velocity: velocity)
}

/// A note-off for `key`.
public func off(_ key: UInt8, channel: UInt8 = 0) -> MIDIMessage {
    .noteOff(channel: channel, note: key, velocity: 0)
}
