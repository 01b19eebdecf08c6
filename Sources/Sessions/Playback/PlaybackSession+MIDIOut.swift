import AudioGraph
import JACKIO
import MIDICore
import MIDIIO
import Sequencer

// How a playback session's songs reach the sampler, the network sessions and the ALSA
// sequencer's destinations (`--midi-out`, `--route`).
extension PlaybackSession {
    /// What `openMIDIOutputs` opens.
    struct MIDIOutputs {
        /// The network MIDI output, when configured.
        var network: NetworkMIDIOutput?
        /// The sequencer client and its feeds (see `openSequencer`), when configured.
        var sequencer: ALSASequencerOutput?
        var sequencerFeeds: [SequencerMIDIOutput] = []
        /// Where each song's player plays (see `destination`).
        var playerDestination: any MIDIReceivingNode
    }

    /// Opens the network and sequencer outputs the configuration asks for and makes where the
    /// players play: every channel to `sampler` (when it sounds), the network and the
    /// sequencer's subscribers, the routed channels to their own destinations. Fails, letting
    /// `jack` go, when the songs would go nowhere.
    static func openMIDIOutputs(
        _ configuration: Configuration, engine: AudioEngine, output: any SessionOutput,
        sampler: any MIDIReceivingNode, jack: JACKOutput?
    ) throws(SessionError) -> MIDIOutputs {
        let clock = output as? any AudioPresentationClock
        var everyChannel: [any MIDIReceivingNode] = configuration.soundsSampler ? [sampler] : []
        var networkOutput: NetworkMIDIOutput?
        if let network = configuration.network {
            let listener: RTPMIDIListener
            do {
                for peer in network.peers { try RTPMIDIListener.checkPeer(host: peer.host, port: peer.port) }
                listener = try LiveSession.listener(network)
            } catch {
                engine.releaseOutput(jack)
                throw .midi(error)
            }
            let sender = NetworkMIDIOutput(
                listener: listener, engine: engine, clock: clock, sampleRate: output.sampleRate)
            networkOutput = sender
            everyChannel.append(sender)
        }
        var sequencerOutput: ALSASequencerOutput?
        var sequencerFeeds: [SequencerMIDIOutput] = []
        var routes: [(channel: Int, node: any MIDIReceivingNode)] = []
        if let sequencer = configuration.sequencer {
            let opened: (ALSASequencerOutput, [SequencerMIDIOutput], [(Int, any MIDIReceivingNode)])
            do {
                opened = try openSequencer(sequencer, engine: engine, clock: clock, sampleRate: output.sampleRate)
            } catch {
                engine.releaseOutput(jack)
                throw .midi(error)
            }
            sequencerOutput = opened.0
            sequencerFeeds = opened.1
            if !sequencer.destinations.isEmpty { everyChannel.append(opened.1[0]) }
            routes = opened.2
        }
        guard !everyChannel.isEmpty || !routes.isEmpty else {
            engine.releaseOutput(jack)
            throw .failed("the songs would go nowhere: no MIDI out, and the sampler silent")
        }
        do {
            return MIDIOutputs(
                network: networkOutput, sequencer: sequencerOutput, sequencerFeeds: sequencerFeeds,
                playerDestination: try destination(everyChannel: everyChannel, routes: routes))
        } catch {
            engine.releaseOutput(jack)
            throw .failed(error.description)
        }
    }

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
