import AudioGraph
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// An echo, the counterpart of AVAudioUnitDelay: a delay line per channel with feedback, a
/// low-pass filter in the loop, and a wet/dry mix.
///
/// The delay is fractional (third-order Lagrange interpolation: an echo lands between samples
/// where the time puts it) and glides when it changes: the delay follows its new value through two
/// cascaded one-pole smoothers (20 ms each), so its speed changes smoothly too and a change
/// bends the pitch of what is echoing, as a tape delay does, instead of clicking. Feedback and
/// mix ramp over a quantum (a full-scale change in 20 ms at most); the cutoff glides in 20 ms.
///
/// Each echo passes the low-pass once more than the one before (`lowPassCutoff`, a one-pole
/// filter, −3 dB at the cutoff, off at or above the Nyquist frequency). The mix is a linear
/// crossfade: 0 is the input bit for bit, 100 the echoes alone. The shortest delay is two
/// samples (a time of 0 gives 2 samples), the longest 2 seconds.
///
/// ```swift
/// let delay = DelayNode(delayTime: 0.375, feedback: 40, lowPassCutoff: 6_000, wetDryMix: 30)
/// ```
public final class DelayNode: AudioNode, @unchecked Sendable {
    /// The longest delay, in seconds.
    public static let maximumDelayTime = 2.0

    /// The delay, seconds, 0 … 2.
    public var delayTime: Double {
        get { delaySetting.value }
        set { delaySetting.set(newValue) }
    }
    /// How much of each echo comes back, percent, −100 … 100 (negative: inverted).
    public var feedback: Double {
        get { feedbackSetting.value }
        set { feedbackSetting.set(newValue) }
    }
    /// The cutoff of the low-pass filter in the loop, Hz, 10 and up (at or above the Nyquist
    /// frequency the filter is off).
    public var lowPassCutoff: Double {
        get { cutoffSetting.value }
        set { cutoffSetting.set(newValue) }
    }
    /// Percent of echoes in the output, 0 (the input only, bit for bit) … 100 (echoes only).
    public var wetDryMix: Double {
        get { mixSetting.value }
        set { mixSetting.set(newValue) }
    }

    /// The parameter table of the `delay` effect. `time` also takes a note value (`1/8`, dotted
    /// `1/8.`, triplet `1/8t`) at `tempo` beats per minute (on `render` and `play`, the song's
    /// first tempo unless `tempo` is given).
    public static let parameters: [EffectParameter] = [
        EffectParameter(
            "time", "delay time, or a note value (1/4, 1/8., 1/16t) at the tempo", range: 0...maximumDelayTime,
            default: 0.5, unit: .seconds),
        EffectParameter(
            "feedback", "echo fed back (negative: inverted)", range: -100...100, default: 30, unit: .percent),
        EffectParameter(
            "lowpass", "low-pass cutoff in the loop (at Nyquist or above: off)", range: 10...96_000, default: 15_000,
            unit: .hertz),
        EffectParameter("mix", "wet/dry mix", range: 0...100, default: 50, unit: .percent),
        EffectParameter(
            "tempo", "beats per minute for a note value (default: the song's, else 120)", range: 20...400,
            default: 120, unit: .number),
    ]

    private let delaySetting = AtomicParameter(0.5, "time", in: parameters)
    private let feedbackSetting = AtomicParameter(30, "feedback", in: parameters)
    private let cutoffSetting = AtomicParameter(15_000, "lowpass", in: parameters)
    private let mixSetting = AtomicParameter(50, "mix", in: parameters)

    // Render state, allocated in prepare.
    private var sampleRate = 48_000.0
    private var line = FractionalDelayLine(channelCount: 0, maximumDelay: 0)
    /// Each frame's delay in samples while the delay glides.
    private var delays = RealTimeBuffer<Double>(capacity: 1)
    /// The two smoothers the delay (in samples) goes through.
    private var smoothed = (0.0, 0.0)
    private var feedbackNow: Float = 0
    private var mixNow: Float = 0
    private var cutoffNow = 0.0
    /// The loop filter's coefficients for `designedCutoff` (nil: off).
    private var lowPass: (b0: Float, a1: Float)?
    private var designedCutoff = -1.0

    /// A delay named "delay": `delayTime` seconds (0 … 2), `feedback` percent, the loop's low-pass at
    /// `lowPassCutoff` Hz and `wetDryMix` percent of echoes. (AVAudioUnitDelay's defaults are 1 s,
    /// 50 %, 15 kHz and 100 %; these suit an echo heard with its source.)
    public init(delayTime: Double = 0.5, feedback: Double = 30, lowPassCutoff: Double = 15_000, wetDryMix: Double = 50)
    {
        super.init(name: "delay")
        self.delayTime = delayTime
        self.feedback = feedback
        self.lowPassCutoff = lowPassCutoff
        self.wetDryMix = wetDryMix
    }

    public override var inputBusCount: Int { 1 }
    public override func outputChannelCount(inputChannelCounts: [Int]) -> Int { inputChannelCounts.first ?? 2 }
    public override func accepts(_ format: AudioFormat, onBus bus: Int) -> Bool {
        (1...8).contains(format.channelCount)
    }

    public override func prepare(format: AudioFormat, maximumFrameCount: Int) throws {
        sampleRate = format.sampleRate
        line = FractionalDelayLine(
            channelCount: format.channelCount, maximumDelay: Int((Self.maximumDelayTime * sampleRate).rounded(.up)) + 4,
            maximumFrameCount: maximumFrameCount)
        delays = RealTimeBuffer(capacity: max(1, maximumFrameCount))
        warmUp(maximumFrameCount: maximumFrameCount)
        reset()
    }

    /// Runs each of the line's paths once (steady longer and shorter than the block, gliding, with
    /// and without the low-pass, the stereo pair) on silence, then clears it: an unoptimized
    /// build makes a generic path's witness tables on its first run, allocating, and that run
    /// must not be the audio thread's (the allocation test's first glide found it so).
    private func warmUp(maximumFrameCount: Int) {
        let frames = max(1, min(maximumFrameCount, 64))
        let scratch = UnsafeMutablePointer<Float>.allocate(capacity: 4 * frames)
        scratch.initialize(repeating: 0, count: 4 * frames)
        defer { scratch.deallocate() }
        let (left, right, outLeft, outRight) = (scratch, scratch + frames, scratch + 2 * frames, scratch + 3 * frames)
        let longer = Double(frames + 8)
        for frame in 0..<frames { delays[frame] = longer }
        let plain = FractionalDelayLine.Ramps(feedback: 0, feedbackStep: 0, mix: 0, mixStep: 0, lowPass: nil)
        var filtered = plain
        filtered.lowPass = (b0: 0.5, a1: 0)
        for ramps in [plain, filtered] {
            for steady in [longer, 2.5] {
                for channel in 0..<line.channelCount {
                    line.process(
                        channel: channel, left, into: outLeft, count: frames, steady: steady, delays: nil, ramps: ramps)
                    line.process(
                        channel: channel, left, into: outLeft, count: frames, steady: steady, delays: delays.base,
                        ramps: ramps)
                }
            }
        }
        if line.channelCount == 2 {
            _ = line.processStereo(
                (left, right), into: (outLeft, outRight), count: frames, steady: longer, ramps: filtered)
        }
        line.clear()
    }

    /// Silences the lines and sets every parameter to its value at once (no glide).
    public override func reset() {
        line.clear()
        let delay = targetDelay()
        smoothed = (delay, delay)
        feedbackNow = Float(feedback / 100)
        mixNow = Float(wetDryMix / 100)
        cutoffNow = lowPassCutoff
        designedCutoff = -1
    }

    /// The delay asked for, in samples, within what the lines hold.
    private func targetDelay() -> Double {
        min(max(delayTime * sampleRate, 2), Double(line.maximumDelay))
    }

    public override func render(into output: AudioBuffer, inputs: RenderInputs, frameCount: Int, time: AudioTime) {
        guard let input = inputs[0], line.channelCount > 0 else {
            output.clear(frames: frameCount)
            return
        }
        let count = min(frameCount, delays.capacity)
        let ramps = nextRamps(count: count)
        let target = targetDelay()
        var gliding = false
        if smoothed.0 != target || smoothed.1 != target {
            gliding = true
            let k = 1 - exp(-1 / (0.020 * sampleRate))
            var (first, second) = smoothed
            for frame in 0..<count {
                first += k * (target - first)
                second += k * (first - second)
                delays[frame] = second
            }
            // Settled (within a millionth of a sample, hardly moving): exactly there from now on.
            if abs(second - target) < 1e-6 && abs(first - target) < 1e-6 { (first, second) = (target, target) }
            smoothed = (first, second)
        }
        let stereo =
            !gliding && output.channelCount == 2 && input.channelCount == 2
            && line.processStereo(
                (input.channel(0), input.channel(1)), into: (output.channel(0), output.channel(1)), count: count,
                steady: target, ramps: ramps)
        for channel in 0..<min(line.channelCount, output.channelCount) where !stereo {
            line.process(
                channel: channel, input.channel(min(channel, input.channelCount - 1)), into: output.channel(channel),
                count: count, steady: target, delays: gliding ? delays.base : nil, ramps: ramps)
        }
        line.advance(by: count)
        if count < frameCount {
            for channel in 0..<output.channelCount {
                (output.channel(channel) + count).update(repeating: 0, count: frameCount - count)
            }
        }
    }

    /// Feedback and mix ramps towards their targets (a full-scale change takes at least 20 ms), and
    /// the low-pass at the cutoff gliding towards its target.
    private func nextRamps(count: Int) -> FractionalDelayLine.Ramps {
        let most = Float(count) / Float(0.020 * sampleRate)
        let feedbackTarget = Float(feedback / 100)
        let mixTarget = Float(wetDryMix / 100)
        let feedbackEnd = feedbackNow + min(max(feedbackTarget - feedbackNow, -2 * most), 2 * most)
        let mixEnd = mixNow + min(max(mixTarget - mixNow, -most), most)
        var ramps = FractionalDelayLine.Ramps(
            feedback: feedbackNow, feedbackStep: (feedbackEnd - feedbackNow) / Float(count), mix: mixNow,
            mixStep: (mixEnd - mixNow) / Float(count), lowPass: nil)
        feedbackNow = feedbackEnd
        mixNow = mixEnd
        // The cutoff glides geometrically, at most 20 ms to its target; off at or above Nyquist.
        let nyquist = sampleRate / 2
        let cutoffTarget = lowPassCutoff
        cutoffNow = glide(cutoffNow, to: cutoffTarget, frames: count, sampleRate: sampleRate)
        if cutoffTarget >= nyquist && cutoffNow >= 0.45 * sampleRate { cutoffNow = cutoffTarget }
        // The coefficients only when the cutoff has moved (a steady quantum computes nothing).
        if cutoffNow != designedCutoff {
            designedCutoff = cutoffNow
            let k = tan(Double.pi * cutoffNow / sampleRate)
            lowPass = cutoffNow < nyquist ? (Float(k / (1 + k)), Float((k - 1) / (k + 1))) : nil
        }
        ramps.lowPass = lowPass
        return ramps
    }

    /// Seconds until the echoes of a sound fade below −90 dB (capped at a minute with feedback
    /// near 100 %).
    public var tailSeconds: Double {
        let gain = abs(feedback / 100)
        let repeats = gain < 1e-6 ? 1 : min(60 / max(delayTime, 1e-3), 1 + log(pow(10, -90 / 20)) / log(gain))
        return min(60, max(delayTime, 0) * repeats)
    }
}
