import CAllocationCounter
import Pianola
import PianolaSupport
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A control thread that plays into a sampler, as a user's code would while the engine renders:
/// notes, controllers, pitch bends, and the gain, polyphony, interpolation and effect switches.
private final class ControlThread: Sendable {
    private let stopping = Atomic<Bool>(false)
    private let finished = Atomic<Bool>(false)
    private let steps = Atomic<Int>(0)
    private let polyphonyChanges = Atomic<Int>(0)
    private let gainBits = Atomic<UInt32>(0)

    /// Rounds of calls made so far.
    var stepCount: Int { steps.load(ordering: .acquiring) }
    /// Times it set the polyphony so far.
    var polyphonyChangeCount: Int { polyphonyChanges.load(ordering: .acquiring) }
    /// The gain it set last.
    var lastGain: Float { Float(bitPattern: gainBits.load(ordering: .acquiring)) }

    init(playing sampler: SamplerNode) throws {
        try SystemThread.detach { [self] in
            var step = 0
            let interpolations = SamplerNode.Interpolation.allCases
            while !stopping.load(ordering: .acquiring) {
                let channel = UInt8(step % 9)
                let key = UInt8(48 + step % 24)
                // (Every number is in range: none of these throws.)
                try? sampler.startNote(key, withVelocity: 100, onChannel: channel)
                try? sampler.sendController(1, withValue: UInt8(step % 128), onChannel: channel)
                try? sampler.sendPitchBend(UInt16(step * 97 % 16_384), onChannel: channel)
                let gain = 0.2 + Float(step % 10) * 0.02
                sampler.gain = gain
                gainBits.store(gain.bitPattern, ordering: .releasing)
                // (Within the voices the synthesizer has: raising polyphony past them creates more.)
                if step % 50 == 0 {
                    polyphonyChanges.add(1, ordering: .releasing)
                    sampler.polyphony = step % 100 == 0 ? 128 : 256
                }
                if step % 70 == 0 { sampler.interpolation = interpolations[step / 70 % interpolations.count] }
                if step % 90 == 0 { sampler.isChorusEnabled = step % 180 == 0 }
                usleep(100)
                try? sampler.stopNote(key, onChannel: channel)
                step += 1
                steps.store(step, ordering: .releasing)
            }
            self.finished.store(true, ordering: .releasing)
        }
    }

    func stop() {
        stopping.store(true, ordering: .releasing)
        while !finished.load(ordering: .acquiring) { usleep(1_000) }
    }
}

@Suite("Real-time safety: locks")
struct RenderLockTests {
    @Test(
        "the render thread takes no lock (pthread, GLib, FluidSynth's API lock) while another thread plays notes and moves the gain"
    )
    func noLocksWhileAnotherThreadPlays() throws {
        let engine = AudioEngine()
        let sampler = try SamplerNode()
        try sampler.loadSoundFont(at: fontPath)
        #expect(pianola_locks_count_glib_calls_of("libfluidsynth") > 0, "FluidSynth's GLib locks are counted")
        try engine.attach(sampler)
        try engine.connect(sampler, to: engine.mainMixerNode)
        try engine.enableManualRenderingMode(format: .stereo(sampleRate: 44_100), maximumFrameCount: 256)
        let buffer = AudioBuffer(channelCount: 2, frameCapacity: 256)
        // This thread renders, as an output's audio thread would; the control thread plays meanwhile.
        let control = try ControlThread(playing: sampler)
        // Warm-up: FluidSynth allocates its voices and buffers lazily on first use.
        for _ in 0..<300 { engine.render(frameCount: 256, into: buffer) }
        let stepsBefore = control.stepCount
        let polyphonyChangesBefore = control.polyphonyChangeCount
        var mostVoices = 0
        let quanta = 3_000
        pianola_allocations_start()
        pianola_locks_start()
        for _ in 0..<quanta {
            engine.render(frameCount: 256, into: buffer)
            mostVoices = max(mostVoices, sampler.activeVoiceCount)
        }
        let locks = pianola_locks_stop()
        let allocations = pianola_allocations_stop()
        let kinds = [
            ("pthread mutex", PIANOLA_LOCK_PTHREAD_MUTEX), ("pthread rwlock", PIANOLA_LOCK_PTHREAD_RWLOCK),
            ("GLib mutex", PIANOLA_LOCK_GLIB_MUTEX), ("GLib recursive mutex", PIANOLA_LOCK_GLIB_REC_MUTEX),
            ("GLib rw lock", PIANOLA_LOCK_GLIB_RW_LOCK), ("GLib condition wait", PIANOLA_LOCK_GLIB_COND_WAIT),
        ].map { "\($0.0) \(pianola_locks_of_kind(Int32($0.1)))" }
        let steps = control.stepCount - stepsBefore
        let polyphonyChanges = control.polyphonyChangeCount - polyphonyChangesBefore
        control.stop()
        #expect(steps >= 20, "the control thread played while the engine rendered (\(steps) rounds)")
        #expect(mostVoices > 0, "the notes sounded")
        #expect(locks == 0, "\(locks) locks in \(quanta) quanta (\(kinds.joined(separator: ", ")))")
        // FluidSynth resizes its mixer's lists on the render thread for each polyphony change (its
        // own event, queued by `fluid_synth_set_polyphony` whichever thread calls it): two
        // reallocations each (the voices, the finished voices), the change sent just before the
        // count started included. Nothing else allocates.
        #expect(
            allocations <= 2 * (polyphonyChanges + 1),
            "\(allocations) allocations in \(quanta) quanta, \(polyphonyChanges) polyphony changes")
        #expect(sampler.gain == control.lastGain, "the gain reads back as set")
    }

    @Test("the lock counter sees pthread mutexes and FluidSynth's GLib locks (a test that could fail)")
    func counterWorks() throws {
        var mutex = pthread_mutex_t()
        pthread_mutex_init(&mutex, nil)
        defer { pthread_mutex_destroy(&mutex) }
        pianola_locks_start()
        pthread_mutex_lock(&mutex)
        pthread_mutex_unlock(&mutex)
        #expect(pianola_locks_stop() == 1)
        let sampler = try SamplerNode()
        #expect(pianola_locks_count_glib_calls_of("libfluidsynth") > 0)
        // Loading reads FluidSynth's settings (a GLib recursive mutex) and fills its sample
        // cache (a GLib mutex).
        pianola_locks_start()
        try sampler.loadSoundFont(at: fontPath)
        #expect(pianola_locks_stop() > 0)
        #expect(pianola_locks_of_kind(Int32(PIANOLA_LOCK_GLIB_MUTEX)) > 0)
        #expect(pianola_locks_of_kind(Int32(PIANOLA_LOCK_GLIB_REC_MUTEX)) > 0)
        #expect(pianola_locks_of_kind(Int32(PIANOLA_LOCK_PTHREAD_MUTEX)) > 0, "GLib's recursive mutex is a pthread one")
    }
}
