// Test-only allocation counter: defines the C allocator entry points in the test executable, so
// that every allocation in the process (Swift runtime, libfluidsynth, libc) passes through here
// on its way to glibc's own implementation, and counts those of the thread that asked.
#include "CAllocationCounter.h"
#include <errno.h>
#include <stddef.h>

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t count, size_t size);
extern void *__libc_realloc(void *pointer, size_t size);
extern void *__libc_memalign(size_t alignment, size_t size);
extern void __libc_free(void *pointer);

static __thread int counting;
static __thread long count;

void pianola_allocations_start(void) {
    count = 0;
    counting = 1;
}

long pianola_allocations_stop(void) {
    counting = 0;
    return count;
}

void *malloc(size_t size) {
    if (counting) count++;
    return __libc_malloc(size);
}

void *calloc(size_t number, size_t size) {
    if (counting) count++;
    return __libc_calloc(number, size);
}

void *realloc(void *pointer, size_t size) {
    if (counting) count++;
    return __libc_realloc(pointer, size);
}

void free(void *pointer) { __libc_free(pointer); }

void *memalign(size_t alignment, size_t size) {
    if (counting) count++;
    return __libc_memalign(alignment, size);
}

void *aligned_alloc(size_t alignment, size_t size) {
    if (counting) count++;
    return __libc_memalign(alignment, size);
}

int posix_memalign(void **result, size_t alignment, size_t size) {
    if (counting) count++;
    void *pointer = __libc_memalign(alignment < sizeof(void *) ? sizeof(void *) : alignment, size);
    if (pointer == NULL) return ENOMEM;
    *result = pointer;
    return 0;
}
