/// The engine's sink: what reaches its inputs is what the engine renders, one output channel
/// per channel of the engine's format.
///
/// Bus 0 is the usual connection (the main mixer's). Further buses sum into the output, each on
/// the output channels its channel map names, so that different sources reach different channels
/// of a multichannel interface:
///
/// ```swift
/// try engine.enableManualRenderingMode(format: AudioFormat(sampleRate: 48_000, channelCount: 4),
///                                      maximumFrameCount: 512)
/// try engine.connect(engine.mainMixerNode, to: engine.outputNode, channels: [0, 1])
/// try engine.connect(click, to: engine.outputNode, channels: [2, 3])  // outputs 3 and 4
/// ```
///
/// A bus without a map sends source channel k to output channel k (a mono source to the first
/// two; a stereo source to a mono output folded down, left and right at ½ each); output channels
/// that no bus reaches are silent. A channel map change takes effect at
/// the next quantum without a fade: route through a mixer, whose inputs fade, to change what is
/// heard while playing.
public final class OutputNode: AudioNode, @unchecked Sendable {
    /// The most input buses (routes) the output takes.
    public static let maximumInputCount = 64
    /// The most channels one route may name, and the most output channels a map may address.
    public static let maximumChannelCount = 64

    /// An output node named `name`. Only an engine's own `outputNode` is its sink: another instance in a
    /// graph renders silence.
    public override init(name: String = "output") { super.init(name: name) }
    public override var inputBusCount: Int { OutputNode.maximumInputCount }
    public override func outputChannelCount(inputChannelCounts: [Int]) -> Int { inputChannelCounts.first ?? 2 }
    public override func accepts(_ format: AudioFormat, onBus bus: Int) -> Bool {
        (1...OutputNode.maximumChannelCount).contains(format.channelCount)
    }
}

/// How the engine's output buffer is filled from the buffers routed to the output node:
/// for each output channel, the (source buffer, source channel, gain) entries summed into it.
struct OutputRouting {
    typealias Entry = (source: Int, channel: Int, gain: Float)
    /// The routed source buffers.
    let sources: [AudioBuffer]
    /// By output channel: indices into `sources` with a source channel and a gain (1, or ½ for a
    /// stereo source folded down to a mono output). An empty list: silence.
    let mix: [[Entry]]

    /// Every entry of `mix`, its gain divided by the channel count: what a one-channel buffer
    /// gets from an engine of several channels (their mean; (L + R) / 2 from stereo).
    let mixDown: [Entry]

    static let none = OutputRouting(sources: [], mix: [])

    var isConnected: Bool { !sources.isEmpty }

    /// Compiles the routes: `routes` holds each connected bus's buffer and channel map (nil: the
    /// default map), for an output of `channelCount` channels. Throws when a map addresses a
    /// channel the output does not have, or names other than one channel per source channel (a
    /// mono source may go to any number).
    init(
        routes: [(node: String, buffer: AudioBuffer, channels: [Int]?)], channelCount: Int
    ) throws(AudioGraphError) {
        var mix = [[Entry]](repeating: [], count: channelCount)
        for (index, route) in routes.enumerated() {
            let count = route.buffer.channelCount
            let map = route.channels ?? Array(0..<min(count == 1 ? 2 : count, channelCount))
            if let beyond = map.first(where: { $0 >= channelCount }) {
                throw .invalidChannelMap(
                    node: route.node,
                    reason: "output channel \(beyond + 1) does not exist: the output has \(channelCount)")
            }
            if route.channels != nil, count > 1, map.count != count {
                throw .invalidChannelMap(
                    node: route.node,
                    reason: "\(map.count) output channels named for \(count) source channels (name one for each)")
            }
            if route.channels == nil && channelCount == 1 && count >= 2 {
                // A mono output without a map: the source's left and right folded down, each at ½.
                mix[0] += [(index, 0, 0.5), (index, 1, 0.5)]
                continue
            }
            for (sourceChannel, outputChannel) in map.enumerated() {
                mix[outputChannel].append((index, min(sourceChannel, count - 1), 1))
            }
        }
        self.init(sources: routes.map(\.buffer), mix: mix)
    }

    private init(sources: [AudioBuffer], mix: [[Entry]]) {
        self.sources = sources
        self.mix = mix
        let share = 1 / Float(max(1, mix.count))
        mixDown = mix.flatMap { $0.map { (source: $0.source, channel: $0.channel, gain: $0.gain * share) } }
    }

    /// Fills `frames` frames of every channel of `buffer` (render thread; no allocation). A
    /// channel fed by one source is a copy of it, bit for bit. A buffer of one channel, for an
    /// engine of more, gets their mean (see `AudioEngine.render(frameCount:into:)`).
    func fill(_ buffer: AudioBuffer, frames: Int) {
        for channel in 0..<buffer.channelCount {
            let target = buffer.channel(channel)
            let foldsDown = buffer.channelCount == 1 && mix.count > 1
            guard foldsDown || (channel < mix.count && !mix[channel].isEmpty) else {
                target.update(repeating: 0, count: frames)
                continue
            }
            let inputs = foldsDown ? mixDown : mix[channel]
            guard !inputs.isEmpty else {
                target.update(repeating: 0, count: frames)
                continue
            }
            let first = inputs[0]
            let firstSource = sources[first.source].channel(first.channel)
            if first.gain == 1 {
                target.update(from: firstSource, count: frames)
            } else {
                for frame in 0..<frames { target[frame] = first.gain * firstSource[frame] }
            }
            for index in 1..<inputs.count {
                let source = sources[inputs[index].source].channel(inputs[index].channel)
                let gain = inputs[index].gain
                if gain == 1 {
                    for frame in 0..<frames { target[frame] += source[frame] }
                } else {
                    for frame in 0..<frames { target[frame] += gain * source[frame] }
                }
            }
        }
    }
}

extension AudioEngine {
    /// Routes `source` into the engine's output on the output channels `channels` (0-based): its
    /// channel k plays on output channel `channels[k]` (a mono source on every channel named),
    /// summed with whatever else reaches those channels. A source already routed to the output
    /// keeps its bus and takes the new map; otherwise it takes the next free bus. The engine's
    /// format (its channel count) must have every channel named: a map beyond it throws here
    /// when the engine is prepared, or when it is prepared.
    ///
    /// ```swift
    /// try engine.connect(click, to: engine.outputNode, channels: [2, 3])  // outputs 3 and 4
    /// ```
    public func connect(_ source: AudioNode, to output: OutputNode, channels: [Int]) throws {
        guard output === outputNode else {
            throw AudioGraphError.invalidChannelMap(
                node: output.name, reason: "only the engine's own output node takes a channel map")
        }
        guard !channels.isEmpty, channels.count <= OutputNode.maximumChannelCount else {
            throw AudioGraphError.invalidChannelMap(
                node: source.name, reason: "name 1…\(OutputNode.maximumChannelCount) output channels")
        }
        if let wrong = channels.first(where: { !(0..<OutputNode.maximumChannelCount).contains($0) }) {
            throw AudioGraphError.invalidChannelMap(
                node: source.name, reason: "channel index \(wrong) is outside 0…\(OutputNode.maximumChannelCount - 1)")
        }
        guard Set(channels).count == channels.count else {
            throw AudioGraphError.invalidChannelMap(node: source.name, reason: "an output channel is named twice")
        }
        try mutate { graph in
            let sourceID = ObjectIdentifier(source)
            let outputID = ObjectIdentifier(output)
            guard graph.nodes[sourceID] != nil else { throw AudioGraphError.nodeNotAttached(source.name) }
            guard sourceID != outputID else { throw AudioGraphError.cycle("\(output.name) → \(output.name)") }
            let buses = graph.inputs[outputID] ?? [:]
            guard
                let bus = buses.first(where: { $0.value.source == sourceID })?.key
                    ?? (0..<OutputNode.maximumInputCount).first(where: { buses[$0] == nil })
            else {
                throw AudioGraphError.invalidBus(node: output.name, bus: OutputNode.maximumInputCount)
            }
            graph.inputs[outputID, default: [:]][bus] = Connection(source: sourceID, format: nil, channels: channels)
        }
    }

    /// The output channels `source` is routed to (its channel map), nil when it is not connected
    /// to the output or is connected without a map (channel k to output channel k).
    public func outputChannels(of source: AudioNode) -> [Int]? {
        state.withLock { graph in
            graph.inputs[ObjectIdentifier(outputNode)]?.values.first { $0.source == ObjectIdentifier(source) }?.channels
        }
    }
}
