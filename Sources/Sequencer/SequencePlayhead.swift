import AudioGraph
import MIDICore

/// The render-thread side of a `MusicPlayer`: where each track stands in the sequence, which
/// notes the player has sounding on each destination, and how a message reaches its destination
/// (transposed, muted tracks skipped, notes paired or passed through). The player's own
/// sample-accurate scheduling delivers through it, and so does an `EventTimingPolicy`.
///
/// Real-time code: used on the render thread only; it allocates nothing after `init`.
public final class SequencePlayhead {
    /// The sequence whose tracks the playhead steps through (its player's).
    public let sequence: MusicSequence
    let destinations: [any MIDIReceivingNode]
    /// The destination index of each track.
    let trackDestination: [Int]
    /// Each track's next event (an index into its `events`).
    private(set) var cursors: [Int]
    var trackEnabled: [Bool]
    /// Semitones added to every note outside the drum channel.
    var transpose = 0
    private let passesNotesThrough: Bool
    /// Per destination × channel × key: the sounding key + 1, or 0.
    private var activeKeys: [Int16]

    init(sequence: MusicSequence, destination: any MIDIReceivingNode, passesNotesThrough: Bool) {
        self.sequence = sequence
        self.passesNotesThrough = passesNotesThrough
        var nodes: [any MIDIReceivingNode] = [destination]
        var map: [Int] = []
        for track in sequence.tracks {
            if let node = track.destination {
                if let index = nodes.firstIndex(where: { $0 === node }) {
                    map.append(index)
                } else {
                    nodes.append(node)
                    map.append(nodes.count - 1)
                }
            } else {
                map.append(0)
            }
        }
        destinations = nodes
        trackDestination = map
        cursors = [Int](repeating: 0, count: sequence.tracks.count)
        trackEnabled = [Bool](repeating: true, count: sequence.tracks.count)
        activeKeys = [Int16](repeating: 0, count: nodes.count * 16 * 128)
    }

    /// The index of `track`'s next event in its `events`.
    public func cursor(ofTrack track: Int) -> Int { cursors[track] }

    /// Whether every track's events have all been delivered.
    public var isAtEnd: Bool {
        cursors.indices.allSatisfy { cursors[$0] >= sequence.tracks[$0].events.count }
    }

    /// Moves `track`'s cursor past its next event and sends `message` (that event, or what the
    /// policy makes of it) to the track's destination at `offset`, unless the track is muted.
    public func deliver(_ message: MIDIMessage, fromTrack track: Int, atFrameOffset offset: Int) {
        cursors[track] += 1
        guard trackEnabled[track] else { return }
        send(message, to: trackDestination[track], atFrameOffset: offset)
    }

    /// Puts every track's cursor on its first event at or after `seconds`.
    func position(atSeconds seconds: Double) {
        for index in 0..<sequence.tracks.count {
            cursors[index] = Self.firstEvent(atOrAfter: seconds, in: sequence.tracks[index])
        }
    }

    /// Puts the cursors where a seek plan found them.
    func position(at plannedCursors: [Int]) {
        for index in 0..<min(plannedCursors.count, cursors.count) { cursors[index] = plannedCursors[index] }
    }

    /// The index of the first event of `track` at or after `seconds` (binary search).
    static func firstEvent(atOrAfter seconds: Double, in track: MusicSequence.Track) -> Int {
        var low = 0
        var high = track.eventSeconds.count
        while low < high {
            let middle = (low + high) / 2
            if track.eventSeconds[middle] < seconds { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// Sends a message from the chase of a seek (programs, controllers) as it is.
    func sendUnpaired(_ message: MIDIMessage, to destination: Int, atFrameOffset offset: Int) {
        destinations[destination].receive(message, atFrameOffset: offset)
    }

    private func send(_ message: MIDIMessage, to destination: Int, atFrameOffset offset: Int) {
        switch message {
        case .noteOn(let channel, let key, let velocity) where velocity > 0:
            let sounding = channel == 9 ? Int(key) : min(127, max(0, Int(key) + transpose))
            let slot = (destination * 16 + Int(channel)) * 128 + Int(key)
            if activeKeys[slot] != 0 && !passesNotesThrough {
                // The same key again: end the previous one first (FIFO, as the file pairs them).
                destinations[destination].receive(
                    .noteOff(channel: channel, note: UInt8(activeKeys[slot] - 1), velocity: 0), atFrameOffset: offset)
            }
            activeKeys[slot] = Int16(sounding + 1)
            destinations[destination].receive(
                .noteOn(channel: channel, note: UInt8(sounding), velocity: velocity), atFrameOffset: offset)
        case .noteOn(let channel, let key, let velocity), .noteOff(let channel, let key, let velocity):
            let slot = (destination * 16 + Int(channel)) * 128 + Int(key)
            guard activeKeys[slot] != 0 || passesNotesThrough else { return }
            let sounding = activeKeys[slot] != 0 ? UInt8(activeKeys[slot] - 1) : key
            activeKeys[slot] = 0
            // (A note-on of velocity 0 ends the note with a release velocity of 0.)
            let release: UInt8
            if case .noteOff = message { release = velocity } else { release = 0 }
            destinations[destination].receive(
                .noteOff(channel: channel, note: sounding, velocity: release), atFrameOffset: offset)
        default:
            destinations[destination].receive(message, atFrameOffset: offset)
        }
    }

    /// Ends every note the player started, and lifts sustain and sostenuto pedals.
    /// Tells every destination that the stream broke off (after `releaseAllNotes`).
    func interrupt(_ interruption: MIDIStreamInterruption, atFrameOffset offset: Int) {
        for destination in 0..<destinations.count {
            destinations[destination].streamInterrupted(interruption, atFrameOffset: offset)
        }
    }

    func releaseAllNotes(atFrameOffset offset: Int) {
        for destination in 0..<destinations.count {
            var usedChannels: UInt16 = 0
            for channel in 0..<16 {
                for key in 0..<128 {
                    let slot = (destination * 16 + channel) * 128 + key
                    let sounding = activeKeys[slot]
                    guard sounding != 0 else { continue }
                    activeKeys[slot] = 0
                    usedChannels |= 1 << channel
                    destinations[destination].receive(
                        .noteOff(channel: UInt8(channel), note: UInt8(sounding - 1), velocity: 0), atFrameOffset: offset
                    )
                }
            }
            for channel in 0..<16 where usedChannels & (1 << channel) != 0 {
                destinations[destination].receive(
                    .controlChange(channel: UInt8(channel), controller: 64, value: 0), atFrameOffset: offset)
                destinations[destination].receive(
                    .controlChange(channel: UInt8(channel), controller: 66, value: 0), atFrameOffset: offset)
            }
        }
    }
}
