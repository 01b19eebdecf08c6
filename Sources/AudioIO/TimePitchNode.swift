import AudioGraph
import CSoundTouch

#if canImport(Glibc)
    import Glibc
#endif

/// Changes the speed and the pitch of its input apart, in the graph (in the spirit of
/// AVAudioUnitTimePitch): `rate` 1/32…32 sets how fast the input plays, `pitch` −2400…2400 cents
/// how far it is transposed. The engine renders everything upstream at the input's pace
/// (`RateConvertingNode`): `rate` quanta of input for each quantum out.
///
/// ```swift
/// let timePitch = TimePitchNode()
/// try engine.connect(player, to: timePitch)
/// try engine.connect(timePitch, to: engine.mainMixerNode)
/// timePitch.rate = 0.8     // slower, same pitch
/// timePitch.pitch = 300    // three semitones up, same speed
/// ```
///
/// Two stages: SoundTouch's tempo changer (WSOLA, LGPL-2.1, linked dynamically) stretches the
/// input by `rate / p` without touching its pitch, then a libsamplerate sinc converter plays that
/// `p` times as fast, which transposes it by `pitch` (p = 2^(pitch/1200)) and brings the duration to
/// 1 / `rate`. Both change on the render thread without allocating (SoundTouch's own transposer
/// rebuilds its filter, allocating, on every pitch change: it is not used), and the converter
/// glides between pitches. SoundTouch works in segments: the node holds back about 0.1 s
/// (`latency`) so that its output flows evenly, and nudges SoundTouch's tempo by up to 5 % to keep
/// that much queued as the pitch moves. Streaming, the attacks are stretched with the rest
/// (`TimePitch.process`, offline, also keeps them sharp). A change that would make SoundTouch play
/// out far more than the node queues (a rate divided by a hundred at once) restarts it instead:
/// a gap of its latency.
public final class TimePitchNode: RateConvertingNode, @unchecked Sendable {
    /// The rates accepted: 1/32…32.
    public static let rates = TimePitch.rates
    /// The pitch shifts accepted, in cents: −2400…2400.
    public static let pitches = TimePitch.pitches

    private let rateSetting = ClampedSetting(1, in: TimePitchNode.rates)
    private let pitchSetting = ClampedSetting(0, in: TimePitchNode.pitches)
    private var stretcher: UnsafeMutableRawPointer?
    private var transposer = VarispeedResampler(maximumFrameCount: 0)
    /// Interleaved frames to and from SoundTouch.
    private var interleaved = RealTimeBuffer<Float>(capacity: 2)
    /// SoundTouch's output waiting for the transposer.
    private var queue = StereoQueue(capacity: 0)
    /// Frames of SoundTouch's output held back before the output flows.
    private var threshold = 0
    private var isFlowing = false
    private var sampleRate = 44_100.0
    private var carry = 0.0
    private var plannedRate = 1.0
    private var appliedTempo = 0.0
    private var hasRendered = false
    /// The input frames SoundTouch takes before it puts out a batch, at the tempo in use (its
    /// `SETTING_INITIAL_LATENCY`).
    private var batchInput = 0

    /// A time-pitch unit named `name` at rate 1 and pitch 0.
    public override init(name: String = "time-pitch") { super.init(name: name) }

    deinit {
        if let stretcher { soundtouch_destroyInstance(stretcher) }
    }

    /// How fast the input plays, 1/32…32 (clamped; NaN is ignored): 2 plays it in half the time,
    /// at its pitch. Any thread; the next quantum takes it.
    public var rate: Double {
        get { rateSetting.value }
        set { rateSetting.set(newValue) }
    }

    /// The transposition in cents, −2400…2400 (clamped; NaN is ignored): 1200 is an octave up.
    /// Any thread; the render thread glides to it.
    public var pitch: Double {
        get { pitchSetting.value }
        set { pitchSetting.set(newValue) }
    }

    /// The most the tempo is nudged by to bring the queue back to its level.
    static let levelControl = 0.05

    /// How long the node holds its output back, in seconds, for SoundTouch's segments to flow
    /// evenly: 0.1 s, and longer when transposing down (0.1 s divided by the pitch ratio).
    public var latency: Double { Double(threshold) / sampleRate / min(1, pow(2, pitch / 1_200)) }

    public override func outputChannelCount(inputChannelCounts: [Int]) -> Int { 2 }

    public override func maximumInputFrameCount(forOutputFrames outputFrames: Int) -> Int {
        Int((Double(outputFrames) * Self.rates.upperBound).rounded(.up)) + 1
    }

    public override func inputFrameCount(forOutputFrames outputFrames: Int) -> Int {
        // The input this quantum plays at `rate`, its fractions carried: the input's timeline maps
        // linearly onto the output's (after the latency).
        plannedRate = rate
        let exact = carry + Double(outputFrames) * plannedRate
        let count = Int(exact.rounded(.down))
        carry = exact - Double(count)
        return count
    }

    public override func prepare(format: AudioFormat, maximumFrameCount: Int) throws {
        if let stretcher { soundtouch_destroyInstance(stretcher) }
        stretcher = soundtouch_createInstance()
        guard let stretcher else {
            throw AudioFileError.readFailed(path: name, reason: "SoundTouch could not make an instance (out of memory)")
        }
        sampleRate = format.sampleRate
        soundtouch_setChannels(stretcher, 2)
        soundtouch_setSampleRate(stretcher, UInt32(sampleRate.rounded()))
        transposer = VarispeedResampler(maximumFrameCount: maximumFrameCount)
        let input = maximumInputFrameCount(forOutputFrames: maximumFrameCount)
        // What SoundTouch may hand back at once: a quantum's worth at the highest pitch, and its
        // segments (at most a quarter second each at any tempo).
        let output = 4 * maximumFrameCount + Int(sampleRate)
        interleaved = RealTimeBuffer(capacity: 2 * max(input, output), repeating: 0)
        threshold = Int(0.1 * sampleRate) + VarispeedResampler.chunk
        queue = StereoQueue(capacity: 4 * threshold + 2 * output)
        warmUp(maximumFrameCount: maximumFrameCount)
        reset()
    }

    /// Grows SoundTouch's buffers to the sizes the render thread will need, before it uses them
    /// (SoundTouch grows them by allocating, and never shrinks them): at each extreme tempo, one
    /// block of three of its input segments and two quanta's input at once (its input buffer
    /// takes a block whole before it works through it); at tempo 1, one block as large as the
    /// queue (its output buffer). At tempo 128 (rate 32, two octaves down) a segment takes
    /// seconds of input.
    private func warmUp(maximumFrameCount: Int) {
        guard let stretcher else { return }
        let capacity = interleaved.capacity / 2
        var blocks: [(tempo: Double, frames: Int)] = []
        for tempo in [1.0 / 128, 128, 1] {
            soundtouch_setTempo(stretcher, Float(tempo))
            let segment = Int(soundtouch_getSetting(stretcher, Self.nominalInputSequence))
            let quantum = Int((Double(maximumFrameCount) * min(32, tempo * 4)).rounded(.up))
            blocks.append((tempo, 3 * segment + 2 * quantum))
        }
        blocks.append((1, queue.capacity))
        var silence = [Float](repeating: 0, count: 2 * (blocks.map(\.frames).max() ?? 1))
        for (tempo, frames) in blocks {
            soundtouch_setTempo(stretcher, Float(tempo))
            soundtouch_putSamples(stretcher, &silence, UInt32(frames))
            while soundtouch_numSamples(stretcher) > 0 {
                _ = soundtouch_receiveSamples(stretcher, interleaved.base, UInt32(capacity))
            }
            soundtouch_clear(stretcher)
        }
    }

    /// SoundTouch's `SETTING_NOMINAL_INPUT_SEQUENCE`: the input frames one segment takes.
    private static let nominalInputSequence: Int32 = 6
    /// SoundTouch's `SETTING_INITIAL_LATENCY`: the input frames it takes before its first output.
    private static let initialLatency: Int32 = 8

    public override func reset() {
        if let stretcher { soundtouch_clear(stretcher) }
        transposer.reset()
        queue.clear()
        carry = 0
        appliedTempo = 0
        isFlowing = false
        hasRendered = false
    }

    public override func render(into output: AudioBuffer, inputs: RenderInputs, frameCount: Int, time: AudioTime) {
        guard let stretcher else { return output.clear(frames: frameCount) }
        var transposition = pow(2, pitch / 1_200)
        if hasRendered && frameCount > 0 && transposition > transposer.rateNow {
            // Gliding up drains the queue faster: no faster than it lasts until SoundTouch's next
            // batch (the input it still lacks, in output time), so that a jump up (two octaves at
            // once) does not run it dry; the glide takes longer instead.
            let pending = Double(soundtouch_numUnprocessedSamples(stretcher))
            let short = max(Double(frameCount) * plannedRate, Double(batchInput) - pending)
            let lasting = Double(queue.count) / (short / plannedRate + Double(frameCount))
            if lasting.isFinite { transposition = max(transposer.rateNow, min(transposition, lasting)) }
        }
        // SoundTouch puts out what the transposer takes this quantum: its rate as it glides
        // (the mean of where it is and where it will be), nudged by at most 5 % towards the
        // queue's level (SoundTouch's segments do not come out exactly at its nominal tempo).
        let taken = transposer.meanRate(
            towards: transposition, frames: frameCount, sampleRate: sampleRate, glide: hasRendered)
        // The queue's level in output time (it drains `taken` frames per output frame).
        let target = Double(threshold) * max(1, taken)
        let level = isFlowing ? min(max((Double(queue.count) - target) / target, -1), 1) : 0
        let tempo = plannedRate / taken * (1 + Self.levelControl * level)
        if tempo != appliedTempo {
            soundtouch_setTempo(stretcher, Float(tempo))
            batchInput = Int(soundtouch_getSetting(stretcher, Self.initialLatency))
            // The input SoundTouch holds comes out at the new tempo: slowed down far, it would be
            // more than the queue takes (and SoundTouch would grow its buffers, allocating).
            // Then it starts afresh: a gap of its latency.
            if Double(soundtouch_numUnprocessedSamples(stretcher)) / tempo > Double(queue.capacity / 4) {
                soundtouch_clear(stretcher)
                isFlowing = false
            }
            appliedTempo = tempo
        }
        if let input = inputs[0], input.frameLength > 0 {
            let count = min(input.frameLength, interleaved.capacity / 2)
            let left = input.channel(0)
            let right = input.channel(min(1, input.channelCount - 1))
            for frame in 0..<count {
                interleaved[2 * frame] = left[frame]
                interleaved[2 * frame + 1] = right[frame]
            }
            soundtouch_putSamples(stretcher, interleaved.base, UInt32(count))
        }
        collect(stretcher)
        if !isFlowing && Double(queue.count) >= target { isFlowing = true }
        guard isFlowing else {
            output.clear(frames: frameCount)
            return
        }
        transposer.render(
            into: output.channel(0), output.channel(1), count: frameCount, rate: transposition,
            sampleRate: sampleRate, glide: hasRendered
        ) { left, right, frames, _ in queue.read(into: left, right, frames: frames) }
        hasRendered = true
        // Run dry (the input stopped coming, or a restart): fill up to the latency again.
        if queue.count == 0 { isFlowing = false }
    }

    /// Moves what SoundTouch has ready into the queue, as much as it takes.
    private func collect(_ stretcher: UnsafeMutableRawPointer) {
        let capacity = interleaved.capacity / 2
        while soundtouch_numSamples(stretcher) > 0 {
            let room = min(capacity, queue.capacity - queue.count)
            guard room > 0 else { return }
            let received = Int(soundtouch_receiveSamples(stretcher, interleaved.base, UInt32(room)))
            guard received > 0 else { return }
            queue.append(interleaved: interleaved.base, frames: received)
        }
    }
}
