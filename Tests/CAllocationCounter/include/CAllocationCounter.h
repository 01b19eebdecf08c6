#ifndef PIANOLA_ALLOCATION_COUNTER_H
#define PIANOLA_ALLOCATION_COUNTER_H

/// Starts counting heap allocations made by the calling thread.
void pianola_allocations_start(void);
/// Stops counting and returns how many allocations (malloc, calloc, realloc, memalign family)
/// the calling thread made since the matching start.
long pianola_allocations_stop(void);

/// Starts counting the allocations of one thread, by its kernel id (`gettid()`), whoever started it:
/// an output's or an input clock's audio thread (`audioThreadID`).
void pianola_allocations_watch_thread(int thread);
/// Stops that and returns how many allocations that thread made since the start.
long pianola_allocations_stop_watching_thread(void);

/// The calling thread's kernel id, as `pianola_allocations_watch_thread` takes it.
int pianola_allocations_current_thread(void);

/// What the lock counter tells apart (`pianola_locks_of_kind`).
enum {
    /// pthread_mutex_lock and pthread_mutex_trylock (GLib's recursive mutexes, FluidSynth's API
    /// lock among them, end here too).
    PIANOLA_LOCK_PTHREAD_MUTEX = 0,
    /// pthread_rwlock_rdlock, _wrlock and their try forms.
    PIANOLA_LOCK_PTHREAD_RWLOCK = 1,
    /// g_mutex_lock and g_mutex_trylock (futex-based: they never reach pthread_mutex_lock).
    PIANOLA_LOCK_GLIB_MUTEX = 2,
    /// g_rec_mutex_lock and g_rec_mutex_trylock (FluidSynth's fluid_rec_mutex_lock).
    PIANOLA_LOCK_GLIB_REC_MUTEX = 3,
    /// g_rw_lock_reader_lock and g_rw_lock_writer_lock.
    PIANOLA_LOCK_GLIB_RW_LOCK = 4,
    /// g_cond_wait.
    PIANOLA_LOCK_GLIB_COND_WAIT = 5,
    PIANOLA_LOCK_KINDS = 6
};

/// Starts counting the locks the calling thread takes (or tries to take), of every kind above.
void pianola_locks_start(void);
/// Stops counting and returns how many locks the calling thread took since the matching start.
long pianola_locks_stop(void);
/// Of those, how many were of `kind` (a PIANOLA_LOCK_ constant).
long pianola_locks_of_kind(int kind);
/// Counts the GLib locks taken by the loaded library whose file name contains `library` (such as
/// "libfluidsynth"), from now on: the executable cannot define GLib's functions for a library
/// opened later, so that library's calls are redirected (its global offset table). Returns how
/// many of its slots are redirected so far (0: the library is not loaded or calls no GLib lock).
int pianola_locks_count_glib_calls_of(const char *library);

#endif
