import AudioGraph
import MIDICore
import SMF
import Synchronization

/// Plays a `MusicSequence` into MIDI-receiving nodes, driven by the engine's render: before each
/// quantum it turns the quantum's frames into song time through the tempo map and hands every due
/// event to its destination at its exact frame offset. No wall-clock timer decides when a note
/// plays, so an offline render and a device stream get the same events at the same frames.
///
/// Transport calls (`play`, `pause`, `seek`, `rate` …) come from any thread and take effect at the
/// next quantum. Seeking chases programs, controllers, pitch bend and pressure so that playing
/// from the middle sounds as it would have; pausing, stopping, seeking and looping release every
/// note the player started, so no note is left hanging.
///
/// The player knows no synthesizer. A destination that wants its events timed another way (for
/// instance as FluidSynth's own player times them) is given an `EventTimingPolicy`.
public final class MusicPlayer: RenderObserver, @unchecked Sendable {
    /// The sequence the player plays, fixed for its life (track destinations are read when the player
    /// is created).
    public let sequence: MusicSequence

    // MARK: Control → render mailbox (the render thread only ever try-locks it)

    struct Mailbox {
        var seek: SeekPlan?
        var consumedSeek: SeekPlan?
        var playing: Bool?
        var rate: Double?
        var transpose: Int?
        var loop: LoopSetting?
        /// The previous loop's plan, handed back by the render thread to be freed off it.
        var consumedLoop: SeekPlan?
        var trackEnabled: [Bool]?
        var consumedTrackEnabled: [Bool]?
        var releaseNotes = false
    }

    struct LoopSetting {
        var startSeconds: Double
        var endSeconds: Double
        var count: Int  // -1: forever
        /// The song's state at the loop start (each track's next event, the chase), built by
        /// `setLoop` off the render thread: each pass starts as a seek there would.
        var plan: SeekPlan?
    }

    let mailbox = Mutex(Mailbox())
    let positionBits = Atomic<UInt64>(0)
    let playingFlag = Atomic<Bool>(false)
    let finishedFlag = Atomic<Bool>(false)
    /// The render's sample time at which the sequence ended (`finish`), `Int64.max` before.
    let finishedSampleTime = Atomic<Int64>(.max)
    let loopsDone = Atomic<Int>(0)
    private let controlState = Mutex(ControlState())

    private struct ControlState {
        var rate = 1.0
        var transpose = 0
        var loop: LoopSetting?
        var muted: [Bool] = []
        var soloed: [Bool] = []
    }

    // MARK: Render-thread state (see MusicPlayer+Rendering.swift)

    let playhead: SequencePlayhead
    /// A policy's scheduler, which then places the events instead of the player.
    let scheduler: (any EventScheduler)?
    var renderPlaying = false
    var anchorSample: Int64 = 0
    var anchorSeconds = 0.0
    var renderRate = 1.0
    /// The render's sample rate, from the last quantum's time.
    var sampleRate = 44_100.0
    var loop: LoopSetting?
    var loopsRemaining = 0
    var heldSeek: SeekPlan?
    /// A replaced loop's plan, until it is handed back through the mailbox.
    var retiredLoopPlan: SeekPlan?
    var heldTrackEnabled: [Bool]?
    var needsAnchor = true
    /// The sample time of the quantum being rendered.
    var quantumStart: Int64 = 0
    /// Following an external transport (see MusicPlayer+Transport.swift): the transport at the
    /// start of the current cycle, the cue the render thread holds, the place last asked for, and
    /// where the transport stopped.
    var transportCycleState: TransportCycle?
    var heldCue: SeekPlan?
    var requestedCueSeconds = -Double.infinity
    var transportStoppedAt: Double? = 0
    let following = Atomic<Bool>(false)
    let cuePreparer = CuePreparer()
    /// Places prepared for an external transport to roll from (see MusicPlayer+Transport).
    let cues = CueExchange()

    /// How events are placed in time: nil for the player's own sample-accurate scheduling.
    public let timing: (any EventTimingPolicy)?

    /// A player for `sequence`; tracks without a destination play into `destination`. It plays at
    /// the rate the engine renders at, which each quantum's time carries: no rate to give, and
    /// none to get wrong. Add it to the engine's render (`addRenderObserver`), or use an
    /// `AudioSequencer`, which does that itself.
    ///
    /// - Parameter timing: how events are placed in time. By default every event plays at its
    ///   exact frame (the synthesizer may still start voices at its own block boundary).
    public init(sequence: MusicSequence, destination: any MIDIReceivingNode, timing: (any EventTimingPolicy)? = nil) {
        self.timing = timing
        self.sequence = sequence
        let scheduler = timing?.makeScheduler(for: sequence)
        self.scheduler = scheduler
        playhead = SequencePlayhead(
            sequence: sequence, destination: destination,
            passesNotesThrough: scheduler != nil && timing?.passesNotesThrough == true)
        controlState.withLock {
            $0.muted = [Bool](repeating: false, count: sequence.tracks.count)
            $0.soloed = [Bool](repeating: false, count: sequence.tracks.count)
        }
    }

    deinit { cuePreparer.stop() }

    /// A player for `sequence`. `sampleRate` is not used: the player takes the render's rate.
    @available(*, deprecated, message: "the player plays at the rate the engine renders at; leave sampleRate out")
    public convenience init(
        sequence: MusicSequence, destination: any MIDIReceivingNode, sampleRate: Double,
        timing: (any EventTimingPolicy)? = nil
    ) {
        self.init(sequence: sequence, destination: destination, timing: timing)
    }

    // MARK: Transport (any thread)

    /// Starts or resumes playback at the current position (chasing controllers).
    public func play() {
        let seek = makeSeekPlan(seconds: currentPositionInSeconds)
        mailbox.withLock {
            $0.consumedSeek = nil
            $0.seek = seek
            $0.playing = true
        }
        playingFlag.store(true, ordering: .relaxed)
        finishedFlag.store(false, ordering: .relaxed)
        finishedSampleTime.store(.max, ordering: .relaxed)
    }

    /// Pauses, releasing sounding notes; `play()` resumes from here.
    public func pause() {
        mailbox.withLock {
            $0.playing = false
            $0.releaseNotes = true
        }
        playingFlag.store(false, ordering: .relaxed)
    }

    /// Stops and returns to the start.
    public func stop() {
        pause()
        seek(toSeconds: 0)
    }

    /// Moves to `seconds` from the start of the sequence, chasing programs and controllers.
    public func seek(toSeconds seconds: Double) {
        let target = min(max(0, seconds), sequence.durationSeconds)
        let plan = makeSeekPlan(seconds: target)
        mailbox.withLock {
            $0.consumedSeek = nil
            $0.seek = plan
        }
        positionBits.store(target.bitPattern, ordering: .relaxed)
        if target < sequence.durationSeconds {
            finishedFlag.store(false, ordering: .relaxed)
            finishedSampleTime.store(.max, ordering: .relaxed)
        }
    }

    /// Moves to `beats` quarter notes from the start (through the tempo map), as `seek(toSeconds:)` does.
    public func seek(toBeats beats: Double) { seek(toSeconds: sequence.seconds(forBeats: beats)) }

    /// True from `play()` until `pause()`, `stop()` or the end of the sequence (then `isFinished` is true).
    public var isPlaying: Bool { playingFlag.load(ordering: .relaxed) }
    /// True once playback reached the end of the sequence (after any loops).
    public var isFinished: Bool { finishedFlag.load(ordering: .relaxed) }

    /// Song position in seconds (updated every quantum).
    public var currentPositionInSeconds: Double {
        get { Double(bitPattern: positionBits.load(ordering: .relaxed)) }
        set { seek(toSeconds: newValue) }
    }

    /// Song position in quarter-note beats (through the tempo map; updated every quantum). Setting it seeks.
    public var currentPositionInBeats: Double {
        get { sequence.beats(forSeconds: currentPositionInSeconds) }
        set { seek(toBeats: newValue) }
    }

    /// Playback rate: 2 plays twice as fast (the tempo factor).
    public var rate: Double {
        get { controlState.withLock { $0.rate } }
        set {
            let value = min(max(newValue, 0.01), 100)
            controlState.withLock { $0.rate = value }
            mailbox.withLock { $0.rate = value }
        }
    }

    /// Semitones added to every note outside the drum channel (10).
    public var transpose: Int {
        get { controlState.withLock { $0.transpose } }
        set {
            controlState.withLock { $0.transpose = newValue }
            mailbox.withLock {
                $0.transpose = newValue
                $0.releaseNotes = true
            }
        }
    }

    /// Loops `range` (seconds) `count` times (-1: forever); nil stops looping. Each time it goes
    /// back to the start, it does as a seek there: notes released, destinations told
    /// (`.relocated`: external instruments reset), then every channel's state at the start
    /// (programs, controllers, parameters, SysEx before it) sent again.
    public func setLoop(_ range: Range<Double>?, count: Int = -1) {
        let setting = range.map {
            LoopSetting(
                startSeconds: max(0, $0.lowerBound), endSeconds: min($0.upperBound, sequence.durationSeconds),
                count: count,
                plan: SeekPlan(
                    seconds: max(0, $0.lowerBound), sequence: sequence, trackDestination: playhead.trackDestination,
                    destinationCount: playhead.destinations.count))
        }
        controlState.withLock { $0.loop = setting }
        mailbox.withLock {
            $0.consumedLoop = nil
            $0.loop = setting ?? LoopSetting(startSeconds: 0, endSeconds: 0, count: 0)
        }
    }

    /// How many times playback has jumped back to the loop start.
    public var completedLoopCount: Int { loopsDone.load(ordering: .relaxed) }

    /// Mutes or unmutes the track at index `track` of `sequence.tracks`: a muted track's events are not
    /// sent. Takes effect at the next quantum and releases every note the player has sounding.
    ///
    /// - Throws: `MusicPlayerError.noSuchTrack` when `track` is not an index of `sequence.tracks`
    ///   (nothing changes).
    public func setMuted(_ muted: Bool, track: Int) throws(MusicPlayerError) {
        try updateTracks(track) { $0.muted[track] = muted }
    }

    /// Solos or unsolos the track at index `track` of `sequence.tracks`: while any track is soloed, only
    /// soloed tracks that are not muted play. Takes effect at the next quantum and releases every note the
    /// player has sounding.
    ///
    /// - Throws: `MusicPlayerError.noSuchTrack` when `track` is not an index of `sequence.tracks`
    ///   (nothing changes).
    public func setSoloed(_ soloed: Bool, track: Int) throws(MusicPlayerError) {
        try updateTracks(track) { $0.soloed[track] = soloed }
    }

    private func updateTracks(_ track: Int, _ change: (inout ControlState) -> Void) throws(MusicPlayerError) {
        guard sequence.tracks.indices.contains(track) else {
            throw .noSuchTrack(track, trackCount: sequence.tracks.count)
        }
        let enabled = controlState.withLock { state -> [Bool] in
            change(&state)
            let anySolo = state.soloed.contains(true)
            return zip(state.muted, state.soloed).map { muted, soloed in !muted && (!anySolo || soloed) }
        }
        mailbox.withLock {
            $0.consumedTrackEnabled = nil
            $0.trackEnabled = enabled
            $0.releaseNotes = true
        }
    }

    private func makeSeekPlan(seconds: Double) -> SeekPlan {
        SeekPlan(
            seconds: seconds, sequence: sequence, trackDestination: playhead.trackDestination,
            destinationCount: playhead.destinations.count)
    }
}

/// Why a `MusicPlayer` refused a call; nothing changed.
public enum MusicPlayerError: Error, Sendable, Hashable, CustomStringConvertible {
    /// `setMuted` or `setSoloed` named a track the sequence does not have: the index given, and
    /// how many tracks there are (indices 0 up to one less).
    case noSuchTrack(Int, trackCount: Int)

    public var description: String {
        switch self {
        case .noSuchTrack(let track, let count) where count == 0:
            return "the sequence has no track \(track): it has no tracks"
        case .noSuchTrack(let track, let count):
            return "the sequence has no track \(track): its \(count) tracks are 0…\(count - 1)"
        }
    }
}
