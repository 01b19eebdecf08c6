import AudioGraph
import Dispatch
import Synchronization

/// A source node that plays audio clips (decoded files or samples you made), the counterpart of
/// AVAudioPlayerNode: clips are scheduled one after another, at sample times of the engine's
/// clock, or looping; the player starts, pauses and stops.
///
/// ```swift
/// let player = AudioFilePlayerNode()
/// try engine.attach(player)
/// try engine.connect(player, to: engine.mainMixerNode)
/// let loop = try await AudioClip(contentsOf: "drums.wav")
/// try player.schedule(loop, options: .loops)
/// player.play()
/// ```
///
/// **Timing.** A clip scheduled without a time follows the one before it without a gap (or starts
/// as soon as the player plays). A clip scheduled `at:` a time starts at that sample of the
/// engine's clock (`AudioTime.sampleTime`, the clock `lastRenderTime` reads), sample-accurately;
/// a time already past starts it at once. `play(at:)` starts the player itself at a sample time.
///
/// **Looping.** As with Apple's player, a clip scheduled with `.loops` repeats until the player
/// stops, or until a later clip is scheduled with `.interrupts` (which cuts in at once) or
/// `.interruptsAtLoop` (which waits for the end of the current pass). Other clips scheduled behind
/// a looping clip wait for it.
///
/// **Sample rates.** A clip at another rate than the engine is converted once, off the audio
/// thread, with libsamplerate (`conversionQuality`), when it is scheduled (or when the engine is
/// prepared, if it was scheduled before). Mono clips play on both channels.
///
/// **Threads.** Schedule, play, pause and stop from any thread; the audio thread reads an
/// immutable snapshot of the schedule, published lock-free, and allocates nothing. Completion
/// handlers run on a private serial queue once the clip's last frame has been rendered (or when
/// `stop()` or an interruption drops it).
public final class AudioFilePlayerNode: AudioNode, @unchecked Sendable {
    /// How a scheduled clip plays.
    public struct ScheduleOptions: OptionSet, Hashable, Sendable {
        public let rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }

        /// Repeats the clip until the player stops or a later clip interrupts it.
        public static let loops = ScheduleOptions(rawValue: 1)
        /// Drops everything scheduled before this clip (the playing clip too) and plays it at once.
        public static let interrupts = ScheduleOptions(rawValue: 2)
        /// Lets the playing (looping) clip finish its pass, then plays this clip.
        public static let interruptsAtLoop = ScheduleOptions(rawValue: 4)
    }

    /// The output gain, linear, 0 … 4 (changes ramp over one render quantum).
    public var volume: Float {
        get { volumeParameter.load() }
        set { volumeParameter.store(min(max(newValue, 0), 4)) }
    }

    /// The playback rate, 0.25 … 4 (clamped; NaN ignored), with the pitch following, as a tape or
    /// AVAudioUnitVarispeed: 2 plays twice as fast an octave higher, 0.5 half as fast an octave
    /// lower. A change glides without clicks, at most a factor of 16 per 100 ms (1 → 1.5 in
    /// 15 ms, 1 → 4 in 50 ms). From the first rate other than 1 until `stop()` the player reads
    /// through a libsamplerate converter (medium-quality sinc, allocated in `prepare`); then a clip
    /// scheduled `at:` a time starts within the converter's delay of it (a few milliseconds) rather
    /// than on its sample, and its completion runs when its last frame has gone into the converter.
    public var rate: Double {
        get { rateSetting.value }
        set { rateSetting.set(newValue) }
    }

    /// Whether the player is playing (between `play()` and `pause()` or `stop()`).
    public var isPlaying: Bool { playing.load(ordering: .relaxed) }

    /// The quality of sample-rate conversion for clips scheduled from now on.
    public var conversionQuality: AudioClip.ConversionQuality {
        get { control.withLock { $0.quality } }
        set { control.withLock { $0.quality = newValue } }
    }

    /// Clips scheduled and not yet finished (or dropped).
    public var scheduledClipCount: Int {
        pollCompletions()
        return control.withLock { $0.pending.count }
    }

    /// The engine time at the start of the last quantum the player rendered (nil before it first
    /// rendered): a base for scheduling `at:` a time.
    public var lastRenderTime: AudioTime? {
        let sample = lastRendered.load(ordering: .relaxed)
        let rate = Double(bitPattern: lastRenderedRate.load(ordering: .relaxed))
        return sample == Int64.min ? nil : AudioTime(sampleTime: sample, sampleRate: rate)
    }

    // MARK: State shared with the audio thread

    private let volumeParameter = RenderParameter(1)
    private let rateSetting = ClampedSetting(1, in: VarispeedResampler.rates)
    private var varispeed = VarispeedResampler(maximumFrameCount: 0)
    private var sampleRate = 48_000.0
    private let playing = Atomic<Bool>(false)
    /// The sample time `play(at:)` asked for (`Int64.min`: at once).
    private let playStart = Atomic<Int64>(Int64.min)
    /// The newest snapshot (an unretained pointer; `ControlState.snapshots` keeps it alive).
    private let published = Atomic<Int>(0)
    /// The generation of the snapshot the audio thread uses; older ones may be freed.
    private let adoptedGeneration = Atomic<Int>(0)
    /// Every clip with an identifier up to this one has finished playing.
    private let completedThrough = Atomic<Int>(0)
    private let lastRendered = Atomic<Int64>(Int64.min)
    private let lastRenderedRate = Atomic<UInt64>(0)

    // MARK: Audio-thread state

    private var snapshot: Unmanaged<Snapshot>?
    private var epoch = 0
    /// The identifier of the clip playing or next to play.
    private var currentID = 1
    private var position = 0
    private var index = 0
    private var gainNow: Float = 1

    // MARK: Control state

    private struct Scheduled {
        var id: Int
        var clip: AudioClip
        var frames: Range<Int>
        var startTime: Int64?
        var options: ScheduleOptions
        var completion: (@Sendable () -> Void)?
        /// The clip at the engine's rate, and `frames` mapped to it (nil until the rate is known).
        var converted: (clip: AudioClip, frames: Range<Int>)?
    }

    private struct ControlState {
        var nextID = 1
        var epoch = 0
        /// The first identifier of the current epoch (the clips scheduled since the last stop()).
        var epochFirstID = 1
        var generation = 0
        var pending: [Scheduled] = []
        var snapshots: [Snapshot] = []
        var sampleRate: Double?
        var quality = AudioClip.ConversionQuality.medium
        var timer: DispatchSourceTimer?
    }

    private let control = Mutex(ControlState())
    private let callbackQueue = DispatchQueue(label: "pianola.player.completions")

    /// Makes a stopped player with nothing scheduled, volume 1; `name` is for messages.
    public override init(name: String = "Player") {
        super.init(name: name)
    }

    deinit {
        control.withLock { $0.timer?.cancel() }
    }

    // MARK: Scheduling

    /// Schedules `clip` (or the part of it in `frames`, frames at the clip's own rate).
    ///
    /// - Parameters:
    ///   - time: the engine sample time to start at; nil: after the clip before it.
    ///   - completion: called on a private queue when the clip has played (or was dropped).
    /// - Throws: `AudioFileError` when `frames` is outside the clip or the clip cannot be
    ///   converted to the engine's rate.
    public func schedule(
        _ clip: AudioClip, frames: Range<Int>? = nil, at time: AudioTime? = nil, options: ScheduleOptions = [],
        completion: (@Sendable () -> Void)? = nil
    ) throws(AudioFileError) {
        let range = frames ?? 0..<clip.frameCount
        guard range.lowerBound >= 0, range.upperBound <= clip.frameCount else {
            throw .readFailed(
                path: clip.name, reason: "frames \(range) are outside the clip's 0..<\(clip.frameCount)")
        }
        let (rate, quality) = control.withLock { ($0.sampleRate, $0.quality) }
        var entry = Scheduled(
            id: 0, clip: clip, frames: range, startTime: time?.sampleTime, options: options, completion: completion)
        if let rate { entry.converted = try Self.convert(clip, range, to: rate, quality: quality) }
        control.withLock { state in
            entry.id = state.nextID
            state.nextID += 1
            state.pending.append(entry)
            publish(&state)
            startPolling(&state)
        }
    }

    /// Loads the file at `path` and schedules it; returns the clip (to schedule again).
    @discardableResult
    public func scheduleFile(
        _ path: String, at time: AudioTime? = nil, options: ScheduleOptions = [],
        completion: (@Sendable () -> Void)? = nil
    ) async throws(AudioFileError) -> AudioClip {
        let clip = try await AudioClip(contentsOf: path)
        try schedule(clip, at: time, options: options, completion: completion)
        return clip
    }

    /// Starts (or resumes) playing, at once or at an engine sample time.
    public func play(at time: AudioTime? = nil) {
        playStart.store(time?.sampleTime ?? Int64.min, ordering: .relaxed)
        playing.store(true, ordering: .releasing)
    }

    /// Stops playing and keeps the position: `play()` resumes where it paused.
    public func pause() {
        playing.store(false, ordering: .releasing)
    }

    /// Stops playing and drops every scheduled clip (their completions run).
    public func stop() {
        playing.store(false, ordering: .releasing)
        let dropped = control.withLock { state -> [Scheduled] in
            let dropped = state.pending
            state.pending = []
            state.epoch += 1
            state.epochFirstID = state.nextID
            publish(&state)
            return dropped
        }
        fire(dropped)
    }

    // MARK: AudioNode

    public override func prepare(format: AudioFormat, maximumFrameCount: Int) throws {
        varispeed = VarispeedResampler(maximumFrameCount: maximumFrameCount)
        sampleRate = format.sampleRate
        let (rate, quality, pending) = control.withLock { state in
            (format.sampleRate, state.quality, state.sampleRate == format.sampleRate ? [] : state.pending)
        }
        var converted: [Int: (clip: AudioClip, frames: Range<Int>)] = [:]
        for entry in pending {
            converted[entry.id] = try Self.convert(entry.clip, entry.frames, to: rate, quality: quality)
        }
        control.withLock { state in
            state.sampleRate = rate
            for index in state.pending.indices {
                if let conversion = converted[state.pending[index].id] { state.pending[index].converted = conversion }
            }
            publish(&state)
        }
    }

    public override func reset() {
        position = 0
        gainNow = volume
        varispeed.reset()
    }

    public override func render(into output: AudioBuffer, inputs: RenderInputs, frameCount: Int, time: AudioTime) {
        adoptPublishedSnapshot()
        lastRendered.store(time.sampleTime, ordering: .relaxed)
        lastRenderedRate.store(time.sampleRate.bitPattern, ordering: .relaxed)
        let left = output.channel(0)
        let right = output.channel(output.channelCount > 1 ? 1 : 0)
        guard playing.load(ordering: .acquiring), let snapshot else {
            output.clear(frames: frameCount)
            gainNow = volumeParameter.load()
            return
        }
        var frame = 0
        let start = playStart.load(ordering: .relaxed)
        if start > time.sampleTime {
            frame = Int(min(Int64(frameCount), start - time.sampleTime))
            silence(left, right, frame)
        }
        let entries = snapshot.takeUnretainedValue().entries.buffer
        let rate = self.rate
        if rate != 1 || varispeed.isActive {
            // Gliding from 1 only if something has sounded (a rate set before playing holds from the start).
            let glide = varispeed.isActive || position > 0
            varispeed.isActive = true
            let start = time.sampleTime + Int64(frame)
            varispeed.render(
                into: left + frame, right + frame, count: frameCount - frame, rate: rate, sampleRate: sampleRate,
                glide: glide
            ) { chunkLeft, chunkRight, count, produced in
                // What is read now sounds after the output written so far and what the converter
                // holds; the schedule's clock runs at the rate over the input.
                self.read(
                    entries, into: chunkLeft, chunkRight, count: count, now: start + Int64(produced),
                    rate: rate)
            }
        } else {
            read(
                entries, into: left + frame, right + frame, count: frameCount - frame,
                now: time.sampleTime + Int64(frame))
        }
        applyGain(left, right, frameCount)
    }

    /// Writes `count` frames of the schedule into `left`/`right` (silence where nothing plays),
    /// `now` being the engine time of the first: starts clips due, loops, finishes and completes them.
    /// Read for varispeed, the frames are input frames: `rate` of them to an engine frame.
    private func read(
        _ entries: UnsafeMutableBufferPointer<Entry>, into left: UnsafeMutablePointer<Float>,
        _ right: UnsafeMutablePointer<Float>, count frameCount: Int, now base: Int64, rate: Double = 1
    ) {
        var frame = 0
        while frame < frameCount {
            while index < entries.count && entries[index].id < currentID { index += 1 }
            guard index < entries.count else { break }
            let entry = entries[index]
            let now = base + Int64((Double(frame) / rate).rounded())
            if position == 0, entry.startTime > now {
                let due = rate == 1 ? entry.startTime - now : Int64((Double(entry.startTime - now) * rate).rounded(.up))
                let wait = Int(min(Int64(frameCount - frame), max(1, due)))
                silence(left + frame, right + frame, wait)
                frame += wait
                continue
            }
            let count = min(frameCount - frame, entry.frames - position)
            (left + frame).update(from: entry.left + position, count: count)
            if right != left { (right + frame).update(from: entry.right + position, count: count) }
            position += count
            frame += count
            if position >= entry.frames {
                position = 0
                if entry.options.contains(.loops) && entry.frames > 0 && !interruptedAtLoop(entries, after: index) {
                    continue
                }
                completedThrough.store(entry.id, ordering: .releasing)
                currentID = entry.id + 1
                index += 1
            }
        }
        silence(left + frame, right + frame, frameCount - frame)
    }

    // MARK: Audio-thread helpers

    @inline(__always)
    private func silence(_ left: UnsafeMutablePointer<Float>, _ right: UnsafeMutablePointer<Float>, _ count: Int) {
        guard count > 0 else { return }
        left.update(repeating: 0, count: count)
        if right != left { right.update(repeating: 0, count: count) }
    }

    private func applyGain(_ left: UnsafeMutablePointer<Float>, _ right: UnsafeMutablePointer<Float>, _ count: Int) {
        let target = volumeParameter.load()
        if target == 1 && gainNow == 1 { return }
        let step = (target - gainNow) / Float(max(count, 1))
        for frame in 0..<count {
            let gain = gainNow + step * Float(frame + 1)
            left[frame] *= gain
            if right != left { right[frame] *= gain }
        }
        gainNow = target
    }

    private func interruptedAtLoop(_ entries: UnsafeMutableBufferPointer<Entry>, after index: Int) -> Bool {
        var next = index + 1
        while next < entries.count {
            if !entries[next].options.intersection([.interruptsAtLoop, .interrupts]).isEmpty { return true }
            next += 1
        }
        return false
    }

    private func adoptPublishedSnapshot() {
        let pointer = published.load(ordering: .acquiring)
        guard pointer != 0 else { return }
        if let snapshot, Int(bitPattern: snapshot.toOpaque()) == pointer { return }
        let next = Unmanaged<Snapshot>.fromOpaque(UnsafeRawPointer(bitPattern: pointer)!)
        let value = next.takeUnretainedValue()
        if value.epoch != epoch {
            // stop(): everything before is gone; start afresh with the clips scheduled since.
            epoch = value.epoch
            position = 0
            currentID = value.firstID
            varispeed.reset()
        }
        // The newest clip that interrupts, if it is after the one playing, cuts in now.
        var cut = value.entries.capacity - 1
        while cut >= 0 && !value.entries[cut].options.contains(.interrupts) { cut -= 1 }
        if cut >= 0, value.entries[cut].id > currentID {
            completedThrough.store(value.entries[cut].id - 1, ordering: .releasing)
            currentID = value.entries[cut].id
            position = 0
            varispeed.dropBuffered()
        }
        index = 0
        snapshot = next
        adoptedGeneration.store(value.generation, ordering: .releasing)
    }

    // MARK: Control helpers

    private static func convert(
        _ clip: AudioClip, _ frames: Range<Int>, to rate: Double, quality: AudioClip.ConversionQuality
    ) throws(AudioFileError) -> (clip: AudioClip, frames: Range<Int>) {
        let converted = try clip.converted(toSampleRate: rate, quality: quality)
        if converted === clip { return (clip, frames) }
        let ratio = rate / clip.sampleRate
        let lower = min(Int((Double(frames.lowerBound) * ratio).rounded()), converted.frameCount)
        let upper = min(max(Int((Double(frames.upperBound) * ratio).rounded()), lower), converted.frameCount)
        return (converted, lower..<upper)
    }

    /// Builds and publishes a snapshot of the converted pending clips; frees the snapshots the
    /// audio thread no longer reads.
    private func publish(_ state: inout ControlState) {
        state.generation += 1
        let ready = state.pending.filter { $0.converted != nil }
        let snapshot = Snapshot(
            generation: state.generation, epoch: state.epoch, firstID: state.epochFirstID,
            entries: ready.map { entry in
                let (clip, frames) = entry.converted!
                return Entry(
                    id: entry.id, left: clip.channelPointer(0) + frames.lowerBound,
                    right: clip.channelPointer(1) + frames.lowerBound, frames: frames.count,
                    startTime: entry.startTime ?? Int64.min, options: entry.options)
            },
            clips: ready.map { $0.converted!.clip })
        state.snapshots.append(snapshot)
        published.store(Int(bitPattern: Unmanaged.passUnretained(snapshot).toOpaque()), ordering: .releasing)
        let inUse = adoptedGeneration.load(ordering: .acquiring)
        state.snapshots.removeAll { $0.generation < inUse && $0 !== snapshot }
    }

    private func startPolling(_ state: inout ControlState) {
        guard state.timer == nil else { return }
        let timer = DispatchSource.makeTimerSource(queue: callbackQueue)
        timer.schedule(deadline: .now() + .milliseconds(10), repeating: .milliseconds(10), leeway: .milliseconds(5))
        timer.setEventHandler { [weak self] in self?.pollCompletions() }
        state.timer = timer
        timer.resume()
    }

    /// Runs the completions of the clips the audio thread has finished and forgets those clips.
    private func pollCompletions() {
        let done = completedThrough.load(ordering: .acquiring)
        let finished = control.withLock { state -> [Scheduled] in
            let finished = state.pending.filter { $0.id <= done }
            if !finished.isEmpty {
                state.pending.removeAll { $0.id <= done }
                publish(&state)
            }
            if state.pending.isEmpty {
                state.timer?.cancel()
                state.timer = nil
            }
            return finished
        }
        fire(finished)
    }

    private func fire(_ entries: [Scheduled]) {
        let completions = entries.compactMap(\.completion)
        guard !completions.isEmpty else { return }
        callbackQueue.async { for completion in completions { completion() } }
    }
}

/// One clip as the audio thread sees it: raw pointers into a converted clip the snapshot keeps.
private struct Entry {
    var id: Int
    var left: UnsafePointer<Float>
    var right: UnsafePointer<Float>
    var frames: Int
    /// `Int64.min`: after the clip before.
    var startTime: Int64
    var options: AudioFilePlayerNode.ScheduleOptions

    init(
        id: Int, left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>, frames: Int, startTime: Int64,
        options: AudioFilePlayerNode.ScheduleOptions
    ) {
        self.id = id
        self.left = UnsafePointer(left)
        self.right = UnsafePointer(right)
        self.frames = frames
        self.startTime = startTime
        self.options = options
    }
}

/// An immutable schedule for the audio thread.
private final class Snapshot: @unchecked Sendable {
    let generation: Int
    let epoch: Int
    /// The first identifier of the snapshot's epoch (clips scheduled after its stop()).
    let firstID: Int
    let entries: RealTimeBuffer<Entry>
    /// Keeps the samples the entries point into alive.
    let clips: [AudioClip]

    init(generation: Int, epoch: Int, firstID: Int, entries: [Entry], clips: [AudioClip]) {
        self.generation = generation
        self.epoch = epoch
        self.firstID = firstID
        self.entries = RealTimeBuffer(copying: entries)
        self.clips = clips
    }
}
