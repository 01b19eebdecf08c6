#define _GNU_SOURCE
// Test-only lock counter: defines the lock entry points in the test executable, so that every
// lock taken in the process passes through here on its way to the real implementation, and
// counts those of the thread that asked (as AllocationCounter.c does for the allocator).
//
// What is counted is what libfluidsynth and the libraries under it really call: FluidSynth's API
// lock is a GLib recursive mutex (fluid_rec_mutex_lock → g_rec_mutex_lock, which locks a
// recursive pthread mutex), its other locks GLib mutexes (g_mutex_lock, futex-based on Linux,
// which never reaches pthread_mutex_lock) and condition waits. pthread mutexes and read-write
// locks cover everything else (libc, the Swift runtime's C++ parts, libdispatch).
//
// The pthread functions are defined here and call glibc's own by their internal names; the GLib
// ones are counted in the library that calls them (`pianola_locks_count_glib_calls_of`).
#include "CAllocationCounter.h"
#include "CFluidSynthRealtime.h"
#include <pthread.h>
#include <stddef.h>

// glibc's own entry points: its internal names, kept for binaries linked before libpthread moved
// into libc (2.34), under the architecture's first symbol version.
#if defined(__x86_64__)
#define GLIBC_FIRST "GLIBC_2.2.5"
#elif defined(__aarch64__)
#define GLIBC_FIRST "GLIBC_2.17"
#else
#error "the lock counter knows glibc's first symbol version for x86_64 and aarch64 only"
#endif
#define GLIBC(name) __asm__(#name "@" GLIBC_FIRST)
extern int glibc_mutex_lock(pthread_mutex_t *mutex) GLIBC(__pthread_mutex_lock);
extern int glibc_mutex_trylock(pthread_mutex_t *mutex) GLIBC(__pthread_mutex_trylock);
extern int glibc_rwlock_rdlock(pthread_rwlock_t *lock) GLIBC(__pthread_rwlock_rdlock);
extern int glibc_rwlock_wrlock(pthread_rwlock_t *lock) GLIBC(__pthread_rwlock_wrlock);
extern int glibc_rwlock_tryrdlock(pthread_rwlock_t *lock) GLIBC(__pthread_rwlock_tryrdlock);
extern int glibc_rwlock_trywrlock(pthread_rwlock_t *lock) GLIBC(__pthread_rwlock_trywrlock);

static __thread int counting;
static __thread long counts[PIANOLA_LOCK_KINDS];

static inline void count(int kind) {
    if (counting) counts[kind]++;
}

void pianola_locks_start(void) {
    for (int kind = 0; kind < PIANOLA_LOCK_KINDS; kind++) counts[kind] = 0;
    counting = 1;
}

long pianola_locks_stop(void) {
    counting = 0;
    long total = 0;
    for (int kind = 0; kind < PIANOLA_LOCK_KINDS; kind++) total += counts[kind];
    return total;
}

long pianola_locks_of_kind(int kind) { return kind >= 0 && kind < PIANOLA_LOCK_KINDS ? counts[kind] : 0; }

// MARK: pthread

int pthread_mutex_lock(pthread_mutex_t *mutex) {
    count(PIANOLA_LOCK_PTHREAD_MUTEX);
    return glibc_mutex_lock(mutex);
}

int pthread_mutex_trylock(pthread_mutex_t *mutex) {
    count(PIANOLA_LOCK_PTHREAD_MUTEX);
    return glibc_mutex_trylock(mutex);
}

int pthread_rwlock_rdlock(pthread_rwlock_t *lock) {
    count(PIANOLA_LOCK_PTHREAD_RWLOCK);
    return glibc_rwlock_rdlock(lock);
}

int pthread_rwlock_wrlock(pthread_rwlock_t *lock) {
    count(PIANOLA_LOCK_PTHREAD_RWLOCK);
    return glibc_rwlock_wrlock(lock);
}

int pthread_rwlock_tryrdlock(pthread_rwlock_t *lock) {
    count(PIANOLA_LOCK_PTHREAD_RWLOCK);
    return glibc_rwlock_tryrdlock(lock);
}

int pthread_rwlock_trywrlock(pthread_rwlock_t *lock) {
    count(PIANOLA_LOCK_PTHREAD_RWLOCK);
    return glibc_rwlock_trywrlock(lock);
}

// MARK: GLib (the types are opaque here: a pointer is all these functions take)
//
// The executable exports only what the libraries it links with use, and none of them uses GLib:
// a definition here would not be seen by libfluidsynth, which is opened later. Instead the
// library's own slots for these functions (its global offset table, resolved when it was opened)
// are pointed at counting wrappers, which call what the slots held.

typedef void (*lock_function)(void *);
typedef int (*try_lock_function)(void *);
typedef void (*wait_function)(void *, void *);

static lock_function real_g_mutex_lock, real_g_rec_mutex_lock, real_g_rw_lock_reader_lock,
    real_g_rw_lock_writer_lock;
static try_lock_function real_g_mutex_trylock, real_g_rec_mutex_trylock;
static wait_function real_g_cond_wait;

static void counted_g_mutex_lock(void *lock) {
    count(PIANOLA_LOCK_GLIB_MUTEX);
    real_g_mutex_lock(lock);
}

static int counted_g_mutex_trylock(void *lock) {
    count(PIANOLA_LOCK_GLIB_MUTEX);
    return real_g_mutex_trylock(lock);
}

static void counted_g_rec_mutex_lock(void *lock) {
    count(PIANOLA_LOCK_GLIB_REC_MUTEX);
    real_g_rec_mutex_lock(lock);
}

static int counted_g_rec_mutex_trylock(void *lock) {
    count(PIANOLA_LOCK_GLIB_REC_MUTEX);
    return real_g_rec_mutex_trylock(lock);
}

static void counted_g_rw_lock_reader_lock(void *lock) {
    count(PIANOLA_LOCK_GLIB_RW_LOCK);
    real_g_rw_lock_reader_lock(lock);
}

static void counted_g_rw_lock_writer_lock(void *lock) {
    count(PIANOLA_LOCK_GLIB_RW_LOCK);
    real_g_rw_lock_writer_lock(lock);
}

static void counted_g_cond_wait(void *condition, void *mutex) {
    count(PIANOLA_LOCK_GLIB_COND_WAIT);
    real_g_cond_wait(condition, mutex);
}

static const struct hook {
    const char *name;
    void *wrapper;
    void **real;
} hooks[] = {
    {"g_mutex_lock", (void *)counted_g_mutex_lock, (void **)&real_g_mutex_lock},
    {"g_mutex_trylock", (void *)counted_g_mutex_trylock, (void **)&real_g_mutex_trylock},
    {"g_rec_mutex_lock", (void *)counted_g_rec_mutex_lock, (void **)&real_g_rec_mutex_lock},
    {"g_rec_mutex_trylock", (void *)counted_g_rec_mutex_trylock, (void **)&real_g_rec_mutex_trylock},
    {"g_rw_lock_reader_lock", (void *)counted_g_rw_lock_reader_lock, (void **)&real_g_rw_lock_reader_lock},
    {"g_rw_lock_writer_lock", (void *)counted_g_rw_lock_writer_lock, (void **)&real_g_rw_lock_writer_lock},
    {"g_cond_wait", (void *)counted_g_cond_wait, (void **)&real_g_cond_wait},
};

static pthread_mutex_t patching = PTHREAD_MUTEX_INITIALIZER;

int pianola_locks_count_glib_calls_of(const char *library) {
    static int patched_slots;
    glibc_mutex_lock(&patching);
    for (size_t hook = 0; hook < sizeof hooks / sizeof hooks[0]; hook++) {
        patched_slots += pianola_redirect_imports(library, hooks[hook].name, hooks[hook].wrapper, hooks[hook].real);
    }
    int patched = patched_slots;
    pthread_mutex_unlock(&patching);
    return patched;
}
