import AudioGraph
import Synchronization

/// A stereo reverb, the counterpart of AVAudioUnitReverb: a 16-line feedback delay network (Jot)
/// with a Hadamard feedback matrix, per-line damping filters that set the decay time (and a faster
/// decay of high frequencies), four input allpass diffusers per channel for a fast build-up of
/// echo density, and decorrelated left and right outputs. Each preset sets the decay time it is
/// named for (`ReverbPreset.reverberationTime`, measured in the 1 kHz octave), its pre-delay and
/// its size. `wetDryMix` crossfades linearly, 0 (dry only, bit for bit) to 100 (wet only), and
/// glides. Denormal states are flushed, so silence after a loud sound costs nothing extra.
///
/// The plate preset is Jon Dattorro's plate reverberator (1997): input diffusion into a modulated
/// "figure eight" tank, seven output taps per channel.
public final class ReverbNode: AudioNode, @unchecked Sendable {
    /// The preset; changing it rebuilds the network (a short break in the tail).
    public var preset: ReverbPreset {
        get { ReverbPreset.table[presetIndex.load(ordering: .relaxed)] }
        set { presetIndex.store(ReverbPreset.table.firstIndex(of: newValue)!, ordering: .relaxed) }
    }
    /// Percent of reverberated signal, 0 … 100.
    public var wetDryMix: Double {
        get { Double(bitPattern: mixBits.load(ordering: .relaxed)) }
        set { mixBits.store(min(max(newValue, 0), 100).bitPattern, ordering: .relaxed) }
    }

    /// The parameter table of the `reverb` effect: `preset` (a `ReverbPreset` name, `mediumHall` by default)
    /// and `mix` (`wetDryMix`, percent, 50 by default).
    public static let parameters: [EffectParameter] = [
        EffectParameter(
            "preset", "preset", range: 0...Double(ReverbPreset.table.count - 1), default: 3, unit: .choice,
            choices: ReverbPreset.table.map(\.rawValue)),
        EffectParameter("mix", "wet/dry mix", range: 0...100, default: 50, unit: .percent),
    ]

    private let presetIndex = Atomic<Int>(3)
    private let mixBits = Atomic<UInt64>(50.0.bitPattern)

    // Render state, allocated in prepare: the input goes through the pre-delay, then through the
    // diffusers and the delay network, or (the plate preset) through Dattorro's plate; then dry
    // and wet are mixed. Every delay is indexed by one running sample counter.
    private var sampleRate = 44_100.0
    private var builtPreset = -1
    private var counter = 0
    private var preDelay: PreDelay?
    private var diffuser: InputDiffuser?
    private var network: FeedbackDelayNetwork?
    /// The plate preset's own network.
    private var plate: DattorroPlate?
    /// Whether the network built is the plate.
    private var builtPlate = false
    /// The wet signal of a piece of the quantum: left at 0, right at `pieceCapacity`.
    private var wet = RealTimeBuffer<Float>(capacity: 2)
    private var pieceCapacity = 1
    private var mixNow = 0.5

    /// A reverb named "reverb" with `preset` and `wetDryMix` percent (clamped to 0 … 100).
    public init(preset: ReverbPreset = .mediumHall, wetDryMix: Double = 50) {
        super.init(name: "reverb")
        self.preset = preset
        self.wetDryMix = wetDryMix
    }

    public override var inputBusCount: Int { 1 }
    public override func outputChannelCount(inputChannelCounts: [Int]) -> Int { 2 }

    public override func prepare(format: AudioFormat, maximumFrameCount: Int) throws {
        sampleRate = format.sampleRate
        preDelay = PreDelay(sampleRate: sampleRate)
        diffuser = InputDiffuser(sampleRate: sampleRate)
        network = FeedbackDelayNetwork(sampleRate: sampleRate)
        plate = DattorroPlate(sampleRate: sampleRate)
        pieceCapacity = max(1, maximumFrameCount)
        wet = RealTimeBuffer(capacity: 2 * pieceCapacity)
        builtPreset = -1
        mixNow = wetDryMix / 100
        build(presetIndex.load(ordering: .relaxed))
    }

    public override func reset() { build(presetIndex.load(ordering: .relaxed)) }

    /// Sets the networks up for a preset and clears them (render thread on a preset change: only
    /// preallocated memory is touched).
    private func build(_ index: Int) {
        // (By index: `firstIndex(of:)` is a generic call that allocates in unoptimized builds.)
        let preset = ReverbPreset.table[index]
        builtPreset = index
        network?.configure(preset, sampleRate: sampleRate)
        diffuser?.configure(sampleRate: sampleRate)
        preDelay?.configure(seconds: preset.preDelay, sampleRate: sampleRate)
        counter = 0
        // (A pattern match and a switch, not `==` and `!= nil`: those are generic calls in
        // unoptimized builds, and generic code may allocate.)
        builtPlate = false
        if case .plate = preset {
            switch plate {
            case .some: builtPlate = true
            case .none: break
            }
            plate?.configure(reverberationTime: preset.reverberationTime, sampleRate: sampleRate)
        }
    }

    public override func render(into output: AudioBuffer, inputs: RenderInputs, frameCount: Int, time: AudioTime) {
        guard let input = inputs[0] else {
            output.clear(frames: frameCount)
            return
        }
        let index = presetIndex.load(ordering: .relaxed)
        if index != builtPreset { build(index) }
        let mixTarget = wetDryMix / 100
        let mixStep = 1 / (0.020 * sampleRate)
        let left = input.channel(0)
        let right = input.channel(min(1, input.channelCount - 1))
        let outLeft = output.channel(0)
        let outRight = output.channel(min(1, output.channelCount - 1))
        let stereoOut = output.channelCount > 1
        if mixTarget == 0 && mixNow == 0 {
            // Dry only: the input, bit for bit (the network rests).
            outLeft.update(from: left, count: frameCount)
            if stereoOut { outRight.update(from: right, count: frameCount) }
            return
        }
        let (wetLeft, wetRight) = (wet.base, wet.base + pieceCapacity)
        var offset = 0
        while offset < frameCount {
            // In pieces of at most the scratch's capacity: the pre-delay, then the network, in
            // place on the scratch, then the mix.
            let count = min(pieceCapacity, frameCount - offset)
            preDelay?.process(left + offset, right + offset, count: count, from: counter, into: wetLeft, wetRight)
            if builtPlate {
                plate?.process(wetLeft, wetRight, count: count)
            } else {
                diffuser?.process(wetLeft, wetRight, count: count, from: counter)
                network?.process(wetLeft, wetRight, count: count, from: counter)
            }
            mix(
                left + offset, right + offset, wetLeft, wetRight, outLeft + offset,
                stereoOut ? outRight + offset : nil, count, mixTarget, mixStep)
            counter &+= count
            offset += count
        }
    }

    /// Dry and wet mixed into the output, the mix gliding toward `mixTarget` by `mixStep` a frame:
    /// a vector loop once the mix has settled.
    private func mix(
        _ dryLeft: UnsafeMutablePointer<Float>, _ dryRight: UnsafeMutablePointer<Float>,
        _ wetLeft: UnsafeMutablePointer<Float>, _ wetRight: UnsafeMutablePointer<Float>,
        _ outLeft: UnsafeMutablePointer<Float>, _ outRight: UnsafeMutablePointer<Float>?, _ count: Int,
        _ mixTarget: Double, _ mixStep: Double
    ) {
        var mix = mixNow
        var frame = 0
        while frame < count && mix != mixTarget {
            mix = mixTarget > mix ? min(mixTarget, mix + mixStep) : max(mixTarget, mix - mixStep)
            let wet = Float(mix)
            outLeft[frame] = dryLeft[frame] + (wetLeft[frame] - dryLeft[frame]) * wet
            if let outRight { outRight[frame] = dryRight[frame] + (wetRight[frame] - dryRight[frame]) * wet }
            frame &+= 1
        }
        mixNow = mix
        let wet = Float(mix)
        for rest in frame..<count { outLeft[rest] = dryLeft[rest] + (wetLeft[rest] - dryLeft[rest]) * wet }
        if let outRight {
            for rest in frame..<count { outRight[rest] = dryRight[rest] + (wetRight[rest] - dryRight[rest]) * wet }
        }
    }
}
