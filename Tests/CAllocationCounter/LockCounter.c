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
#include <elf.h>
#include <link.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

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

static int patched_slots;

static uintptr_t absolute(uintptr_t value, uintptr_t base) { return value < base ? value + base : value; }

static void patch_relocations(uintptr_t base, const ElfW(Rela) *relocations, size_t size, const ElfW(Sym) *symbols,
                              const char *strings) {
    long page = sysconf(_SC_PAGESIZE);
    for (size_t index = 0; index < size / sizeof(ElfW(Rela)); index++) {
        const ElfW(Rela) *relocation = &relocations[index];
        const char *name = strings + symbols[ELF64_R_SYM(relocation->r_info)].st_name;
        for (size_t hook = 0; hook < sizeof hooks / sizeof hooks[0]; hook++) {
            if (strcmp(name, hooks[hook].name) != 0) continue;
            void **slot = (void **)(base + relocation->r_offset);
            if (*slot == hooks[hook].wrapper || *slot == NULL) break;
            void *start = (void *)((uintptr_t)slot & ~(uintptr_t)(page - 1));
            if (mprotect(start, (size_t)page, PROT_READ | PROT_WRITE) != 0) break;
            *hooks[hook].real = *slot;
            // The wrapper's target first: a thread may call through the slot at any time.
            __atomic_store_n(slot, hooks[hook].wrapper, __ATOMIC_RELEASE);
            patched_slots++;
            break;
        }
    }
}

static int visit(struct dl_phdr_info *info, size_t size, void *context) {
    (void)size;
    const char *library = context;
    if (info->dlpi_name == NULL || strstr(info->dlpi_name, library) == NULL) return 0;
    const ElfW(Dyn) *dynamic = NULL;
    for (int index = 0; index < info->dlpi_phnum; index++) {
        if (info->dlpi_phdr[index].p_type == PT_DYNAMIC) {
            dynamic = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[index].p_vaddr);
        }
    }
    if (dynamic == NULL) return 1;
    uintptr_t base = info->dlpi_addr;
    const ElfW(Sym) *symbols = NULL;
    const char *strings = NULL;
    const ElfW(Rela) *plt = NULL, *rela = NULL;
    size_t pltSize = 0, relaSize = 0;
    for (const ElfW(Dyn) *entry = dynamic; entry->d_tag != DT_NULL; entry++) {
        switch (entry->d_tag) {
        case DT_SYMTAB: symbols = (const ElfW(Sym) *)absolute(entry->d_un.d_ptr, base); break;
        case DT_STRTAB: strings = (const char *)absolute(entry->d_un.d_ptr, base); break;
        case DT_JMPREL: plt = (const ElfW(Rela) *)absolute(entry->d_un.d_ptr, base); break;
        case DT_PLTRELSZ: pltSize = entry->d_un.d_val; break;
        case DT_RELA: rela = (const ElfW(Rela) *)absolute(entry->d_un.d_ptr, base); break;
        case DT_RELASZ: relaSize = entry->d_un.d_val; break;
        default: break;
        }
    }
    if (symbols == NULL || strings == NULL) return 1;
    if (plt != NULL) patch_relocations(base, plt, pltSize, symbols, strings);
    if (rela != NULL) patch_relocations(base, rela, relaSize, symbols, strings);
    return 1;
}

static pthread_mutex_t patching = PTHREAD_MUTEX_INITIALIZER;

int pianola_locks_count_glib_calls_of(const char *library) {
    glibc_mutex_lock(&patching);
    dl_iterate_phdr(visit, (void *)library);
    int patched = patched_slots;
    pthread_mutex_unlock(&patching);
    return patched;
}
