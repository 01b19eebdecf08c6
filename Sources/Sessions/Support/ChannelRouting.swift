import ALSAIO
import AudioGraph
import Effects
import Meters
import Sampler
import Sequencer
import VoiceEngine

/// Where the parts of a song sound among the channels of a multichannel output (a device's or a
/// file's): `pianola play|render --channel-map`. Each route takes some MIDI channels to a pair of
/// output channels (the drums to outputs 3–4, say); the channels no route names make the mix,
/// which goes to `mixOutputs`. Each part is synthesized on its own and has its own effects, so a
/// part is exactly what it would be alone. Channel numbers here are 0-based.
public struct ChannelRouting: Sendable, Hashable {
    /// MIDI channels (0…15) played to a pair of output channels (left, right).
    public struct Route: Sendable, Hashable {
        /// The MIDI channels, 0…15.
        public var midiChannels: [Int]
        /// The output channels of the part's left and right, 0-based.
        public var outputs: [Int]

        /// A route of `midiChannels` to `outputs`; checked by `ChannelRouting.init`.
        public init(midiChannels: [Int], outputs: [Int]) {
            self.midiChannels = midiChannels
            self.outputs = outputs
        }
    }

    /// The output channels of the mix of every MIDI channel no route names ([0, 1]: outputs 1–2).
    public let mixOutputs: [Int]
    /// The routes, in the order given.
    public let routes: [Route]
    /// Channels of the output: the highest channel named + 1, or more if asked for.
    public let channelCount: Int
    /// For each MIDI channel, the part that plays it: 0 the mix, k the route `routes[k - 1]`.
    public let partOfChannel: [Int]

    /// Checks and makes a routing: each route names MIDI channels 0…15 that no other route names
    /// and two distinct output channels; `channelCount`, when given, must reach every channel
    /// named (and be at most 64).
    public init(mixOutputs: [Int] = [0, 1], routes: [Route], channelCount: Int? = nil) throws(SessionError) {
        func refuse(_ reason: String) -> SessionError { .failed("channel map: \(reason)") }
        var part = [Int](repeating: 0, count: 16)
        for (index, route) in routes.enumerated() {
            guard !route.midiChannels.isEmpty else { throw refuse("a route names no MIDI channel") }
            for channel in route.midiChannels {
                guard (0..<16).contains(channel) else { throw refuse("MIDI channel \(channel + 1) is not 1…16") }
                guard part[channel] == 0 else { throw refuse("MIDI channel \(channel + 1) is routed twice") }
                part[channel] = index + 1
            }
        }
        for outputs in [mixOutputs] + routes.map(\.outputs) {
            guard outputs.count == 2, outputs[0] != outputs[1] else {
                throw refuse("name two output channels (left and right) for each part, as in 10:3-4")
            }
            guard outputs.allSatisfy({ (0..<OutputNode.maximumChannelCount).contains($0) }) else {
                throw refuse("output channels are 1…\(OutputNode.maximumChannelCount)")
            }
        }
        let highest = ([mixOutputs] + routes.map(\.outputs)).joined().max() ?? 1
        if let channelCount, channelCount <= highest || channelCount > OutputNode.maximumChannelCount {
            throw refuse(
                "\(channelCount) output channels cannot hold output \(highest + 1) (at most \(OutputNode.maximumChannelCount))"
            )
        }
        self.mixOutputs = mixOutputs
        self.routes = routes
        self.channelCount = channelCount ?? highest + 1
        partOfChannel = part
    }

    /// Every MIDI channel on a pair of its own, in order: channel 1 on outputs 1–2, channel 10
    /// on 19–20, channel 16 on 31–32 (`--jack-multi`: the DAW gets each channel apart).
    public static let everyChannelApart = ChannelRouting(
        mixOutputs: [0, 1], routes: (1..<16).map { Route(midiChannels: [$0], outputs: [2 * $0, 2 * $0 + 1]) },
        channelCount: 32, partOfChannel: Array(0..<16))

    /// A routing known to be right (`init(mixOutputs:routes:channelCount:)` checks the others).
    private init(mixOutputs: [Int], routes: [Route], channelCount: Int, partOfChannel: [Int]) {
        self.mixOutputs = mixOutputs
        self.routes = routes
        self.channelCount = channelCount
        self.partOfChannel = partOfChannel
    }

    /// The JACK port names of `everyChannelApart`'s outputs: `ch1_left`, `ch1_right` … `ch16_right`.
    public static let everyChannelApartPortNames = (1...16).flatMap { ["ch\($0)_left", "ch\($0)_right"] }

    /// The output channels of each part: the mix's first, then each route's.
    public var partOutputs: [[Int]] { [mixOutputs] + routes.map(\.outputs) }
}

/// The synthesizers of a song played through a routing: one sampler per part (all sharing the
/// first's SoundFonts), each through its own effects into its own mixer and from there to its
/// output channels, and the MIDI destination that shares the song out among them. Without a
/// routing: the one sampler, its effects and the main mixer, to the output as usual.
struct RoutedSynthesis {
    /// The samplers, the mix's first.
    let samplers: [SamplerNode]
    /// Each part's effect nodes, in order.
    let effectNodes: [[AudioNode]]
    /// What the player plays into: the sampler, or a router among the samplers.
    let destination: any MIDIReceivingNode
    /// A level meter on each part's mixer but the main one (which the session meters itself).
    let partMeters: [PeakMeter]
    /// The native engine's node, when it plays in place of `samplers` (which then stay silent,
    /// unconnected): its output (its own reverb and chorus included) goes through the effects,
    /// as the sampler's would.
    let native: NativeSamplerNode?

    /// Builds it in `engine` around `sampler` (already attached) with `effects` on each part and
    /// the main mixer's volume on every part.
    ///
    /// With `native`, that node (not yet attached) plays instead of `sampler`, without a routing.
    init(
        engine: AudioEngine, sampler: SamplerNode, routing: ChannelRouting?, effects: [EffectSpec], volume: Float,
        native: NativeSamplerNode? = nil
    ) throws(SessionError) {
        var samplers = [sampler]
        var effectNodes: [[AudioNode]] = []
        let meters = (routing?.routes ?? []).map { _ in PeakMeter() }
        self.native = native
        if let native {
            guard routing == nil else { throw .failed("a channel map needs FluidSynth's engine, not the native one") }
            do { try engine.attach(native) } catch { throw SessionError(error) }
        }
        effectNodes.append(try engine.connect(native ?? sampler, throughEffects: effects))
        engine.mainMixerNode.outputVolume = volume
        do {
            if let routing {
                try engine.connect(engine.mainMixerNode, to: engine.outputNode, channels: routing.mixOutputs)
                for (index, route) in routing.routes.enumerated() {
                    let part = try SamplerNode(name: "sampler \(index + 2)", sharingSoundFontsWith: sampler)
                    let mixer = MixerNode(name: "mixer \(index + 2)")
                    try engine.attach(part)
                    try engine.attach(mixer)
                    effectNodes.append(try engine.connect(part, throughEffects: effects, to: mixer))
                    mixer.outputVolume = volume
                    try engine.connect(mixer, to: engine.outputNode, channels: route.outputs)
                    try engine.installTap(on: mixer, meters[index])
                    samplers.append(part)
                }
            }
            if let routing {
                destination = try MIDIChannelRouter(destinations: samplers, channelRoutes: routing.partOfChannel)
            } else {
                destination = native ?? sampler
            }
        } catch { throw SessionError(error) }
        self.samplers = samplers
        self.effectNodes = effectNodes
        partMeters = meters
    }

    /// `device` opened with the routing's channel count (as it is without a routing).
    static func device(
        _ device: ALSAOutput.Configuration, for routing: ChannelRouting?
    ) -> ALSAOutput.Configuration {
        var device = device
        if let routing { device.channelCount = routing.channelCount }
        return device
    }

    /// Refuses recording the output with a routing: the recording is of the stereo mix.
    static func check(_ routing: ChannelRouting?, recording: OutputRecording?) throws(SessionError) {
        if routing != nil && recording != nil {
            throw .failed("recording the output is for the stereo mix: it does not take a channel map")
        }
    }

    /// Voices sounding, over every sampler.
    var activeVoiceCount: Int { samplers.reduce(native?.activeVoiceCount ?? 0) { $0 + $1.activeVoiceCount } }

    /// The highest peak since the last call, over `mainMeter` (the main mixer's) and the parts'.
    func takePeak(_ mainMeter: PeakMeter) -> Float {
        ([mainMeter] + partMeters).compactMap { $0.takePeaks().max() }.max() ?? 0
    }

    /// Releases every note of every sampler.
    func allNotesOff() {
        for sampler in samplers { sampler.allNotesOff() }
    }
}
