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
                // The run's global gain and design: the last band that gives them, else the table's.
                var global: Double?
                var matched = false
                for item in run {
                    let bandIndex = item.values["band"].map { Int($0) - 1 } ?? next
                    guard bandIndex < eq.bands.count else { throw EffectSpecError("eq: more than 16 bands") }
                    eq.bands[bandIndex].settings = item.band()
                    eq.bands[bandIndex].bypass = item.value(of: "bypass") == 1
                    if let given = item.values["global"] { global = given }
                    if item.value(of: "matched") == 1 { matched = true }
                    next = bandIndex + 1
                }
                eq.globalGain = global ?? spec.value(of: "global")
                eq.design = matched ? .matched : .cookbook
                nodes.append(eq)
                index += run.count
            case "filter":
                let band = spec.band()
                let filter = FilterNode(
                    type: band.type, frequency: band.frequency, gain: band.gain, bandwidth: band.bandwidth)
                filter.design = spec.value(of: "matched") == 1 ? .matched : .cookbook
                nodes.append(filter)
                index += 1
            case "reverb":
                let reverb = ReverbNode(
                    preset: ReverbPreset.table[Int(spec.value(of: "preset"))], wetDryMix: spec.value(of: "mix"))
                nodes.append(reverb)
                index += 1
            case "limiter":
                let limiter = LimiterNode()
                limiter.attack = spec.value(of: "attack")
                limiter.release = spec.value(of: "release")
                limiter.preGain = spec.value(of: "preGain")
                limiter.ceiling = spec.value(of: "ceiling")
                limiter.truePeak = spec.value(of: "truePeak") == 1
                nodes.append(limiter)
                index += 1
            case "compressor":
                let compressor = DynamicsProcessorNode()
                compressor.threshold = spec.value(of: "threshold")
                compressor.ratio = spec.value(of: "ratio")
                compressor.kneeWidth = spec.value(of: "knee")
                compressor.attackTime = spec.value(of: "attack")
                compressor.releaseTime = spec.value(of: "release")
                compressor.makeUpGain = spec.value(of: "makeup")
                compressor.lookAhead = spec.value(of: "lookahead")
                compressor.detector = DynamicsProcessorNode.Detector.allCases[Int(spec.value(of: "detector"))]
                compressor.expansionRatio = spec.value(of: "expansionRatio")
                compressor.expansionThreshold = spec.value(of: "expansionThreshold")
                compressor.isLinked = spec.value(of: "link") == 1
                nodes.append(compressor)
                index += 1
            case "delay":
                nodes.append(
                    DelayNode(
                        delayTime: spec.delaySeconds(songTempo: songTempo), feedback: spec.value(of: "feedback"),
                        lowPassCutoff: spec.value(of: "lowpass"), wetDryMix: spec.value(of: "mix")))
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
                throw EffectSpecError("unknown effect '\(spec.name)' (\(EffectSpecError.catalogHint))")
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
