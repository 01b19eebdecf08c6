// See CMappedFile.h.
#define _GNU_SOURCE
#include "CMappedFile.h"
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

enum { SLOTS = 64 };

// A slot is free when `end` is 0. The handler reads the slots without a lock (it may run on any
// thread, at any time): each field is atomic, and a slot is published by storing `end` last.
static struct {
    atomic_uintptr_t start;
    atomic_uintptr_t end;
    atomic_int damaged;
} slots[SLOTS];
static struct sigaction previous;
static pthread_once_t installed = PTHREAD_ONCE_INIT;
// Read once, outside the handler (sysconf is not async-signal-safe).
static uintptr_t page_size;

/// Puts a zero page at `address` when it lies in a registered mapping; 1 when it did.
static int zero_page_in_mapping(uintptr_t address) {
    for (int index = 0; index < SLOTS; index++) {
        uintptr_t end = atomic_load(&slots[index].end);
        uintptr_t start = atomic_load(&slots[index].start);
        // A slot freed and claimed again between the two loads would mix two mappings: the end
        // read again must be the same.
        if (end == 0 || address < start || address >= end || atomic_load(&slots[index].end) != end) continue;
        // mmap is a plain system call on Linux, safe in a signal handler.
        void *page = (void *)(address & ~(page_size - 1));
        if (mmap(page, page_size, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED) return 0;
        atomic_store(&slots[index].damaged, 1);
        return 1;
    }
    return 0;
}

static void on_sigbus(int signal, siginfo_t *info, void *context) {
    int saved = errno;
    // A truncated mapping faults with BUS_ADRERR; a SIGBUS sent by kill() has no address.
    if (info->si_code == BUS_ADRERR && zero_page_in_mapping((uintptr_t)info->si_addr)) {
        errno = saved;
        return;
    }
    // Not ours (or the zero page could not be put there): what would have happened without us.
    if (previous.sa_flags & SA_SIGINFO) {
        if (previous.sa_sigaction != NULL) {
            previous.sa_sigaction(signal, info, context);
            errno = saved;
            return;
        }
    } else if (previous.sa_handler != SIG_DFL && previous.sa_handler != SIG_IGN) {
        previous.sa_handler(signal);
        errno = saved;
        return;
    }
    struct sigaction fallback;
    memset(&fallback, 0, sizeof fallback);
    fallback.sa_handler = SIG_DFL;
    sigaction(SIGBUS, &fallback, NULL);
    // A fault re-runs the faulting access when the handler returns, which now ends the process
    // the default way; a sent signal does not, so it is raised again.
    if (info->si_code <= 0) raise(SIGBUS);
    errno = saved;
}

static void install(void) {
    page_size = (uintptr_t)sysconf(_SC_PAGESIZE);
    // The handler in place before ours, read before ours is live.
    sigaction(SIGBUS, NULL, &previous);
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_sigaction = on_sigbus;
    action.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigemptyset(&action.sa_mask);
    sigaction(SIGBUS, &action, NULL);
}

const void *pianola_map_file(int descriptor, size_t length, int *slot) {
    pthread_once(&installed, install);
    void *address = mmap(NULL, length, PROT_READ, MAP_PRIVATE | MAP_POPULATE, descriptor, 0);
    if (address == MAP_FAILED) return NULL;
    for (int index = 0; index < SLOTS; index++) {
        uintptr_t expected = 0;
        // Claim a free slot by its start (0 while free), then publish the end.
        if (!atomic_compare_exchange_strong(&slots[index].start, &expected, (uintptr_t)address)) continue;
        atomic_store(&slots[index].damaged, 0);
        atomic_store(&slots[index].end, (uintptr_t)address + length);
        *slot = index;
        return address;
    }
    munmap(address, length);
    errno = ENOSPC;
    return NULL;
}

int pianola_mapped_file_damaged(int slot) { return atomic_load(&slots[slot].damaged); }

void pianola_unmap_file(const void *address, size_t length, int slot) {
    atomic_store(&slots[slot].end, 0);
    munmap((void *)address, length);
    atomic_store(&slots[slot].start, 0);
}
