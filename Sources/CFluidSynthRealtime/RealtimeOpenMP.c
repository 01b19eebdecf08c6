// Debian builds libfluidsynth with OpenMP. Its render path opens a parallel region on every call
// (one thread when synth.cpu-cores is 1), and libgomp allocates and frees a thread team for every
// single-thread region: one heap allocation per render call, on the audio thread.
//
// pianola_install_realtime_openmp() points libfluidsynth's GOMP_parallel slot (in its global
// offset table) at a wrapper: a region asked to run on exactly one thread runs inline, with no
// team (OpenMP queries inside it see one thread, as they would in a team of one); any other
// region goes to libgomp unchanged. Only libfluidsynth is affected, and the audio is identical
// (the tests compare Pianola's renders with FluidSynth's own, bit for bit).
#define _GNU_SOURCE
#include "CFluidSynthRealtime.h"
#include <dlfcn.h>
#include <stdatomic.h>
#include <stddef.h>

typedef void (*parallel_function)(void *);
typedef void (*gomp_parallel_function)(parallel_function, void *, unsigned, unsigned);

static atomic_long inline_regions;
static gomp_parallel_function real_gomp_parallel;
static int patched;

long pianola_inline_parallel_regions(void) { return atomic_load_explicit(&inline_regions, memory_order_relaxed); }

static void pianola_gomp_parallel(parallel_function function, void *data, unsigned thread_count, unsigned flags) {
    if (thread_count == 1 || real_gomp_parallel == NULL) {
        atomic_fetch_add_explicit(&inline_regions, 1, memory_order_relaxed);
        function(data);
        return;
    }
    real_gomp_parallel(function, data, thread_count, flags);
}

int pianola_install_realtime_openmp(void) {
    static atomic_int installed;
    if (atomic_exchange(&installed, 1) == 0) {
        real_gomp_parallel = (gomp_parallel_function)dlsym(RTLD_DEFAULT, "GOMP_parallel");
        if (real_gomp_parallel != NULL) {
            patched = pianola_redirect_imports("libfluidsynth", "GOMP_parallel", (void *)pianola_gomp_parallel, NULL) > 0;
        }
    }
    return patched;
}
