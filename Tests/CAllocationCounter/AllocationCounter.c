#define _GNU_SOURCE
// Test-only allocation counter: defines the C allocator entry points in the test executable, so
// that every allocation in the process (Swift runtime, libfluidsynth, libc) passes through here
// on its way to glibc's own implementation, and counts those of the thread that asked.
#include "CAllocationCounter.h"
#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>
#include <unistd.h>

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t count, size_t size);
extern void *__libc_realloc(void *pointer, size_t size);
extern void *__libc_memalign(size_t alignment, size_t size);
extern void __libc_free(void *pointer);

static __thread int counting;
static __thread long count;
static atomic_long watched_count;
static atomic_int watched_thread;

/// Whether this allocation is one to count: the calling thread's own count is on, or it is the
/// thread being watched (an audio thread, by its kernel id).
static inline int counted(void) {
    if (counting) {
        count++;
        return 1;
    }
    int watched = atomic_load_explicit(&watched_thread, memory_order_relaxed);
    if (watched != 0 && gettid() == watched) {
        atomic_fetch_add(&watched_count, 1);
        return 1;
    }
    return 0;
}

void pianola_allocations_watch_thread(int thread) {
    atomic_store(&watched_count, 0);
    atomic_store(&watched_thread, thread);
}

long pianola_allocations_stop_watching_thread(void) {
    atomic_store(&watched_thread, 0);
    return atomic_load(&watched_count);
}

void pianola_allocations_start(void) {
    count = 0;
    counting = 1;
}

long pianola_allocations_stop(void) {
    counting = 0;
    return count;
}

void *malloc(size_t size) {
    (void)counted();
    return __libc_malloc(size);
}

void *calloc(size_t number, size_t size) {
    (void)counted();
    return __libc_calloc(number, size);
}

void *realloc(void *pointer, size_t size) {
    (void)counted();
    return __libc_realloc(pointer, size);
}

void free(void *pointer) { __libc_free(pointer); }

void *memalign(size_t alignment, size_t size) {
    (void)counted();
    return __libc_memalign(alignment, size);
}

void *aligned_alloc(size_t alignment, size_t size) {
    (void)counted();
    return __libc_memalign(alignment, size);
}

int posix_memalign(void **result, size_t alignment, size_t size) {
    (void)counted();
    void *pointer = __libc_memalign(alignment < sizeof(void *) ? sizeof(void *) : alignment, size);
    if (pointer == NULL) return ENOMEM;
    *result = pointer;
    return 0;
}

int pianola_allocations_current_thread(void) { return (int)gettid(); }
