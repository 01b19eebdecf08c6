// Redirecting a loaded library's imports: each object's dynamic relocations (the PLT's and the
// others) name the symbol a slot of its global offset table holds; a slot of the symbol asked for
// is pointed at a replacement. Only that library's calls change; the rest of the process keeps
// the real function. Used for libfluidsynth's GOMP_parallel (RealtimeOpenMP.c) and by the tests'
// lock counter for its GLib locks.
#define _GNU_SOURCE
#include "CFluidSynthRealtime.h"
#include <elf.h>
#include <link.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

struct redirect {
    const char *library;
    const char *symbol;
    void *replacement;
    void **previous;
    int changed;
};

static uintptr_t absolute(uintptr_t value, uintptr_t base) { return value < base ? value + base : value; }

static void redirect_relocations(uintptr_t base, const ElfW(Rela) *relocations, size_t size, const ElfW(Sym) *symbols,
                                 const char *strings, struct redirect *request) {
    long page = sysconf(_SC_PAGESIZE);
    for (size_t index = 0; index < size / sizeof(ElfW(Rela)); index++) {
        const ElfW(Rela) *relocation = &relocations[index];
        if (strcmp(strings + symbols[ELF64_R_SYM(relocation->r_info)].st_name, request->symbol) != 0) continue;
        void **slot = (void **)(base + relocation->r_offset);
        if (*slot == request->replacement || *slot == NULL) continue;
        void *start = (void *)((uintptr_t)slot & ~(uintptr_t)(page - 1));
        if (mprotect(start, (size_t)page, PROT_READ | PROT_WRITE) != 0) continue;
        if (request->previous != NULL && *request->previous == NULL) *request->previous = *slot;
        // The replacement's own target is set first: a thread may call through the slot at any time.
        __atomic_store_n(slot, request->replacement, __ATOMIC_RELEASE);
        request->changed++;
    }
}

static int visit(struct dl_phdr_info *info, size_t size, void *context) {
    (void)size;
    struct redirect *request = context;
    if (info->dlpi_name == NULL || strstr(info->dlpi_name, request->library) == NULL) return 0;
    const ElfW(Dyn) *dynamic = NULL;
    for (int index = 0; index < info->dlpi_phnum; index++) {
        if (info->dlpi_phdr[index].p_type == PT_DYNAMIC) {
            dynamic = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[index].p_vaddr);
        }
    }
    if (dynamic == NULL) return 0;
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
    if (symbols == NULL || strings == NULL) return 0;
    if (plt != NULL) redirect_relocations(base, plt, pltSize, symbols, strings, request);
    if (rela != NULL) redirect_relocations(base, rela, relaSize, symbols, strings, request);
    return 0;
}

int pianola_redirect_imports(const char *library, const char *symbol, void *replacement, void **previous) {
    struct redirect request = {library, symbol, replacement, previous, 0};
    dl_iterate_phdr(visit, &request);
    return request.changed;
}
