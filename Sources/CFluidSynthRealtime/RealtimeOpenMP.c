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
#include <elf.h>
#include <link.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

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

static uintptr_t absolute(uintptr_t value, uintptr_t base) { return value < base ? value + base : value; }

static void patch_relocations(uintptr_t base, const ElfW(Rela) *relocations, size_t size, const ElfW(Sym) *symbols,
                              const char *strings) {
    size_t count = size / sizeof(ElfW(Rela));
    for (size_t index = 0; index < count; index++) {
        const ElfW(Rela) *relocation = &relocations[index];
        const char *name = strings + symbols[ELF64_R_SYM(relocation->r_info)].st_name;
        if (strcmp(name, "GOMP_parallel") != 0) continue;
        void **slot = (void **)(base + relocation->r_offset);
        long page = sysconf(_SC_PAGESIZE);
        void *start = (void *)((uintptr_t)slot & ~(uintptr_t)(page - 1));
        if (mprotect(start, (size_t)page, PROT_READ | PROT_WRITE) != 0) continue;
        *slot = (void *)pianola_gomp_parallel;
        patched = 1;
    }
}

static int visit(struct dl_phdr_info *info, size_t size, void *context) {
    (void)size;
    (void)context;
    if (info->dlpi_name == NULL || strstr(info->dlpi_name, "libfluidsynth") == NULL) return 0;
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
    return 0;
}

int pianola_install_realtime_openmp(void) {
    static atomic_int installed;
    if (atomic_exchange(&installed, 1) == 0) {
        real_gomp_parallel = (gomp_parallel_function)dlsym(RTLD_DEFAULT, "GOMP_parallel");
        if (real_gomp_parallel != NULL) dl_iterate_phdr(visit, NULL);
    }
    return patched;
}
