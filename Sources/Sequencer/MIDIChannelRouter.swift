import AudioGraph
import MIDICore

/// A MIDI destination that shares a stream out by channel: each channel message goes on to the
/// destination its channel is routed to, and system messages (SysEx, resets) go to all of them.
/// It lets one `MusicPlayer` play a song through several synthesizers, for instance the drums
/// through a sampler of their own that feeds other output channels.
///
/// ```swift
/// // Channel 10 (index 9) to `drums`, every other channel to `band`.
/// let router = try MIDIChannelRouter(destinations: [band, drums], channelRoutes: (0..<16).map { $0 == 9 ? 1 : 0 })
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

    /// A router sending channel `c`'s messages to `destinations[channelRoutes[c]]`.
    ///
    /// - Throws: `MIDIChannelRouterError` unless `destinations` holds at least one node and
    ///   `channelRoutes` holds 16 indices into it, one per channel.
    public init(
        name: String = "MIDI router", destinations: [any MIDIReceivingNode], channelRoutes: [Int]
    ) throws(MIDIChannelRouterError) {
        guard !destinations.isEmpty else { throw .noDestinations }
        guard channelRoutes.count == 16 else { throw .wrongRouteCount(channelRoutes.count) }
        if let channel = channelRoutes.indices.first(where: { !destinations.indices.contains(channelRoutes[$0]) }) {
            throw .noSuchDestination(
                channel: channel, index: channelRoutes[channel], destinationCount: destinations.count)
        }
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

    /// Whether every destination can play notes (one that cannot would leave its share silent).
    public var canPlayNotes: Bool { destinations.allSatisfy(\.canPlayNotes) }

    /// The voices sounding in all the destinations.
    public var activeVoiceCount: Int { destinations.reduce(0) { $0 + $1.activeVoiceCount } }
}

/// Why a `MIDIChannelRouter` cannot be made from the table given.
public enum MIDIChannelRouterError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The list of destinations is empty: there is nowhere to route to.
    case noDestinations
    /// `channelRoutes` holds this many entries rather than 16, one per MIDI channel.
    case wrongRouteCount(Int)
    /// Channel `channel` (0…15) is routed to `index`, which is not an index of the
    /// `destinationCount` destinations.
    case noSuchDestination(channel: Int, index: Int, destinationCount: Int)

    public var description: String {
        switch self {
        case .noDestinations: return "a MIDI router needs a destination"
        case .wrongRouteCount(let count): return "a MIDI router's table needs 16 routes, one per channel, not \(count)"
        case .noSuchDestination(let channel, let index, let count):
            return "channel \(channel) is routed to destination \(index), not one of the \(count) (0…\(count - 1))"
        }
    }
}
