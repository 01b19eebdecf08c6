import AudioGraph
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A feed-forward compressor and expander, the counterpart of AUDynamicsProcessor, with a soft
/// knee, a look-ahead, a peak or RMS detector, linked or per-channel detection, gain-reduction
/// metering and an optional side-chain.
///
/// The static curve, in dB, for an input level `x` (`T` the threshold, `R` the ratio, `W` the
/// knee width; `Te`, `Re` the expansion threshold and ratio):
///
///     gain = 0                                  2(x − T) ≤ −W
///          = (1/R − 1)(x − T + W/2)² / (2W)     |2(x − T)| < W   (the soft knee)
///          = (1/R − 1)(x − T)                   2(x − T) ≥ W
///          + (Re − 1)(x − Te)                   x < Te           (downward expansion)
///
/// floored at −120 dB. The compression's gain is smoothed in dB with the attack time constant
/// while it falls and the release time constant while it rises; the expansion's, as a gate's,
/// with the attack while it opens and the release while it closes. The sum is applied with
/// `makeUpGain`. The detector reads
/// the side-chain bus (input bus 1) when something is connected to it (ducking: a voice lowers
/// the music), else the input itself. With `lookAhead`, the audio is delayed behind the detector
/// (`latency` frames) so that the gain is down before a peak arrives.
///
/// ```swift
/// let compressor = DynamicsProcessorNode()
/// compressor.threshold = -24
/// compressor.ratio = 4
/// compressor.makeUpGain = 6
/// ```
public final class DynamicsProcessorNode: AudioNode, @unchecked Sendable {
    /// What the detector measures.
    public enum Detector: String, Sendable, CaseIterable {
        /// The absolute sample: peaks are caught at once.
        case peak
        /// The RMS level over about 10 ms (a one-pole mean square): closer to loudness.
        case rms
    }

    /// Where compression starts, dBFS, −40 … 20.
    public var threshold: Double {
        get { thresholdSetting.value }
        set { thresholdSetting.set(newValue) }
    }
    /// dB of input above the threshold per dB of output, 1 … 50 (1: no compression).
    public var ratio: Double {
        get { ratioSetting.value }
        set { ratioSetting.set(newValue) }
    }
    /// The soft knee's width around the threshold, dB, 0 (hard) … 40.
    public var kneeWidth: Double {
        get { kneeSetting.value }
        set { kneeSetting.set(newValue) }
    }
    /// Below this level, dBFS (−120 … 0), the expander lowers the signal further.
    public var expansionThreshold: Double {
        get { expansionThresholdSetting.value }
        set { expansionThresholdSetting.set(newValue) }
    }
    /// dB of output per dB of input below the expansion threshold, 1 (off) … 50 (a gate).
    public var expansionRatio: Double {
        get { expansionRatioSetting.value }
        set { expansionRatioSetting.set(newValue) }
    }
    /// Attack time constant, ms, 0.1 … 200.
    public var attackTime: Double {
        get { attackSetting.value }
        set { attackSetting.set(newValue) }
    }
    /// Release time constant, ms, 10 … 3000.
    public var releaseTime: Double {
        get { releaseSetting.value }
        set { releaseSetting.set(newValue) }
    }
    /// Gain after the dynamics, dB, −40 … 40.
    public var makeUpGain: Double {
        get { makeUpSetting.value }
        set { makeUpSetting.set(newValue) }
    }
    /// How far the detector looks ahead of the audio, ms, 0 … 10 (the audio is delayed by it).
    public var lookAhead: Double {
        get { lookAheadSetting.value }
        set { lookAheadSetting.set(newValue) }
    }
    /// Peak or RMS detection.
    public var detector: Detector {
        get { rmsFlag.load(ordering: .relaxed) ? .rms : .peak }
        set { rmsFlag.store(newValue == .rms, ordering: .relaxed) }
    }
    /// One gain for all channels, from the loudest (true), or a gain per channel.
    public var isLinked: Bool {
        get { linkedFlag.load(ordering: .relaxed) }
        set { linkedFlag.store(newValue, ordering: .relaxed) }
    }
    /// The delay the look-ahead adds, in frames.
    public var latency: Int { latencyFrames.load(ordering: .relaxed) }
    /// The deepest gain change of the last quantum, dB (0 or negative), for a meter: readable from
    /// any thread.
    public var gainReduction: Double { Double(Float(bitPattern: reductionBits.load(ordering: .relaxed))) }

    /// The parameter table of the `compressor` effect.
    public static let parameters: [EffectParameter] = [
        EffectParameter("threshold", "threshold", range: -40...20, default: -20, unit: .decibels),
        EffectParameter("ratio", "compression ratio", range: 1...50, default: 4, unit: .number),
        EffectParameter("knee", "soft knee width", range: 0...40, default: 6, unit: .decibels),
        EffectParameter("attack", "attack time constant", range: 0.1...200, default: 10, unit: .milliseconds),
        EffectParameter("release", "release time constant", range: 10...3_000, default: 100, unit: .milliseconds),
        EffectParameter("makeup", "make-up gain", range: -40...40, default: 0, unit: .decibels),
        EffectParameter("lookahead", "look-ahead (delays the audio)", range: 0...10, default: 0, unit: .milliseconds),
        EffectParameter(
            "detector", "level detector", range: 0...1, default: 0, unit: .choice,
            choices: Detector.allCases.map(\.rawValue)),
        EffectParameter("expansionRatio", "expansion ratio (1: off)", range: 1...50, default: 1, unit: .number),
        EffectParameter("expansionThreshold", "expansion threshold", range: -120...0, default: -60, unit: .decibels),
        EffectParameter("link", "one gain for all channels", range: 0...1, default: 1, unit: .boolean),
    ]

    private let thresholdSetting = AtomicParameter(-20, "threshold", in: parameters)
    private let ratioSetting = AtomicParameter(4, "ratio", in: parameters)
    private let kneeSetting = AtomicParameter(6, "knee", in: parameters)
    private let expansionThresholdSetting = AtomicParameter(-60, "expansionThreshold", in: parameters)
    private let expansionRatioSetting = AtomicParameter(1, "expansionRatio", in: parameters)
    private let attackSetting = AtomicParameter(10, "attack", in: parameters)
    private let releaseSetting = AtomicParameter(100, "release", in: parameters)
    private let makeUpSetting = AtomicParameter(0, "makeup", in: parameters)
    private let lookAheadSetting = AtomicParameter(0, "lookahead", in: parameters)
    private let rmsFlag = Atomic<Bool>(false)
    private let linkedFlag = Atomic<Bool>(true)
    private let latencyFrames = Atomic<Int>(0)
    private let reductionBits = Atomic<UInt32>(Float(0).bitPattern)

    // Render state, allocated in prepare.
    private var sampleRate = 48_000.0
    private var kernel = CompressorKernel(channelCount: 0, blockCapacity: 8, maximumLookAhead: 0)
    private var configuredLookAhead = -1.0

    /// A compressor named "compressor": threshold −20 dBFS, ratio 4, a 6 dB knee, attack 10 ms,
    /// release 100 ms, no make-up, no look-ahead, peak detection linked across channels, no expansion.
    public init() {
        super.init(name: "compressor")
    }

    /// Input bus 0 is the audio; bus 1, optional, the side-chain the detector reads.
    public override var inputBusCount: Int { 2 }
    public override func outputChannelCount(inputChannelCounts: [Int]) -> Int { inputChannelCounts.first ?? 2 }
    public override func accepts(_ format: AudioFormat, onBus bus: Int) -> Bool {
        (1...8).contains(format.channelCount)
    }

    public override func prepare(format: AudioFormat, maximumFrameCount: Int) throws {
        sampleRate = format.sampleRate
        kernel = CompressorKernel(
            channelCount: format.channelCount, blockCapacity: 256,
            maximumLookAhead: Int((0.010 * sampleRate).rounded(.up)))
        reset()
    }

    /// Clears the look-ahead and the detector: no gain reduction (render thread on a change of the
    /// look-ahead: only preallocated memory is touched).
    public override func reset() {
        configuredLookAhead = lookAhead
        kernel.reset(lookAhead: Int((configuredLookAhead / 1_000 * sampleRate).rounded()))
        latencyFrames.store(kernel.lookAhead, ordering: .relaxed)
    }

    public override func render(into output: AudioBuffer, inputs: RenderInputs, frameCount: Int, time: AudioTime) {
        guard let input = inputs[0], kernel.channelCount > 0 else {
            output.clear(frames: frameCount)
            return
        }
        if lookAhead != configuredLookAhead { reset() }
        let settings = CompressorKernel.Settings(
            threshold: Float(threshold), ratio: Float(ratio), knee: Float(kneeWidth),
            expansionThreshold: Float(expansionThreshold), expansionRatio: Float(expansionRatio),
            makeUp: Float(makeUpGain), attack: Float(attackTime / 1_000), release: Float(releaseTime / 1_000),
            rms: detector == .rms, linked: isLinked)
        let sideChain = inputs[1] ?? input
        var deepest: Float = 0
        var offset = 0
        while offset < frameCount {
            let count = min(kernel.blockCapacity, frameCount - offset)
            deepest = min(
                deepest,
                kernel.process(
                    input, detector: sideChain, into: output, from: offset, count: count, sampleRate: Float(sampleRate),
                    settings: settings))
            offset += count
        }
        reductionBits.store(deepest.bitPattern, ordering: .relaxed)
    }
}
