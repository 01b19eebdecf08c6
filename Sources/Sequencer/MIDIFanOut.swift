import AudioGraph
import MIDICore

/// Hands every message to several destinations, in order: a player's song to the sampler and to
/// an external destination (a network session) at once.
///
/// ```swift
/// let both = MIDIFanOut(destinations: [sampler, networkOutput])
/// let player = MusicPlayer(sequence: sequence, destination: both)
/// ```
///
/// Like `MIDIChannelRouter`, it is not attached to an engine and renders nothing; it forwards on
/// the calling (render) thread, allocating nothing.
public final class MIDIFanOut: AudioNode, MIDIReceivingNode, @unchecked Sendable {
    /// Where messages go, in the order given.
    public let destinations: [any MIDIReceivingNode]

    /// A fan-out to `destinations`. With none, it hands messages to no one: everything sent to it
    /// is dropped.
    public init(name: String = "MIDI fan-out", destinations: [any MIDIReceivingNode]) {
        self.destinations = destinations
        super.init(name: name)
    }

    public func receive(_ message: MIDIMessage, atFrameOffset frameOffset: Int) {
        for index in 0..<destinations.count { destinations[index].receive(message, atFrameOffset: frameOffset) }
    }

    public func receiveSystemExclusive(_ payload: UnsafeBufferPointer<UInt8>, atFrameOffset frameOffset: Int) {
        for index in 0..<destinations.count {
            destinations[index].receiveSystemExclusive(payload, atFrameOffset: frameOffset)
        }
    }

    public func streamInterrupted(_ interruption: MIDIStreamInterruption, atFrameOffset frameOffset: Int) {
        for index in 0..<destinations.count {
            destinations[index].streamInterrupted(interruption, atFrameOffset: frameOffset)
        }
    }

    /// Whether every destination can play notes (one that cannot would leave its share silent).
    public var canPlayNotes: Bool { destinations.allSatisfy(\.canPlayNotes) }

    /// The voices sounding in all the destinations.
    public var activeVoiceCount: Int { destinations.reduce(0) { $0 + $1.activeVoiceCount } }
}
