// FluidSynth's API for the Sampler module, and the loader that opens libfluidsynth on first use.
//
// Pianola does not link libfluidsynth: its library tree (GLib, SDL, PulseAudio, JACK, X11 and
// more, 66 libraries) takes about 10 ms to map and initialise, a cost every `pianola` command
// would pay at start-up, including the ones that never synthesize (`info`, `--help`). The
// functions of <fluidsynth.h> that Pianola calls are defined in FluidSynthLibrary.c instead; each
// forwards to libfluidsynth, which is opened the first time any of them, or
// pianola_fluidsynth_load(), is called.
#ifndef PIANOLA_CFLUIDSYNTH_H
#define PIANOLA_CFLUIDSYNTH_H

#if __has_include(<fluidsynth.h>)
#include <fluidsynth.h>
#else
#error "FluidSynth's headers are missing: install libfluidsynth-dev (sudo apt-get install libfluidsynth-dev, or scripts/install-deps)"
#endif
#include <stddef.h>

/// Opens libfluidsynth (once per process) and resolves every function Pianola calls. Returns 0
/// when it is ready; otherwise -1, with the reason (which library, what failed) copied into
/// `message` (at most `capacity` bytes, NUL-terminated) when `message` is not NULL.
/// The library is `libfluidsynth.so.3`, or the file named by the environment variable
/// PIANOLA_FLUIDSYNTH_LIBRARY when it is set (read on the first call; CFluidSynthRealtime finds the
/// library by a file name containing "libfluidsynth", so other names play without its wrapper).
int pianola_fluidsynth_load(char *message, size_t capacity);

/// Marks the calling thread as collecting FluidSynth's log (1) or not (0): a thread-local flag the
/// log hook reads without a lock or an allocation, so that the audio thread, never marked, drops
/// its messages at no cost.
void pianola_fluidsynth_log_set_collecting(int collecting);

/// The calling thread's flag set by pianola_fluidsynth_log_set_collecting (0 unless set).
int pianola_fluidsynth_log_is_collecting(void);

#endif
