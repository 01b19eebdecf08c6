import AudioFiles
import AudioGraph

#if canImport(Glibc)
    import Glibc
#endif

/// Plays its input faster or slower with the pitch following, as a tape or a turntable does (in
/// the spirit of AVAudioUnitVarispeed): at `rate` 1.5 the input runs one and a half times as
/// fast and sounds a fifth higher. The engine renders everything upstream at the input's pace
/// (`RateConvertingNode`): 1.5 quanta of input for each quantum out.
///
/// ```swift
/// let varispeed = VarispeedNode()
/// try engine.attach(varispeed)
/// try engine.connect(player, to: varispeed)
/// try engine.connect(varispeed, to: engine.mainMixerNode)
/// varispeed.rate = 1.5    // or varispeed.cents = 700
/// ```
///
/// The conversion is libsamplerate's medium-quality sinc (97 dB signal-to-noise), as the
/// audio-file player's `rate` uses; rate changes glide (a factor of 16 per 100 ms at most), so
/// they do not click. The output is stereo (a mono input on both channels) and runs about
/// 400 input frames behind (the converter's filter and what the node keeps ahead of it).
/// Nothing is allocated on the render thread.
public final class VarispeedNode: RateConvertingNode, @unchecked Sendable {
    /// The rates the node plays at: a quarter to four times the input's speed.
    public static let rates = 0.25...4.0

    private let rateSetting = ClampedSetting(1, in: VarispeedNode.rates)
    private var resampler = VarispeedResampler(maximumFrameCount: 0)
    /// Input waiting for the converter.
    private var queue = StereoQueue(capacity: 0)
    private var sampleRate = 44_100.0
    private var hasRendered = false

    /// A varispeed named `name` at rate 1.
    public override init(name: String = "varispeed") { super.init(name: name) }

    /// The playback rate, 0.25…4 (clamped; NaN is ignored): 2 plays twice as fast, an octave up.
    /// Any thread; the render thread glides to it.
    public var rate: Double {
        get { rateSetting.value }
        set { rateSetting.set(newValue) }
    }

    /// The rate as a pitch change in cents (−2400…2400): 1200 is an octave up, twice as fast.
    public var cents: Double {
        get { 1_200 * log2(rate) }
        set { rate = pow(2, newValue / 1_200) }
    }

    public override func outputChannelCount(inputChannelCounts: [Int]) -> Int { 2 }

    /// The input a quantum needs at the fastest rate, plus the queue the first quantum fills.
    public override func maximumInputFrameCount(forOutputFrames outputFrames: Int) -> Int {
        Int((Double(outputFrames) * Self.rates.upperBound).rounded(.up)) + Self.margin
    }

    public override func inputFrameCount(forOutputFrames outputFrames: Int) -> Int {
        // Exactly the input this quantum plays (the rate moves linearly from the last quantum's
        // to this one's, as libsamplerate moves it), its fractions carried: the input's timeline
        // maps linearly onto the output's, so a sampler upstream, scaling its event offsets by
        // the frames it renders, sounds each note when it is due. The first quantum also fills
        // the queue the converter reads ahead from, a chunk at a time.
        let target = rate
        let pace = resampler.meanRate(towards: target, frames: outputFrames, sampleRate: sampleRate, glide: hasRendered)
        let exact = carry + Double(outputFrames) * pace
        var count = Int(exact.rounded(.down))
        carry = exact - Double(count)
        if !hasRendered { count += max(0, Self.margin - queue.count) }
        plannedRate = target
        return count
    }

    /// Input kept ahead of the converter: one of its reads, and room for what its filter holds.
    private static let margin = VarispeedResampler.chunk + 128
    /// The fraction of an input frame the last quanta asked for beyond whole frames.
    private var carry = 0.0
    /// The rate `inputFrameCount` planned the quantum for (the one `render` glides to).
    private var plannedRate = 1.0

    public override func prepare(format: AudioFormat, maximumFrameCount: Int) throws {
        resampler = VarispeedResampler(maximumFrameCount: maximumFrameCount)
        let capacity = maximumInputFrameCount(forOutputFrames: maximumFrameCount) + Self.margin
        queue = StereoQueue(capacity: capacity)
        sampleRate = format.sampleRate
        reset()
    }

    public override func reset() {
        resampler.reset()
        queue.clear()
        carry = 0
        hasRendered = false
    }

    public override func render(into output: AudioBuffer, inputs: RenderInputs, frameCount: Int, time: AudioTime) {
        if let input = inputs[0] { queue.append(input) }
        resampler.render(
            into: output.channel(0), output.channel(1), count: frameCount, rate: plannedRate, sampleRate: sampleRate,
            glide: hasRendered
        ) { left, right, frames, _ in queue.read(into: left, right, frames: frames) }
        hasRendered = true
    }
}
