import AudioGraph
import MIDICore

/// A MIDI destination that shares a stream out by channel: each channel message goes on to the
/// destination its channel is routed to, and system messages (SysEx, resets) go to all of them.
/// It lets one `MusicPlayer` play a song through several synthesizers, for instance the drums
/// through a sampler of their own that feeds other output channels.
///
/// ```swift
/// // Channel 10 (index 9) to `drums`, every other channel to `band`.
/// let router = MIDIChannelRouter(destinations: [band, drums], channelRoutes: (0..<16).map { $0 == 9 ? 1 : 0 })
/// let player = MusicPlayer(sequence: sequence, destination: router)
/// ```
///
/// The router is not attached to an engine and renders nothing: its destinations are the nodes
/// that sound. It forwards on the calling (render) thread, allocating nothing.
public final class MIDIChannelRouter: AudioNode, MIDIReceivingNode, @unchecked Sendable {
    /// Where messages go, in the order given.
    public let destinations: [any MIDIReceivingNode]
    /// For each MIDI channel (0…15), the index in `destinations` its messages go to.
    public let channelRoutes: [Int]

    /// A router sending channel `c`'s messages to `destinations[channelRoutes[c]]`. `channelRoutes`
    /// holds 16 indices into `destinations` (which must not be empty); a wrong table traps.
    public init(name: String = "MIDI router", destinations: [any MIDIReceivingNode], channelRoutes: [Int]) {
        precondition(!destinations.isEmpty, "a router needs a destination")
        precondition(
            channelRoutes.count == 16 && channelRoutes.allSatisfy { destinations.indices.contains($0) },
            "channelRoutes must hold 16 indices into destinations")
        self.destinations = destinations
        self.channelRoutes = channelRoutes
        super.init(name: name)
    }

    public func receive(_ message: MIDIMessage, atFrameOffset frameOffset: Int) {
        if let channel = message.channel {
            destinations[channelRoutes[Int(channel & 0x0F)]].receive(message, atFrameOffset: frameOffset)
        } else {
            for index in 0..<destinations.count { destinations[index].receive(message, atFrameOffset: frameOffset) }
        }
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
}
