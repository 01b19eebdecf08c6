import AudioFiles
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
/// glides between pitches. The converter runs as SoundTouch's segments come out, so what waits
/// for the output is already in output time and fills at the input's pace whatever the pitch.
/// SoundTouch puts out nothing until it holds a batch of input, and then a batch at once: the
/// node holds that much back (`latency`: about 0.13 s at rate 1), and nudges SoundTouch's tempo
/// by up to 5 % to keep holding it.
///
/// WSOLA alone repeats the segments that hold attacks when it slows down and skips them when it
/// speeds up. As `TimePitch.process` does offline, the node cuts its input at attacks
/// (`OnsetDetector`, for which the input waits 6 ms more): SoundTouch plays out the piece before
/// the attack (pushed out with the piece's last 20 ms played back and forth), cut or padded to
/// exactly its length at the rate and faded over a millisecond, and starts afresh on the attack,
/// so every attack comes out once, where it belongs (a click train's within 3 ms of its place
/// from rate 0.25 to 4 in the tests). What SoundTouch held of the piece bridges its fresh start.
/// Where that would be more than half a second of output (rates below about 0.2), or SoundTouch's
/// starting batch more than a quarter second of input (the rate over the transposition above
/// about 5), it does not cut, and the attacks are stretched with the rest. A change that would
/// make SoundTouch play out far more than the node queues (a rate divided by a hundred at once)
/// restarts it instead: a gap of its latency.
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
    /// The output waiting to be played, in output time (transposed).
    private var queue = StereoQueue(capacity: 0)
    private var isFlowing = false
    private var sampleRate = 44_100.0
    private var carry = 0.0
    private var plannedRate = 1.0
    private var appliedTempo = 0.0
    /// Whether the transposer has converted anything since the last reset (then it glides).
    private var hasConverted = false
    /// Output frames rendered silent before the output began to flow, since the last start.
    private var silentFrames = 0
    /// What the node keeps held once its output flows, after each quantum, in output frames: what
    /// it held after its first, raised when settings need more (it does not come down again, so
    /// the latency does not move back and forth with the pitch).
    private var target = 0.0
    /// The latency beyond what the node holds, in frames, from when its output began to flow.
    private var startExcess = 0
    /// The latency while the output flows, in frames (0 before).
    private let flowingLatency = Atomic<Int>(0)
    /// The input frames SoundTouch takes before it puts out a batch, at the tempo in use (its
    /// `SETTING_INITIAL_LATENCY`).
    private let batchInput = Atomic<Int>(0)
    /// How far back an attack lies when it is found (the input waits that long for SoundTouch).
    private var attackLag = 0
    /// The input, interleaved stereo, in a ring of `historyFrames`: fed to SoundTouch
    /// `detector.lag` frames late, so that a piece ends where an attack is found.
    private var history = RealTimeBuffer<Float>(capacity: 2)
    private var historyFrames = 1
    private var detector = OnsetDetector(sampleRate: 44_100)
    /// Input frames fed to SoundTouch.
    private var fed = 0
    /// The output frames the input fed to SoundTouch comes to (each frame at the output pace it
    /// went in at), and the output frames the transposer has put out, since the last start: a
    /// piece's end makes the one equal to the other.
    private var scheduled = 0.0
    private var produced = 0
    /// What SoundTouch has given of the current piece, in its own frames.
    private var pieceReceived = 0
    /// Output frames per input frame at the tempo in use: 1 / rate, with the level control's nudge.
    private var outputPace = 1.0
    /// Where the current piece began, in input frames.
    private var pieceStart = 0
    /// A block of frames that pushes a piece's last segments out of SoundTouch (its own flush
    /// allocates), and silence.
    private var tail = RealTimeBuffer<Float>(capacity: 2 * PieceTail.blockFrames, repeating: 0)
    private var silence = RealTimeBuffer<Float>(capacity: 2 * PieceTail.blockFrames, repeating: 0)
    /// The most input a piece's end plays back and forth, in frames (`PieceTail`'s 20 ms).
    private var mirrorFrames = 1
    /// The current piece's fade, in SoundTouch's frames: a millisecond of output.
    private var fadeFrames = 1
    private let cuts = Atomic<Int>(0)

    /// How many times the node has cut its input at an attack since it was made.
    package var attacksCut: Int { cuts.load(ordering: .relaxed) }

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

    /// The most the tempo is nudged by to bring what the node holds back to its level.
    static let levelControl = 0.05

    /// What the node holds before its output flows, in output frames, at transposition `p` and
    /// `rate`, and keeps held after: the most SoundTouch holds without putting anything out (its
    /// starting batch) and the input waiting for the attack finder, both at the input's pace,
    /// and 30 ms (divided by `p` when transposing down) and two of the transposer's chunks more
    /// that always wait in the queue.
    /// SoundTouch's output comes in batches, and a fresh start on an attack puts out nothing for
    /// a whole batch; what it held of the piece before bridges that, so the queue never holds
    /// less than those 30 ms.
    private func threshold(transposition p: Double, rate: Double) -> Int {
        let stretching = Double(batchInput.load(ordering: .relaxed) + attackLag) / rate
        return Int(stretching + 0.03 * sampleRate / min(1, p)) + 2 * VarispeedResampler.chunk
    }

    /// Whether the node cuts its input at attacks at `rate`: if what SoundTouch holds, at most
    /// a starting batch and the attack finder's lag, comes to no more than `largestFlush` frames
    /// of output (not at rates below about 0.2), and its starting batch is at most a quarter
    /// second of input (not where the rate over the transposition is above about 5: a piece
    /// shorter than that batch would have to be pushed out with as much again, on one quantum).
    private func cutsAtAttacks(rate: Double) -> Bool {
        let batch = batchInput.load(ordering: .relaxed)
        return Double(batch + attackLag) / rate <= Double(largestFlush) && Double(batch) <= 0.25 * sampleRate
    }

    /// How long the input takes to come out, in seconds: what the node holds (`threshold`:
    /// SoundTouch's starting batch and the 6 ms the attack finder looks ahead, at the input's
    /// pace, and about 40 ms of output) and, once the output flows, the rest of the quantum it
    /// started on. Settings that need the node to hold more (a slower rate, a pitch further
    /// down) raise it, the output easing to the new latency over a few tenths of a second; it
    /// does not come down again until the output runs dry (a fifth down at rate 1: about 10 ms
    /// more). Before the output flows, and after it runs dry, the estimate at the settings.
    public var latency: Double {
        let flowing = flowingLatency.load(ordering: .relaxed)
        if flowing > 0 { return Double(flowing) / sampleRate }
        return Double(threshold(transposition: pow(2, pitch / 1_200), rate: rate)) / sampleRate
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

    /// The most output a piece's end may push into the queue at once (half a second): beyond it
    /// (rates below about 0.2) the node does not cut at attacks.
    private var largestFlush: Int { Int(0.5 * sampleRate) }

    public override func prepare(format: AudioFormat, maximumFrameCount: Int) throws {
        if let stretcher { soundtouch_destroyInstance(stretcher) }
        stretcher = soundtouch_createInstance()
        guard let stretcher else {
            throw AudioFileError.readFailed(path: name, reason: "SoundTouch could not make an instance (out of memory)")
        }
        sampleRate = format.sampleRate
        soundtouch_setChannels(stretcher, 2)
        soundtouch_setSampleRate(stretcher, UInt32(sampleRate.rounded()))
        // The transposer converts a chunk at a time; two octaves down makes four times as much.
        transposer = VarispeedResampler(maximumFrameCount: 4 * VarispeedResampler.chunk + 64)
        let input = maximumInputFrameCount(forOutputFrames: maximumFrameCount)
        // What SoundTouch may hand back at once: a quantum's worth at the lowest tempo, and its
        // segments (at most a quarter second each at any tempo).
        let output = 4 * maximumFrameCount + Int(sampleRate)
        interleaved = RealTimeBuffer(capacity: 2 * max(input, output), repeating: 0)
        detector = OnsetDetector(sampleRate: sampleRate)
        attackLag = detector.lag
        // What waits in the queue at two octaves down, a piece's end, and SoundTouch's largest
        // batch transposed two octaves down.
        queue = StereoQueue(capacity: Int(0.2 * sampleRate) + 2 * largestFlush + 4 * output)
        mirrorFrames = PieceTail(sampleRate: sampleRate, pieceFrames: .max).span
        historyFrames = input + detector.lag + mirrorFrames + 1
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
            let segment = Int(soundtouch_getSetting(stretcher, TimePitch.nominalInputSequenceSetting))
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

    public override func reset() {
        if let stretcher { soundtouch_clear(stretcher) }
        transposer.reset()
        queue.clear()
        carry = 0
        appliedTempo = 0
        isFlowing = false
        hasConverted = false
        silentFrames = 0
        flowingLatency.store(0, ordering: .relaxed)
        detector = OnsetDetector(sampleRate: sampleRate)
        fed = 0
        (scheduled, produced, pieceReceived, pieceStart) = (0, 0, 0, 0)
    }

    public override func render(into output: AudioBuffer, inputs: RenderInputs, frameCount: Int, time: AudioTime) {
        guard let stretcher else { return output.clear(frames: frameCount) }
        let transposition = pow(2, pitch / 1_200)
        // What the node must hold before a quantum is played, and after (settings that need more
        // raise the target).
        let needed = Double(threshold(transposition: transposition, rate: plannedRate))
        if isFlowing { target = max(target, needed - Double(frameCount)) }
        // SoundTouch's output is transposed as it comes, at the transposer's rate as it glides
        // (the mean of where it is and where it will be); its tempo is nudged by at most 5 %
        // to keep what the node holds at `target` (a glide's mean rate is not exactly the one the
        // transposer runs at, and settings change what it should hold). What it holds is
        // measured across the whole node, not in the queue alone, which rises and falls with
        // SoundTouch's batches.
        let converting = transposer.meanRate(
            towards: transposition, frames: frameCount, sampleRate: sampleRate, glide: hasConverted)
        let level = isFlowing ? min(max((pipeline() - target) / needed, -1), 1) : 0
        let tempo = plannedRate / converting * (1 + Self.levelControl * level)
        if tempo != appliedTempo {
            soundtouch_setTempo(stretcher, Float(tempo))
            batchInput.store(Int(soundtouch_getSetting(stretcher, TimePitch.initialLatencySetting)), ordering: .relaxed)
            // The input SoundTouch holds comes out at the new tempo: slowed down far, it would be
            // more than the queue takes (and SoundTouch would grow its buffers, allocating).
            // Then it starts afresh: a gap of its latency.
            let pending = Double(soundtouch_numUnprocessedSamples(stretcher)) / tempo / converting
            if pending > Double(queue.capacity / 4) { restart(stretcher) }
            appliedTempo = tempo
            outputPace = 1 / (tempo * converting)
        }
        if let input = inputs[0], input.frameLength > 0 {
            take(input, stretcher, transposition: transposition, cutting: cutsAtAttacks(rate: plannedRate))
        }
        collect(stretcher, transposition: transposition)
        // It flows once it holds `needed` (the input it holds grows by a quantum's worth each
        // quantum): from the first input since it last ran dry, that many frames later.
        let holding = pipeline()
        let starts = !isFlowing && holding >= needed && queue.count >= frameCount
        if starts { isFlowing = true }
        if isFlowing {
            queue.read(into: output.channel(0), output.channel(1), frames: frameCount)
        } else {
            output.clear(frames: frameCount)
            if holding > 0 { silentFrames += frameCount }
        }
        if starts {
            // What it holds after its first quantum is what it keeps holding: the output's
            // timeline stays where it started (a target off by a quantum would move it that far).
            target = pipeline()
            startExcess = silentFrames - Int(target)
        }
        if isFlowing { flowingLatency.store(Int(target) + startExcess, ordering: .relaxed) }
        // Run dry (the input stopped coming, or a restart): fill up to the latency again.
        if queue.count == 0 && isFlowing {
            isFlowing = false
            silentFrames = 0
            flowingLatency.store(0, ordering: .relaxed)
        }
    }

    /// What the node holds, in output frames: the queue, what SoundTouch and the transposer owe
    /// (what the input fed comes to, less what came out: every piece comes out exactly that
    /// long), and the input waiting for the attack finder, at the rate.
    private func pipeline() -> Double {
        Double(queue.count) + scheduled - Double(produced) + Double(detector.frame - fed) / plannedRate
    }

    /// Starts SoundTouch afresh, its input dropped: the output plays what is queued, runs dry
    /// and fills up to the latency again.
    private func restart(_ stretcher: UnsafeMutableRawPointer) {
        soundtouch_clear(stretcher)
        (scheduled, produced, pieceReceived, pieceStart) = (0, 0, 0, fed)
    }

    /// Moves what SoundTouch has ready through the transposer into the queue, as much as it
    /// takes; with `limit`, no more than makes the piece that long, faded over its last
    /// `fadeFrames` (a millisecond of output).
    private func collect(_ stretcher: UnsafeMutableRawPointer, transposition: Double, limit: Int? = nil) {
        let capacity = interleaved.capacity / 2
        while soundtouch_numSamples(stretcher) > 0 {
            // Room for what comes out of the transposer: up to four times as much.
            var room = min(capacity, (queue.capacity - queue.count) / 4)
            if let limit { room = min(room, limit - pieceReceived) }
            guard room > 0 else { return }
            let received = Int(soundtouch_receiveSamples(stretcher, interleaved.base, UInt32(room)))
            guard received > 0 else { return }
            if let limit { fadeOut(received, before: limit) }
            pieceReceived += received
            transpose(interleaved.base, frames: received, transposition: transposition)
        }
    }

    /// Fades out the `frames` frames in `interleaved` that continue the piece over its last
    /// `fadeFrames` before frame `end` of the piece.
    private func fadeOut(_ frames: Int, before end: Int) {
        let fade = fadeFrames
        for frame in min(frames, max(0, end - fade - pieceReceived))..<frames {
            let gain = TimePitch.fadeGain(framesLeft: end - pieceReceived - frame, over: fade)
            interleaved[2 * frame] *= gain
            interleaved[2 * frame + 1] *= gain
        }
    }

    /// Transposes `frames` interleaved frames into the queue.
    private func transpose(_ samples: UnsafePointer<Float>, frames: Int, transposition: Double) {
        transposer.convert(
            samples, frames: frames, rate: transposition, sampleRate: sampleRate, glide: hasConverted
        ) { converted, count in produced += queue.append(interleaved: converted, frames: count) }
        hasConverted = true
    }

    /// Puts the quantum's input in the ring and looks for attacks in it: at each, what comes
    /// before goes to SoundTouch and the piece ends; then the input up to `detector.lag` frames
    /// ago goes to SoundTouch.
    private func take(
        _ input: AudioBuffer, _ stretcher: UnsafeMutableRawPointer, transposition: Double, cutting: Bool
    ) {
        let count = min(input.frameLength, historyFrames - detector.lag - mirrorFrames - 1)
        let left = input.channel(0)
        let right = input.channel(min(1, input.channelCount - 1))
        for frame in 0..<count {
            let slot = 2 * (detector.frame % historyFrames)
            history[slot] = left[frame]
            history[slot + 1] = right[frame]
            if let onset = detector.add(0.5 * (Double(left[frame]) + Double(right[frame]))), onset > fed, cutting {
                feed(stretcher, upTo: onset, transposition: transposition)
                endPiece(stretcher, transposition: transposition)
            }
        }
        feed(stretcher, upTo: detector.frame - detector.lag, transposition: transposition)
    }

    /// Feeds SoundTouch the input from `fed` up to frame `end` (from the ring, in at most two
    /// stretches), counting it into the piece's length.
    private func feed(_ stretcher: UnsafeMutableRawPointer, upTo end: Int, transposition: Double) {
        while fed < end {
            let start = fed % historyFrames
            let count = min(end - fed, historyFrames - start)
            soundtouch_putSamples(stretcher, history.base + 2 * start, UInt32(count))
            scheduled += Double(count) * outputPace
            fed += count
            collect(stretcher, transposition: transposition)
        }
    }

    /// Ends the piece at an attack: SoundTouch's last segments pushed out with a `PieceTail`
    /// (for its starting batch at most, and a little more), cut or padded to the piece's length
    /// and faded out over a millisecond of output, and SoundTouch cleared for the next piece.
    /// Where that would push more than `largestFlush` frames into the queue, or more than it
    /// has room for, the piece goes on instead.
    private func endPiece(_ stretcher: UnsafeMutableRawPointer, transposition: Double) {
        // The piece's length in SoundTouch's output: what the output lacks, less what the
        // transposer owes, at the transposition in use (before the transposer's first batch, the
        // one asked).
        let converting = hasConverted ? transposer.rateNow : VarispeedResampler.clamped(transposition)
        let rest = scheduled - Double(produced + transposer.owed)
        let length = pieceReceived + Int((rest * converting).rounded())
        guard rest <= Double(min(largestFlush, queue.capacity - queue.count - 4 * VarispeedResampler.chunk)) else {
            return
        }
        fadeFrames = max(1, Int((Double(detector.lead) * converting).rounded()))
        var piece = PieceTail(sampleRate: sampleRate, pieceFrames: min(mirrorFrames, fed - pieceStart))
        var pushes = batchInput.load(ordering: .relaxed) / PieceTail.blockFrames + 16
        while pieceReceived < length && pushes > 0 {
            if soundtouch_numSamples(stretcher) == 0 {
                piece.fill(tail.base, channels: 2) { back, channel in
                    history[2 * ((fed - 1 - back + historyFrames) % historyFrames) + channel]
                }
                soundtouch_putSamples(stretcher, tail.base, UInt32(PieceTail.blockFrames))
                pushes -= 1
            }
            let before = pieceReceived
            collect(stretcher, transposition: transposition, limit: length)
            if pieceReceived == before && soundtouch_numSamples(stretcher) > 0 { break }  // no room left
        }
        // Short of its length (SoundTouch gave less, not seen in the tests): silence to the end.
        while pieceReceived < length {
            let frames = min(PieceTail.blockFrames, length - pieceReceived)
            pieceReceived += frames
            transpose(silence.base, frames: frames, transposition: transposition)
        }
        soundtouch_clear(stretcher)
        (pieceReceived, pieceStart) = (0, fed)
        cuts.add(1, ordering: .relaxed)
    }
}
