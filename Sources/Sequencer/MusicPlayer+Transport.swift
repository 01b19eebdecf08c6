import AudioGraph
import MIDICore
import PianolaSupport
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The transport at the start of a device cycle, as the device reported it (render thread).
struct TransportCycle {
    var isRolling: Bool
    var seconds: Double
    var sampleTime: Int64
}

// Following a transport shared with other programs (a JACK server's): the device reports where
// the transport is at each cycle and the player plays that part of the song. A locate needs a
// seek plan (the chase), which is built off the audio thread: the transport asks first (JACK's
// slow sync) and waits until the plan for its new place is there; a transport that rolls on
// without asking gets a plan for a place a little ahead, and the song starts there, at its frame.
extension MusicPlayer: TransportFollowing {
    /// Whether the player follows the transport its device reports (`TransportFollowing`)
    /// instead of its own: the song's time is the transport's time (its frame 0 is the song's
    /// start), it plays while the transport rolls and is silent (its notes released) while the
    /// transport stands, and it moves when the transport is located. `play()`, `pause()`,
    /// `seek`, `rate` and the loop are then the transport's to decide, and are ignored; a timing
    /// policy is not used. Set it before the device starts, and hand the player to the device
    /// (`JACKOutput.transportFollower`).
    ///
    /// Following needs a thread of the player's that prepares the places the transport moves to;
    /// if the system refuses that thread, the player does not follow: the property stays false.
    public var followsTransport: Bool {
        get { following.load(ordering: .relaxed) }
        set {
            if newValue && !cuePreparer.start(for: self) { return }
            following.store(newValue, ordering: .releasing)
        }
    }

    /// How far ahead a transport that rolled without waiting gets its cue: time enough to build it.
    static let cueLead = 0.25

    public func transportCycle(isRolling: Bool, seconds: Double, sampleTime: Int64) {
        transportCycleState = TransportCycle(isRolling: isRolling, seconds: seconds, sampleTime: sampleTime)
    }

    public func isReadyToRoll(from seconds: Double) -> Bool {
        guard following.load(ordering: .acquiring) else { return true }
        let target = cueSeconds(seconds)
        if target >= sequence.durationSeconds { return true }
        // Where it stopped, it goes on from: the cursors are there and the channels as they were.
        if !renderPlaying, let stopped = transportStoppedAt, sameFrame(stopped, target) { return true }
        takeCue()
        if let heldCue, heldCue.seconds == target { return true }
        if requestedCueSeconds != target {
            requestedCueSeconds = target
            cuePreparer.request(target)
        }
        return false
    }

    public func musicalPosition(atSeconds seconds: Double) -> MusicalPosition? {
        let map = sequence.tempoMap
        let quarter = map.division.ticksPerQuarterNote ?? 480
        // An SMPTE-timed file has no tempo: beats at 120 BPM, 480 ticks each.
        let tick =
            map.division.ticksPerQuarterNote == nil ? max(0, seconds) * 960 : map.tick(forSeconds: max(0, seconds))
        let whole = Int(tick.rounded(.down))
        let meter = map.meter(atTick: whole)
        let beatTicks = max(1, quarter * 4 / meter.denominator)
        let barTicks = beatTicks * meter.numerator
        let offset = max(0, whole - meter.tick)
        let quarterBPM =
            map.division.ticksPerQuarterNote == nil
            ? 120 : 60_000_000 / Double(map.microsecondsPerQuarterNote(atTick: whole))
        return MusicalPosition(
            bar: meter.bar + offset / barTicks + 1, beat: offset % barTicks / beatTicks + 1, tick: offset % beatTicks,
            barStartTick: Double(meter.tick + offset / barTicks * barTicks), beatsPerBar: Double(meter.numerator),
            beatType: Double(meter.denominator), ticksPerBeat: Double(beatTicks),
            beatsPerMinute: quarterBPM * Double(meter.denominator) / 4)
    }

    /// A transport place as a cue's: within the song.
    private func cueSeconds(_ seconds: Double) -> Double { min(max(0, seconds), sequence.durationSeconds) }

    private func sameFrame(_ first: Double, _ second: Double) -> Bool { abs(first - second) * sampleRate < 0.5 }

    /// Takes a newly prepared cue (without a lock); the one held before goes back to be freed
    /// off the audio thread.
    private func takeCue() {
        if let cue = cues.take(replacing: heldCue) { heldCue = cue }
    }

    /// The quantum when following: silent while the transport stands, the song from the
    /// transport's place while it rolls (render thread).
    func followTransport(frameCount: Int, at time: AudioTime) {
        guard let cycle = transportCycleState else { return }
        renderRate = 1
        let duration = sequence.durationSeconds
        guard cycle.isRolling else {
            if renderPlaying {
                playhead.releaseAllNotes(atFrameOffset: 0)
                playhead.interrupt(.stopped, atFrameOffset: 0)
                renderPlaying = false
                transportStoppedAt = secondsAt(sample: time.sampleTime)
            }
            publish(position: cycle.seconds, playing: false)
            return
        }
        let expected = cycle.seconds + Double(time.sampleTime - cycle.sampleTime) / sampleRate
        let end = time.sampleTime + Int64(frameCount)
        if !renderPlaying || !sameFrame(secondsAt(sample: time.sampleTime), expected) {
            if renderPlaying {
                playhead.releaseAllNotes(atFrameOffset: 0)
                playhead.interrupt(.stopped, atFrameOffset: 0)
                renderPlaying = false
                transportStoppedAt = nil
            }
            guard expected < duration, let offset = rollingStart(expected: expected, frameCount: frameCount) else {
                publish(position: expected, playing: expected < duration)
                return
            }
            anchorSample = time.sampleTime + Int64(offset)
            renderPlaying = true
            transportStoppedAt = nil
        }
        deliver(until: end, quantumStart: time.sampleTime)
        let position = secondsAt(sample: end)
        publish(position: position, playing: true)
        if position >= duration && playhead.isAtEnd { finish(atFrameOffset: frameCount - 1) }
    }

    /// Where in this quantum the song starts again at the transport's place (frames from its
    /// start), its cursors and channels set; nil while it waits for a cue.
    private func rollingStart(expected: Double, frameCount: Int) -> Int? {
        if let stopped = transportStoppedAt, sameFrame(stopped, expected) {
            anchorSeconds = stopped
            return 0
        }
        takeCue()
        if let cue = heldCue {
            let frames = Int(((cue.seconds - expected) * sampleRate).rounded())
            if (0..<frameCount).contains(frames) {
                playhead.position(at: cue.cursors)
                playhead.interrupt(.relocated, atFrameOffset: frames)
                for index in 0..<cue.chase.count {
                    let (destination, message) = cue.chase[index]
                    playhead.sendUnpaired(message, to: destination, atFrameOffset: frames)
                }
                anchorSeconds = cue.seconds
                return frames
            }
            // A cue still ahead: wait for it.
            if frames >= frameCount && cue.seconds == requestedCueSeconds { return nil }
        }
        // None for here (the transport rolled on without waiting): one a little ahead.
        if requestedCueSeconds <= expected || requestedCueSeconds > expected + 2 * Self.cueLead {
            let target = cueSeconds(expected + Self.cueLead)
            requestedCueSeconds = target
            cuePreparer.request(target)
        }
        return nil
    }

    private func publish(position: Double, playing: Bool) {
        positionBits.store(min(max(0, position), sequence.durationSeconds).bitPattern, ordering: .relaxed)
        playingFlag.store(playing, ordering: .relaxed)
        finishedFlag.store(position >= sequence.durationSeconds, ordering: .relaxed)
    }

    /// Builds the cue for `seconds` and hands it to the render thread (the cue preparer's thread).
    fileprivate func prepareCue(atSeconds seconds: Double) {
        cues.publish(
            SeekPlan(
                seconds: seconds, sequence: sequence, trackDestination: playhead.trackDestination,
                destinationCount: playhead.destinations.count))
    }
}

/// Hands prepared cues from the cue preparer to the render thread and the spent ones back,
/// through two atomic slots: no lock, so the render thread never finds it taken. (A mutex's
/// try-lock left a prepared cue untaken for good on a loaded machine: the transport then never
/// rolled from a locate.) The render thread neither allocates nor frees here.
final class CueExchange: @unchecked Sendable {
    /// The newest cue prepared and not taken yet (retained).
    private let fresh = Atomic<UnsafeMutableRawPointer?>(nil)
    /// The cue the render thread let go of, for the preparer to free (retained).
    private let spent = Atomic<UnsafeMutableRawPointer?>(nil)

    deinit {
        if let pointer = fresh.exchange(nil, ordering: .acquiring) { Unmanaged<SeekPlan>.fromOpaque(pointer).release() }
        if let pointer = spent.exchange(nil, ordering: .acquiring) { Unmanaged<SeekPlan>.fromOpaque(pointer).release() }
    }

    /// Offers `plan` (preparer): it replaces a cue not taken yet; what was replaced or given back is freed here.
    func publish(_ plan: SeekPlan) {
        let pointer = Unmanaged.passRetained(plan).toOpaque()
        if let replaced = fresh.exchange(pointer, ordering: .acquiringAndReleasing) {
            Unmanaged<SeekPlan>.fromOpaque(replaced).release()
        }
        if let used = spent.exchange(nil, ordering: .acquiringAndReleasing) {
            Unmanaged<SeekPlan>.fromOpaque(used).release()
        }
    }

    /// The newest cue, if one is waiting and the one given back before has been freed; `held`
    /// (the cue it replaces) goes back to the preparer (render thread).
    func take(replacing held: SeekPlan?) -> SeekPlan? {
        guard spent.load(ordering: .acquiring) == nil,
            let pointer = fresh.exchange(nil, ordering: .acquiringAndReleasing)
        else { return nil }
        if let held { spent.store(Unmanaged.passRetained(held).toOpaque(), ordering: .releasing) }
        return Unmanaged<SeekPlan>.fromOpaque(pointer).takeRetainedValue()
    }
}

/// A thread of the player's that builds the cues the audio thread asks for: the audio thread
/// only stores the place and posts a semaphore (neither allocates nor blocks).
final class CuePreparer: @unchecked Sendable {
    private let semaphore: UnsafeMutablePointer<sem_t>
    private let requested = Atomic<UInt64>(Double.nan.bitPattern)
    private let stopping = Atomic<Bool>(false)
    private let started = Atomic<Bool>(false)

    init() {
        semaphore = .allocate(capacity: 1)
        sem_init(semaphore, 0, 0)
    }

    deinit {
        sem_destroy(semaphore)
        semaphore.deallocate()
    }

    /// Asks for the cue at `seconds` (audio thread).
    func request(_ seconds: Double) {
        requested.store(seconds.bitPattern, ordering: .releasing)
        sem_post(semaphore)
    }

    /// Starts the thread (once) that prepares `player`'s cues; whether it runs (false when the system
    /// refused it: a later call tries again).
    func start(for player: MusicPlayer) -> Bool {
        guard started.compareExchange(expected: false, desired: true, ordering: .relaxed).exchanged else { return true }
        do {
            try SystemThread.detach(stackSize: 1 << 18) { [self, weak player] in
                var prepared = Double.nan.bitPattern
                while true {
                    while sem_wait(semaphore) != 0 {}
                    if stopping.load(ordering: .acquiring) { return }
                    let bits = requested.load(ordering: .acquiring)
                    guard bits != prepared else { continue }
                    guard let player else { return }
                    player.prepareCue(atSeconds: Double(bitPattern: bits))
                    prepared = bits
                }
            }
            return true
        } catch {
            started.store(false, ordering: .relaxed)
            return false
        }
    }

    /// Ends the thread (the player is going away).
    func stop() {
        stopping.store(true, ordering: .releasing)
        sem_post(semaphore)
    }
}
