#define _GNU_SOURCE
#include "CALSAShims.h"
#include <alsa/asoundlib.h>
#include <unistd.h>

static void silent(const char *file, int line, const char *function, int error, const char *format, ...) {
    (void)file;
    (void)line;
    (void)function;
    (void)error;
    (void)format;
}

void pianola_alsa_silence_library_errors(void) { snd_lib_error_set_handler(silent); }

int pianola_alsa_pcm_open(snd_pcm_t **pcm, const char *name, const char *definitions, int stream,
                          int mode) {
    if (definitions == NULL || definitions[0] == '\0') return snd_pcm_open(pcm, name, (snd_pcm_stream_t)stream, mode);
    snd_config_t *top = NULL;
    int error = snd_config_update_ref(&top);
    if (error < 0) return error;
    snd_config_t *local = NULL;
    error = snd_config_copy(&local, top);
    snd_config_unref(top);
    if (error < 0) return error;
    // The definitions are parsed into a tree of their own and merged into the copy (loading them
    // into the copy directly would replace its whole `pcm` compound). The merge frees `extra`.
    snd_config_t *extra = NULL;
    error = snd_config_top(&extra);
    if (error >= 0) {
        snd_input_t *input = NULL;
        error = snd_input_buffer_open(&input, definitions, -1);
        if (error >= 0) {
            error = snd_config_load(extra, input);
            snd_input_close(input);
        }
        if (error >= 0) {
            error = snd_config_merge(local, extra, 0);
        } else {
            snd_config_delete(extra);
        }
    }
    if (error >= 0) error = snd_pcm_open_lconf(pcm, name, (snd_pcm_stream_t)stream, mode, local);
    snd_config_delete(local);
    return error;
}

