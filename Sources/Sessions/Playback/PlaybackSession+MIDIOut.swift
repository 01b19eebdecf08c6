import AudioGraph
import MIDICore
import MIDIIO
import Sequencer

// How a playback session's songs reach the ALSA sequencer's destinations (`--midi-out`, `--route`).
extension PlaybackSession {
    /// Opens the sequencer client and connects its destinations: the feed of every subscriber
    /// (index 0), then one feed per route, with each route's channel.
    static func openSequencer(
        _ sequencer: SequencerMIDI, engine: AudioEngine, clock: (any AudioPresentationClock)?, sampleRate: Double
    ) throws(MIDIIOError) -> (ALSASequencerOutput, [SequencerMIDIOutput], [(Int, any MIDIReceivingNode)]) {
        let output = try ALSASequencerOutput(clientName: sequencer.clientName)
        for name in sequencer.destinations { try output.connect(name) }
        var feeds = [
            SequencerMIDIOutput(output: output, destination: nil, engine: engine, clock: clock, sampleRate: sampleRate)
        ]
        var routes: [(Int, any MIDIReceivingNode)] = []
        for route in sequencer.routes {
            let destination = try output.connect(route.destination, subscribing: false)
            let feed =
                feeds.dropFirst().first { $0.destination == destination.index }
                ?? SequencerMIDIOutput(
                    output: output, destination: destination.index, engine: engine, clock: clock,
                    sampleRate: sampleRate)
            if !feeds.contains(where: { $0 === feed }) { feeds.append(feed) }
            routes.append((route.channel, feed))
        }
        return (output, feeds, routes)
    }

    /// Where a player plays: every channel to `everyChannel` (fanned out when several), but the
    /// routed channels (1…16) to their own.
    static func destination(
        everyChannel: [any MIDIReceivingNode], routes: [(channel: Int, node: any MIDIReceivingNode)]
    ) throws(MIDIChannelRouterError) -> any MIDIReceivingNode {
        let main: (any MIDIReceivingNode)? =
            everyChannel.count > 1 ? MIDIFanOut(destinations: everyChannel) : everyChannel.first
        guard !routes.isEmpty else { return main! }
        var nodes: [any MIDIReceivingNode] = []
        var table = [Int](repeating: -1, count: 16)
        for route in routes {
            let index = nodes.firstIndex { $0 === route.node } ?? nodes.count
            if index == nodes.count { nodes.append(route.node) }
            table[route.channel - 1] = index
        }
        if table.contains(-1) {
            // Channels not routed: to the main destinations, or (with none) nowhere.
            nodes.append(main ?? DiscardedMIDI())
            table = table.map { $0 < 0 ? nodes.count - 1 : $0 }
        }
        return try MIDIChannelRouter(destinations: nodes, channelRoutes: table)
    }

}

/// Where channels that go nowhere go (`--midi-out-only` with `--route` alone).
private final class DiscardedMIDI: AudioNode, MIDIReceivingNode, @unchecked Sendable {
    init() { super.init(name: "discarded MIDI") }
    func receive(_ message: MIDIMessage, atFrameOffset frameOffset: Int) {}
    func receiveSystemExclusive(_ payload: UnsafeBufferPointer<UInt8>, atFrameOffset frameOffset: Int) {}
}
