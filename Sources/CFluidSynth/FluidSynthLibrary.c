// Opens libfluidsynth on first use and forwards Pianola's calls to it (see CFluidSynth.h).
//
// Each function below has the signature <fluidsynth.h> declares (the compiler checks it against
// the header) and calls the library's function through a pointer resolved once, when the
// library is opened. Every pointer is resolved before any of them is used, so a call on the
// audio thread is one load, one predictable branch and an indirect call: no lock, no allocation.
// Adding a call to another FluidSynth function means adding it to FLUIDSYNTH_FUNCTIONS (the
// linker reports the undefined symbol otherwise).
#define _GNU_SOURCE
#include "CFluidSynth.h"
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// FluidSynth 2.x's shared library; its soname has been libfluidsynth.so.3 since 2.0.
#define DEFAULT_LIBRARY "libfluidsynth.so.3"

// X(return type, name, parameters, arguments) for every function that returns a value, and
// V(name, parameters, arguments) for those that return nothing.
#define FLUIDSYNTH_FUNCTIONS(X, V)                                                                                  \
    X(fluid_settings_t *, new_fluid_settings, (void), ())                                                           \
    V(delete_fluid_settings, (fluid_settings_t * settings), (settings))                                             \
    X(int, fluid_settings_setint, (fluid_settings_t * settings, const char *name, int val), (settings, name, val))  \
    X(int, fluid_settings_setnum, (fluid_settings_t * settings, const char *name, double val),                      \
      (settings, name, val))                                                                                        \
    X(fluid_synth_t *, new_fluid_synth, (fluid_settings_t * settings), (settings))                                  \
    V(delete_fluid_synth, (fluid_synth_t * synth), (synth))                                                         \
    X(char *, fluid_version_str, (void), ())                                                                        \
    X(fluid_log_function_t, fluid_set_log_function, (int level, fluid_log_function_t fun, void *data),              \
      (level, fun, data))                                                                                           \
    X(int, fluid_synth_noteon, (fluid_synth_t * synth, int chan, int key, int vel), (synth, chan, key, vel))        \
    X(int, fluid_synth_noteoff, (fluid_synth_t * synth, int chan, int key), (synth, chan, key))                     \
    X(int, fluid_synth_cc, (fluid_synth_t * synth, int chan, int ctrl, int val), (synth, chan, ctrl, val))          \
    X(int, fluid_synth_pitch_bend, (fluid_synth_t * synth, int chan, int val), (synth, chan, val))                  \
    X(int, fluid_synth_channel_pressure, (fluid_synth_t * synth, int chan, int val), (synth, chan, val))            \
    X(int, fluid_synth_key_pressure, (fluid_synth_t * synth, int chan, int key, int val), (synth, chan, key, val))  \
    X(int, fluid_synth_program_change, (fluid_synth_t * synth, int chan, int program), (synth, chan, program))      \
    X(int, fluid_synth_bank_select, (fluid_synth_t * synth, int chan, int bank), (synth, chan, bank))               \
    X(int, fluid_synth_program_select,                                                                              \
      (fluid_synth_t * synth, int chan, int sfont_id, int bank_num, int preset_num),                                \
      (synth, chan, sfont_id, bank_num, preset_num))                                                                \
    X(int, fluid_synth_get_program,                                                                                 \
      (fluid_synth_t * synth, int chan, int *sfont_id, int *bank_num, int *preset_num),                             \
      (synth, chan, sfont_id, bank_num, preset_num))                                                                \
    X(int, fluid_synth_unset_program, (fluid_synth_t * synth, int chan), (synth, chan))                             \
    X(fluid_preset_t *, fluid_synth_get_channel_preset, (fluid_synth_t * synth, int chan), (synth, chan))           \
    X(int, fluid_synth_sysex,                                                                                       \
      (fluid_synth_t * synth, const char *data, int len, char *response, int *response_len, int *handled,          \
       int dryrun),                                                                                                 \
      (synth, data, len, response, response_len, handled, dryrun))                                                  \
    X(int, fluid_synth_all_notes_off, (fluid_synth_t * synth, int chan), (synth, chan))                             \
    X(int, fluid_synth_all_sounds_off, (fluid_synth_t * synth, int chan), (synth, chan))                            \
    X(int, fluid_synth_system_reset, (fluid_synth_t * synth), (synth))                                              \
    X(int, fluid_synth_set_interp_method, (fluid_synth_t * synth, int chan, int interp_method),                     \
      (synth, chan, interp_method))                                                                                 \
    V(fluid_synth_set_gain, (fluid_synth_t * synth, float gain), (synth, gain))                                     \
    X(int, fluid_synth_set_polyphony, (fluid_synth_t * synth, int polyphony), (synth, polyphony))                   \
    X(int, fluid_synth_get_polyphony, (fluid_synth_t * synth), (synth))                                             \
    X(int, fluid_synth_get_active_voice_count, (fluid_synth_t * synth), (synth))                                    \
    X(int, fluid_synth_reverb_on, (fluid_synth_t * synth, int fx_group, int on), (synth, fx_group, on))             \
    X(int, fluid_synth_chorus_on, (fluid_synth_t * synth, int fx_group, int on), (synth, fx_group, on))             \
    X(int, fluid_synth_write_float,                                                                                 \
      (fluid_synth_t * synth, int len, void *lout, int loff, int lincr, void *rout, int roff, int rincr),           \
      (synth, len, lout, loff, lincr, rout, roff, rincr))                                                           \
    V(fluid_synth_get_voicelist, (fluid_synth_t * synth, fluid_voice_t * buf[], int bufsize, int ID),              \
      (synth, buf, bufsize, ID))                                                                                    \
    X(int, fluid_voice_is_on, (const fluid_voice_t *voice), (voice))                                                \
    X(int, fluid_voice_get_channel, (const fluid_voice_t *voice), (voice))                                          \
    X(float, fluid_voice_gen_get, (fluid_voice_t * voice, int gen), (voice, gen))                                   \
    X(int, fluid_synth_tuning_dump, (fluid_synth_t * synth, int bank, int prog, char *name, int len, double *pitch), \
      (synth, bank, prog, name, len, pitch))                                                                        \
    X(int, fluid_synth_sfload, (fluid_synth_t * synth, const char *filename, int reset_presets),                    \
      (synth, filename, reset_presets))                                                                             \
    X(int, fluid_synth_sfreload, (fluid_synth_t * synth, int id), (synth, id))                                      \
    X(int, fluid_synth_sfunload, (fluid_synth_t * synth, int id, int reset_presets), (synth, id, reset_presets))    \
    X(int, fluid_synth_add_sfont, (fluid_synth_t * synth, fluid_sfont_t * sfont), (synth, sfont))                   \
    X(int, fluid_synth_remove_sfont, (fluid_synth_t * synth, fluid_sfont_t * sfont), (synth, sfont))                \
    X(fluid_sfont_t *, fluid_synth_get_sfont_by_id, (fluid_synth_t * synth, int id), (synth, id))                   \
    X(int, fluid_synth_pin_preset, (fluid_synth_t * synth, int sfont_id, int bank_num, int preset_num),            \
      (synth, sfont_id, bank_num, preset_num))                                                                      \
    X(int, fluid_synth_unpin_preset, (fluid_synth_t * synth, int sfont_id, int bank_num, int preset_num),          \
      (synth, sfont_id, bank_num, preset_num))                                                                      \
    V(fluid_synth_add_sfloader, (fluid_synth_t * synth, fluid_sfloader_t * loader), (synth, loader))                \
    X(fluid_sfloader_t *, new_fluid_defsfloader, (fluid_settings_t * settings), (settings))                         \
    X(int, fluid_sfloader_set_callbacks,                                                                            \
      (fluid_sfloader_t * loader, fluid_sfloader_callback_open_t open, fluid_sfloader_callback_read_t read,         \
       fluid_sfloader_callback_seek_t seek, fluid_sfloader_callback_tell_t tell,                                    \
       fluid_sfloader_callback_close_t close),                                                                      \
      (loader, open, read, seek, tell, close))                                                                      \
    X(fluid_sfont_t *, new_fluid_sfont,                                                                             \
      (fluid_sfont_get_name_t get_name, fluid_sfont_get_preset_t get_preset,                                        \
       fluid_sfont_iteration_start_t iter_start, fluid_sfont_iteration_next_t iter_next, fluid_sfont_free_t free), \
      (get_name, get_preset, iter_start, iter_next, free))                                                          \
    X(int, delete_fluid_sfont, (fluid_sfont_t * sfont), (sfont))                                                    \
    X(int, fluid_sfont_set_data, (fluid_sfont_t * sfont, void *data), (sfont, data))                                \
    X(void *, fluid_sfont_get_data, (fluid_sfont_t * sfont), (sfont))                                               \
    X(fluid_preset_t *, fluid_sfont_get_preset, (fluid_sfont_t * sfont, int bank, int prenum),                      \
      (sfont, bank, prenum))                                                                                        \
    V(fluid_sfont_iteration_start, (fluid_sfont_t * sfont), (sfont))                                                \
    X(fluid_preset_t *, fluid_sfont_iteration_next, (fluid_sfont_t * sfont), (sfont))                              \
    X(fluid_preset_t *, new_fluid_preset,                                                                           \
      (fluid_sfont_t * parent_sfont, fluid_preset_get_name_t get_name, fluid_preset_get_banknum_t get_bank,        \
       fluid_preset_get_num_t get_num, fluid_preset_noteon_t noteon, fluid_preset_free_t free),                     \
      (parent_sfont, get_name, get_bank, get_num, noteon, free))                                                    \
    V(delete_fluid_preset, (fluid_preset_t * preset), (preset))                                                     \
    X(int, fluid_preset_set_data, (fluid_preset_t * preset, void *data), (preset, data))                            \
    X(void *, fluid_preset_get_data, (fluid_preset_t * preset), (preset))                                           \
    X(const char *, fluid_preset_get_name, (fluid_preset_t * preset), (preset))                                     \
    X(int, fluid_preset_get_banknum, (fluid_preset_t * preset), (preset))                                           \
    X(int, fluid_preset_get_num, (fluid_preset_t * preset), (preset))                                               \
    X(fluid_sfont_t *, fluid_preset_get_sfont, (fluid_preset_t * preset), (preset))                                 \
    X(int, fluid_settings_setstr, (fluid_settings_t * settings, const char *name, const char *str),                 \
      (settings, name, str))                                                                                        \
    X(fluid_player_t *, new_fluid_player, (fluid_synth_t * synth), (synth))                                         \
    V(delete_fluid_player, (fluid_player_t * player), (player))                                                     \
    X(int, fluid_player_set_playback_callback,                                                                      \
      (fluid_player_t * player, handle_midi_event_func_t handler, void *handler_data), (player, handler, handler_data))\
    X(int, fluid_player_set_tick_callback,                                                                          \
      (fluid_player_t * player, handle_midi_tick_func_t handler, void *handler_data), (player, handler, handler_data))\
    X(int, fluid_player_add_mem, (fluid_player_t * player, const void *buffer, size_t len), (player, buffer, len))  \
    X(int, fluid_player_play, (fluid_player_t * player), (player))

#define DECLARE(type, name, parameters, arguments) static type(*pointer_##name) parameters;
#define DECLARE_VOID(name, parameters, arguments) static void(*pointer_##name) parameters;
FLUIDSYNTH_FUNCTIONS(DECLARE, DECLARE_VOID)

enum { UNTRIED, READY, FAILED };
static atomic_int state = UNTRIED;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static char failure[512];

static void *resolve(void *library, const char *library_name, const char *name) {
    void *function = dlsym(library, name);
    if (function == NULL && failure[0] == 0) {
        snprintf(failure, sizeof failure, "%s has no function %s (FluidSynth %d.x is needed)", library_name, name,
                 FLUIDSYNTH_VERSION_MAJOR);
    }
    return function;
}

static void open_library(void) {
    const char *name = getenv("PIANOLA_FLUIDSYNTH_LIBRARY");
    if (name == NULL || name[0] == 0) name = DEFAULT_LIBRARY;
    // Global, so that libgomp (a dependency of Debian's libfluidsynth) is found by name as it
    // would be had Pianola linked the library (CFluidSynthRealtime looks up GOMP_parallel).
    void *library = dlopen(name, RTLD_NOW | RTLD_GLOBAL);
    if (library == NULL) {
        const char *reason = dlerror();
        snprintf(failure, sizeof failure, "FluidSynth could not be loaded (%s); install libfluidsynth3",
                 reason ? reason : name);
        atomic_store_explicit(&state, FAILED, memory_order_release);
        return;
    }
    void (*version)(int *, int *, int *) = (void (*)(int *, int *, int *))resolve(library, name, "fluid_version");
    int major = 0, minor = 0, micro = 0;
    if (version != NULL) version(&major, &minor, &micro);
    if (version != NULL && major != FLUIDSYNTH_VERSION_MAJOR) {
        snprintf(failure, sizeof failure, "%s is FluidSynth %d.%d.%d; Pianola was built for %d.x", name, major, minor,
                 micro, FLUIDSYNTH_VERSION_MAJOR);
    }
#define RESOLVE(type, function, parameters, arguments)                                                               \
    pointer_##function = (type(*) parameters)resolve(library, name, #function);
#define RESOLVE_VOID(function, parameters, arguments)                                                               \
    pointer_##function = (void(*) parameters)resolve(library, name, #function);
    FLUIDSYNTH_FUNCTIONS(RESOLVE, RESOLVE_VOID)
    atomic_store_explicit(&state, failure[0] == 0 ? READY : FAILED, memory_order_release);
}

int pianola_fluidsynth_load(char *message, size_t capacity) {
    pthread_once(&once, open_library);
    if (atomic_load_explicit(&state, memory_order_acquire) == READY) return 0;
    if (message != NULL && capacity > 0) snprintf(message, capacity, "%s", failure);
    return -1;
}

// Callers check pianola_fluidsynth_load() first (the Sampler does, before its first synth) and
// report a failure as an error; reaching a FluidSynth function without it is a programming error.
static inline void ensure_loaded(void) {
    if (__builtin_expect(atomic_load_explicit(&state, memory_order_acquire) == READY, 1)) return;
    if (pianola_fluidsynth_load(NULL, 0) != 0) {
        fprintf(stderr, "pianola: %s\n", failure);
        abort();
    }
}

#define FORWARD(type, name, parameters, arguments)                                                                  \
    type name parameters {                                                                                          \
        ensure_loaded();                                                                                            \
        return pointer_##name arguments;                                                                            \
    }
#define FORWARD_VOID(name, parameters, arguments)                                                                   \
    void name parameters {                                                                                          \
        ensure_loaded();                                                                                            \
        pointer_##name arguments;                                                                                   \
    }
FLUIDSYNTH_FUNCTIONS(FORWARD, FORWARD_VOID)

static _Thread_local int log_collecting;

void pianola_fluidsynth_log_set_collecting(int collecting) { log_collecting = collecting; }

int pianola_fluidsynth_log_is_collecting(void) { return log_collecting; }
