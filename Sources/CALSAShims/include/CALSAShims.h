#ifndef PIANOLA_ALSA_SHIMS_H
#define PIANOLA_ALSA_SHIMS_H

/// Stops alsa-lib from printing its own error lines ("ALSA lib pcm.c:…") on standard error:
/// Pianola reports every failure itself, in one line. (alsa-lib's handler is variadic, which Swift
/// cannot implement, hence this C target; the sequencer's macro wrappers will join it.)
void pianola_alsa_silence_library_errors(void);

#endif
