import AudioGraph

/// An ordered chain of effect nodes that processes stereo audio outside an engine (offline
/// renders, `pianola process`). Consecutive `eq` specs form one multi-band `EQNode`.
public final class EffectChain {
    /// The nodes in processing order (consecutive `eq` specs are one `EQNode`), prepared by the initializer.
    /// Their parameters can be changed through these references; the chain renders them, so they must not
    /// render in an engine at the same time.
    public let nodes: [AudioNode]
    private var scratch: AudioBuffer
    private var sampleTime: Int64 = 0
    private let sampleRate: Double

    /// Builds and prepares the chain for `channelCount` channels at `sampleRate`.
    public convenience init(
        _ specs: [EffectSpec], sampleRate: Double, channelCount: Int = 2, maximumFrameCount: Int = 4_096,
        songTempo: Double? = nil
    )
        throws(EffectSpecError)
    {
        try self.init(
            nodes: try Self.makeNodes(specs, songTempo: songTempo), sampleRate: sampleRate, channelCount: channelCount,
            maximumFrameCount: maximumFrameCount)
    }

    /// A chain of effect nodes made elsewhere (an `EQNode` with bands set in code, say), prepared
    /// here for `channelCount` channels at `sampleRate`. The chain owns their render: do not
    /// render them in an engine at the same time.
    public init(
        nodes: [AudioNode], sampleRate: Double, channelCount: Int = 2, maximumFrameCount: Int = 4_096
    ) throws(EffectSpecError) {
        self.nodes = nodes
        self.sampleRate = sampleRate
        scratch = AudioBuffer(channelCount: channelCount, frameCapacity: maximumFrameCount)
        let format = AudioFormat(sampleRate: sampleRate, channelCount: channelCount)
        for node in nodes {
            if node is RateConvertingNode {
                throw EffectSpecError("\(node.name): changes the audio's rate, so a same-length chain cannot run it")
            }
            do { try node.prepare(format: format, maximumFrameCount: maximumFrameCount) } catch {
                throw EffectSpecError("\(node.name): \(error)")
            }
        }
    }

    /// The nodes of a chain, not yet prepared: to connect in an engine, in order.
    /// `songTempo` (beats per minute) times a `delay` given a note value without a `tempo` of its own.
    ///
    /// - Throws: `EffectSpecError` for an unknown effect, an effect that changes the audio's length
    ///   (`varispeed`, `timepitch`), more than 16 `eq` bands, or a value that is not a number or lies
    ///   outside its parameter's range (specs made with `EffectSpec.init` are checked here, as
    ///   `EffectSpec.make(name:_:)` checks text).
    public static func makeNodes(
        _ specs: [EffectSpec], songTempo: Double? = nil
    ) throws(EffectSpecError)
        -> [AudioNode]
    {
        var nodes: [AudioNode] = []
        var index = 0
        while index < specs.count {
            let spec = specs[index]
            try spec.checkValues()
            switch spec.name {
            case "eq":
                var run = [spec]
                while index + run.count < specs.count, specs[index + run.count].name == "eq" {
                    try specs[index + run.count].checkValues()
                    run.append(specs[index + run.count])
                }
                let count = run.map { Int($0.values["band"] ?? 0) }.max().map { max($0, run.count) } ?? run.count
                let eq = EQNode(numberOfBands: min(16, count))
                var next = 0
                for item in run {
                    let bandIndex = item.values["band"].map { Int($0) - 1 } ?? next
                    guard bandIndex < eq.bands.count else { throw EffectSpecError("eq: more than 16 bands") }
                    eq.bands[bandIndex].settings = item.band(defaultType: .parametric)
                    eq.bands[bandIndex].bypass = (item.values["bypass"] ?? 0) == 1
                    if let global = item.values["global"] { eq.globalGain = global }
                    if item.values["matched"] == 1 { eq.design = .matched }
                    next = bandIndex + 1
                }
                nodes.append(eq)
                index += run.count
            case "filter":
                let band = spec.band(defaultType: .lowPass)
                let filter = FilterNode(
                    type: band.type, frequency: band.frequency, gain: band.gain, bandwidth: band.bandwidth)
                if spec.values["matched"] == 1 { filter.design = .matched }
                nodes.append(filter)
                index += 1
            case "reverb":
                let reverb = ReverbNode(
                    preset: ReverbPreset.table[Int(spec.values["preset"] ?? 3)], wetDryMix: spec.values["mix"] ?? 50)
                nodes.append(reverb)
                index += 1
            case "limiter":
                let limiter = LimiterNode()
                limiter.attack = spec.values["attack"] ?? 5
                limiter.release = spec.values["release"] ?? 100
                limiter.preGain = spec.values["preGain"] ?? 0
                limiter.ceiling = spec.values["ceiling"] ?? -1
                limiter.truePeak = spec.values["truePeak"] == 1
                nodes.append(limiter)
                index += 1
            case "compressor":
                let compressor = DynamicsProcessorNode()
                compressor.threshold = spec.values["threshold"] ?? -20
                compressor.ratio = spec.values["ratio"] ?? 4
                compressor.kneeWidth = spec.values["knee"] ?? 6
                compressor.attackTime = spec.values["attack"] ?? 10
                compressor.releaseTime = spec.values["release"] ?? 100
                compressor.makeUpGain = spec.values["makeup"] ?? 0
                compressor.lookAhead = spec.values["lookahead"] ?? 0
                compressor.detector = DynamicsProcessorNode.Detector.allCases[Int(spec.values["detector"] ?? 0)]
                compressor.expansionRatio = spec.values["expansionRatio"] ?? 1
                compressor.expansionThreshold = spec.values["expansionThreshold"] ?? -60
                compressor.isLinked = (spec.values["link"] ?? 1) == 1
                nodes.append(compressor)
                index += 1
            case "delay":
                nodes.append(
                    DelayNode(
                        delayTime: spec.delaySeconds(songTempo: songTempo), feedback: spec.values["feedback"] ?? 30,
                        lowPassCutoff: spec.values["lowpass"] ?? 15_000, wetDryMix: spec.values["mix"] ?? 50))
                index += 1
            case "distortion":
                nodes.append(spec.distortion())
                index += 1
            case "varispeed", "timepitch":
                throw EffectSpecError(
                    "\(spec.name): changes the audio's length, so a same-length chain cannot run it"
                        + (spec.name == "varispeed"
                            ? " (connect a VarispeedNode in an engine, or use AudioFileProcessor)"
                            : " (connect a TimePitchNode in an engine, or use AudioFileProcessor)")
                )
            default:
                throw EffectSpecError("unknown effect '\(spec.name)' (see `pianola fx list`)")
            }
        }
        return nodes
    }

    /// The delay the chain adds, in frames (a limiter's or a compressor's look-ahead, a distortion's
    /// oversampling filters).
    public var latency: Int {
        nodes.reduce(0) { sum, node in
            if let limiter = node as? LimiterNode { return sum + limiter.latency }
            if let compressor = node as? DynamicsProcessorNode { return sum + compressor.latency }
            if let distortion = node as? DistortionNode { return sum + distortion.latency }
            return sum
        }
    }

    /// How long the chain rings on after its input stops: a reverb's fall to −90 dB (1.5 × its
    /// reverberation time), a delay's echoes to −90 dB; in a chain, the sum.
    public var tailSeconds: Double {
        nodes.reduce(0) { sum, node in
            if let reverb = node as? ReverbNode { return sum + 1.5 * reverb.preset.reverberationTime }
            if let delay = node as? DelayNode { return sum + delay.tailSeconds }
            return sum
        }
    }

    /// The longest delay time of the chain's delays, in seconds (0 without one): how long a render
    /// may be quiet before an echo comes.
    public var longestEcho: Double {
        nodes.compactMap { ($0 as? DelayNode)?.delayTime }.max() ?? 0
    }

    /// Processes `frameCount` frames of `buffer` in place (at most the maximum frame count).
    public func process(_ buffer: AudioBuffer, frameCount: Int) {
        let time = AudioTime(sampleTime: sampleTime, sampleRate: sampleRate)
        // Back and forth between the buffer and the scratch; one copy at the end at most.
        var (source, target) = (buffer, scratch)
        for node in nodes {
            node.process(source, into: target, frameCount: frameCount, time: time)
            swap(&source, &target)
        }
        if source !== buffer {
            for channel in 0..<min(buffer.channelCount, source.channelCount) {
                buffer.channel(channel).update(from: source.channel(channel), count: frameCount)
            }
        }
        sampleTime += Int64(frameCount)
    }
}
