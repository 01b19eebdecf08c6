#ifndef PIANOLA_ALSA_SHIMS_H
#define PIANOLA_ALSA_SHIMS_H

/// Stops alsa-lib from printing its own error lines ("ALSA lib pcm.c:…") on standard error:
/// Pianola reports every failure itself, in one line. (alsa-lib's handler is variadic, which Swift
/// cannot implement, hence this C target; the sequencer's macro wrappers will join it.)
void pianola_alsa_silence_library_errors(void);

struct _snd_pcm;

/// Opens PCM `name` as snd_pcm_open does, with `definitions` (configuration text in asoundrc
/// syntax, e.g. `pcm.take { type file ... }`) added to the system's configuration for this open
/// only; NULL or empty: the system's configuration alone. `stream` is SND_PCM_STREAM_PLAYBACK (0)
/// or SND_PCM_STREAM_CAPTURE (1). Returns 0 or a negative errno.
int pianola_alsa_pcm_open(struct _snd_pcm **pcm, const char *name, const char *definitions, int stream, int mode);

#endif
