import AudioGraph
import CSoundTouch
import Synchronization

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
/// that much queued as the pitch moves.
///
/// WSOLA alone repeats the segments that hold attacks when it slows down and skips them when it
/// speeds up. As `TimePitch.process` does offline, the node cuts its input at attacks
/// (`OnsetDetector`, which needs the input held back 6 ms more): SoundTouch plays out the piece
/// before the attack (pushed out with silence), cut or padded to exactly its length at the
/// rate, with a millisecond's fade, and starts afresh on the attack, so every attack comes out
/// once, where it belongs. A change that would make SoundTouch play out far more than the node
/// queues (a rate divided by a hundred at once) restarts it instead: a gap of its latency.
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
    /// The input, interleaved stereo, in a ring of `historyFrames`: fed to SoundTouch
    /// `detector.lag` frames late, so that a piece ends where an attack is found.
    private var history = RealTimeBuffer<Float>(capacity: 2)
    private var historyFrames = 1
    private var detector = OnsetDetector(sampleRate: 44_100)
    /// Input frames fed to SoundTouch.
    private var fed = 0
    /// The current piece's length in SoundTouch's output at the rate asked (its input frames
    /// over the tempo without the queue's nudge), what SoundTouch gave of it, and that tempo
    /// this quantum.
    private var pieceLength = 0.0
    private var piecePulled = 0
    private var nominalTempo = 1.0
    /// The input frames SoundTouch takes before its first output after a fresh start, at the
    /// tempo in use (its `SETTING_INITIAL_LATENCY`): a piece's output comes no sooner.
    private let startingHold = Atomic<Int>(0)
    /// Silence that pushes a piece's last segments out of SoundTouch (its own flush allocates).
    private var silence = RealTimeBuffer<Float>(capacity: 2 * 128, repeating: 0)

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
    public var latency: Double {
        let flowing = Double(threshold) / min(1, pow(2, pitch / 1_200))
        let restarting = Double(startingHold.load(ordering: .relaxed) + detector.lag) / rate
        return max(flowing, restarting) / sampleRate
    }

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
        detector = OnsetDetector(sampleRate: sampleRate)
        historyFrames = input + detector.lag + 1
        history = RealTimeBuffer(capacity: 2 * historyFrames, repeating: 0)
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
        detector = OnsetDetector(sampleRate: sampleRate)
        fed = 0
        pieceLength = 0
        piecePulled = 0
    }

    public override func render(into output: AudioBuffer, inputs: RenderInputs, frameCount: Int, time: AudioTime) {
        guard let stretcher else { return output.clear(frames: frameCount) }
        var transposition = pow(2, pitch / 1_200)
        if hasRendered && transposition > transposer.rateNow {
            // Gliding up drains the queue faster: no faster than it lasts until SoundTouch's next
            // output (its input frames short of its starting hold, in output time), so that a
            // jump up (two octaves at once) does not run it dry; the glide takes longer instead.
            let pending = Double(soundtouch_numUnprocessedSamples(stretcher))
            let short = max(Double(frameCount) * plannedRate, Double(startingHold.load(ordering: .relaxed)) - pending)
            let lasting = Double(queue.count) / (short / plannedRate + Double(frameCount))
            transposition = max(transposer.rateNow, min(transposition, lasting))
        }
        // SoundTouch puts out what the transposer takes this quantum: its rate as it glides
        // (the mean of where it is and where it will be), nudged by at most 5 % towards the
        // queue's level (SoundTouch's segments do not come out exactly at its nominal tempo).
        let taken = transposer.meanRate(
            towards: transposition, frames: frameCount, sampleRate: sampleRate, glide: hasRendered)
        // The queue's level in output time (it drains `taken` frames per output frame): at
        // least what SoundTouch takes to start afresh on an attack, where it cuts the input at
        // attacks. Where that is more than half the queue (rates far below 0.5) it does not cut.
        let restarting =
            (Double(startingHold.load(ordering: .relaxed) + detector.lag) / plannedRate + Double(frameCount)) * taken
        let cutsAtAttacks = restarting <= Double(queue.capacity / 2)
        let target = max(Double(threshold) * max(1, taken), cutsAtAttacks ? restarting : 0)
        let level = isFlowing ? min(max((Double(queue.count) - target) / target, -1), 1) : 0
        let tempo = plannedRate / taken * (1 + Self.levelControl * level)
        if tempo != appliedTempo {
            soundtouch_setTempo(stretcher, Float(tempo))
            startingHold.store(Int(soundtouch_getSetting(stretcher, Self.initialLatency)), ordering: .relaxed)
            // The input SoundTouch holds comes out at the new tempo: slowed down far, it would be
            // more than the queue takes (and SoundTouch would grow its buffers, allocating).
            // Then it starts afresh: a gap of its latency.
            if Double(soundtouch_numUnprocessedSamples(stretcher)) / tempo > Double(queue.capacity / 4) {
                soundtouch_clear(stretcher)
                (pieceLength, piecePulled) = (0, 0)
                isFlowing = false
            }
            appliedTempo = tempo
        }
        nominalTempo = plannedRate / taken
        if let input = inputs[0], input.frameLength > 0 {
            take(input, stretcher, cuttingAtAttacks: cutsAtAttacks)
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
            piecePulled += queue.append(interleaved: interleaved.base, frames: received)
        }
    }

    /// Puts the quantum's input in the ring and looks for attacks in it: at each, what comes
    /// before goes to SoundTouch and the piece ends; then the input up to `detector.lag` frames
    /// ago goes to SoundTouch.
    private func take(_ input: AudioBuffer, _ stretcher: UnsafeMutableRawPointer, cuttingAtAttacks: Bool) {
        let count = min(input.frameLength, historyFrames - detector.lag - 1)
        let left = input.channel(0)
        let right = input.channel(min(1, input.channelCount - 1))
        for frame in 0..<count {
            let slot = 2 * (detector.frame % historyFrames)
            history[slot] = left[frame]
            history[slot + 1] = right[frame]
            if let onset = detector.add(0.5 * (Double(left[frame]) + Double(right[frame]))), onset > fed,
                cuttingAtAttacks
            {
                feed(stretcher, upTo: onset)
                endPiece(stretcher)
            }
        }
        feed(stretcher, upTo: detector.frame - detector.lag)
    }

    /// Feeds SoundTouch the input from `fed` up to frame `end` (from the ring, in at most two
    /// stretches), counting it into the piece's length.
    private func feed(_ stretcher: UnsafeMutableRawPointer, upTo end: Int) {
        while fed < end {
            let start = fed % historyFrames
            let count = min(end - fed, historyFrames - start)
            soundtouch_putSamples(stretcher, history.base + 2 * start, UInt32(count))
            pieceLength += Double(count) / nominalTempo
            fed += count
            collect(stretcher)
        }
    }

    /// Ends the piece at an attack: SoundTouch's last segments pushed out with silence (at most
    /// 200 blocks of 128 frames, as its own flush), the piece cut or padded to its length in the
    /// queue and faded out over a millisecond, and SoundTouch cleared for the next piece.
    private func endPiece(_ stretcher: UnsafeMutableRawPointer) {
        let length = Int(pieceLength.rounded())
        var pushes = 0
        while piecePulled + Int(soundtouch_numSamples(stretcher)) < length && pushes < 200
            && queue.count < queue.capacity
        {
            soundtouch_putSamples(stretcher, silence.base, 128)
            collect(stretcher)
            pushes += 1
        }
        collect(stretcher)
        if piecePulled > length {
            queue.dropLast(piecePulled - length)
        } else {
            queue.appendSilence(length - piecePulled)
        }
        queue.fadeOutTail(detector.lead)
        soundtouch_clear(stretcher)
        (pieceLength, piecePulled) = (0, 0)
    }
}
