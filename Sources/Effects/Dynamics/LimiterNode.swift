import AudioGraph
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A look-ahead peak limiter, the counterpart of AUPeakLimiter, with a ceiling and a true-peak
/// mode. The output never exceeds the ceiling.
///
/// The signal (after `preGain`) is delayed by the attack time; a detector looks at it ahead of
/// the delay: each sample's (or, in true-peak mode, each 4× interpolated point's) absolute value
/// gives the gain that would bring it to the ceiling. A sliding minimum of that gain over the
/// look-ahead, smoothed by a moving average of the same length, reaches the needed gain exactly
/// when the peak leaves the delay, ramping down over the attack time; the gain then recovers with
/// the release time constant. A final clamp at the ceiling catches rounding. True-peak detection
/// oversamples 4× as ITU-R BS.1770 describes, with a 128-tap interpolator (32 taps per phase,
/// windowed sinc), and adds its 16 samples of delay. `latency` reports the delay.
///
/// Stereo channels are linked (one gain). Changing the attack or true-peak mode restarts the
/// look-ahead; the other parameters change smoothly.
public final class LimiterNode: AudioNode, @unchecked Sendable {
    /// Look-ahead and attack, ms, 1 … 30.
    public var attack: Double {
        get { attackSetting.value }
        set { attackSetting.set(newValue) }
    }
    /// Release time constant, ms, 1 … 1000.
    public var release: Double {
        get { releaseSetting.value }
        set { releaseSetting.set(newValue) }
    }
    /// Gain before limiting, dB, −40 … +40.
    public var preGain: Double {
        get { preGainSetting.value }
        set { preGainSetting.set(newValue) }
    }
    /// The ceiling, dBFS (dBTP in true-peak mode), −40 … 0.
    public var ceiling: Double {
        get { ceilingSetting.value }
        set { ceilingSetting.set(newValue) }
    }
    /// Detect peaks between samples (4× oversampled).
    public var truePeak: Bool {
        get { truePeakFlag.load(ordering: .relaxed) }
        set { truePeakFlag.store(newValue, ordering: .relaxed) }
    }
    /// The delay the limiter adds, in frames (look-ahead, plus the interpolator's in true-peak mode).
    public var latency: Int { latencyFrames.load(ordering: .relaxed) }
    /// The deepest gain reduction of the last quantum, in dB (0 or negative).
    public var gainReduction: Double { Double(Float(bitPattern: reductionBits.load(ordering: .relaxed))) }

    /// The parameter table of the `limiter` effect: `attack` and `release` (ms), `preGain` and `ceiling` (dB)
    /// and `truePeak` (on/off), with the ranges and defaults of the properties.
    public static let parameters: [EffectParameter] = [
        EffectParameter("attack", "attack (look-ahead)", range: 1...30, default: 5, unit: .milliseconds),
        EffectParameter("release", "release", range: 1...1_000, default: 100, unit: .milliseconds),
        EffectParameter("preGain", "gain before limiting", range: -40...40, default: 0, unit: .decibels),
        EffectParameter("ceiling", "ceiling", range: -40...0, default: -1, unit: .decibels),
        EffectParameter("truePeak", "true-peak detection (4× oversampled)", range: 0...1, default: 0, unit: .boolean),
    ]

    private let attackSetting = AtomicParameter(5, "attack", in: parameters)
    private let releaseSetting = AtomicParameter(100, "release", in: parameters)
    private let preGainSetting = AtomicParameter(0, "preGain", in: parameters)
    private let ceilingSetting = AtomicParameter(-1, "ceiling", in: parameters)
    private let truePeakFlag = Atomic<Bool>(false)
    private let latencyFrames = Atomic<Int>(0)
    private let reductionBits = Atomic<UInt32>(Float(0).bitPattern)

    // Render state: the look-ahead the limiter is set up for, and the limiter itself (sized in
    // prepare for the longest look-ahead).
    private var sampleRate = 44_100.0
    private var configuredAttack = -1.0
    private var configuredTruePeak = false
    private var limiter = LookAheadLimiter(capacity: 0, scratchCapacity: 1)

    /// A limiter named "limiter": attack 5 ms, release 100 ms, pre-gain 0 dB, ceiling −1 dBFS, true-peak
    /// detection off.
    public init() {
        super.init(name: "limiter")
    }

    public override var inputBusCount: Int { 1 }
    public override func outputChannelCount(inputChannelCounts: [Int]) -> Int { inputChannelCounts.first ?? 2 }

    public override func prepare(format: AudioFormat, maximumFrameCount: Int) throws {
        sampleRate = format.sampleRate
        let scratchCapacity = max(1, min(maximumFrameCount, 4_096))
        // The delay holds the longest look-ahead behind a whole pass's writes.
        let capacity = Int((0.030 * sampleRate).rounded(.up)) + TruePeakInterpolator.taps / 2 + scratchCapacity
        limiter = LookAheadLimiter(capacity: capacity, scratchCapacity: scratchCapacity)
        reset()
    }

    /// Clears the look-ahead and the gain (control thread, or the render thread on a change of
    /// attack or mode: it only touches preallocated memory).
    public override func reset() {
        configuredAttack = attack
        configuredTruePeak = truePeak
        limiter.reset(
            lookAhead: max(1, Int((configuredAttack / 1_000 * sampleRate).rounded())), truePeak: configuredTruePeak,
            preGainDecibels: preGain, ceilingDecibels: ceiling)
        latencyFrames.store(limiter.latency, ordering: .relaxed)
    }

    public override func render(into output: AudioBuffer, inputs: RenderInputs, frameCount: Int, time: AudioTime) {
        guard let input = inputs[0] else {
            output.clear(frames: frameCount)
            return
        }
        if attack != configuredAttack || truePeak != configuredTruePeak { reset() }
        let deepest = limiter.process(
            input, into: output, frameCount: frameCount, preGainDecibels: preGain, ceilingDecibels: ceiling,
            releaseMilliseconds: release, sampleRate: sampleRate)
        reductionBits.store(Float(20 * log10(max(deepest, 1e-9))).bitPattern, ordering: .relaxed)
    }
}
