import CAllocationCounter
import Pianola
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@Suite("Real-time safety: locks")
struct RenderLockTests {
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
