#ifndef PIANOLA_FLUIDSYNTH_REALTIME_H
#define PIANOLA_FLUIDSYNTH_REALTIME_H

/// Routes libfluidsynth's calls to GOMP_parallel through Pianola's wrapper (see the .c file).
/// Returns 1 when the wrapper is in place, 0 when libfluidsynth does not use OpenMP or could not
/// be patched (rendering still works; it then allocates once per render call in libgomp).
int pianola_install_realtime_openmp(void);

/// How many single-thread OpenMP regions ran inline, without a libgomp team.
long pianola_inline_parallel_regions(void);

#endif
