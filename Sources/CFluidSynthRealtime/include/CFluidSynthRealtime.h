#ifndef PIANOLA_FLUIDSYNTH_REALTIME_H
#define PIANOLA_FLUIDSYNTH_REALTIME_H

/// Routes libfluidsynth's calls to GOMP_parallel through Pianola's wrapper (see the .c file).
/// Returns 1 when the wrapper is in place, 0 when libfluidsynth does not use OpenMP or could not
/// be patched (rendering still works; it then allocates once per render call in libgomp).
int pianola_install_realtime_openmp(void);

/// How many single-thread OpenMP regions ran inline, without a libgomp team.
long pianola_inline_parallel_regions(void);

/// Points the slots through which each loaded object whose file name contains `library` calls
/// `symbol` at `replacement` (slots already there are left alone). When `previous` is not NULL and
/// `*previous` is NULL, the first slot's former target is stored there before that slot changes.
/// Returns how many slots were changed. Not thread-safe against itself: callers serialize.
int pianola_redirect_imports(const char *library, const char *symbol, void *replacement, void **previous);

#endif
