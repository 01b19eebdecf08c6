// Decodes one Ogg Vorbis stream held in memory (a SoundFont 3 sample) with libvorbisfile.
//
// SoundFont 3 stores each sample as an independent Ogg Vorbis stream inside the `smpl` chunk;
// the voice engine decodes the ones a song reaches, once, before the audio starts.
#ifndef PIANOLA_CVORBISFILE_H
#define PIANOLA_CVORBISFILE_H

#include <stddef.h>
#include <stdint.h>

/// Decodes the Ogg Vorbis stream of `size` bytes at `data` into 16-bit samples, rounding
/// `x * 32767` to the nearest integer and clamping to the 16-bit range. Only the first channel
/// of a multi-channel stream is kept. On success returns 0, sets `*frames` and `*rate`, and
/// `*samples` to a buffer the caller releases with `free`; on failure returns libvorbisfile's
/// negative error code (or -1 when memory runs out) and sets nothing.
int pianola_vorbis_decode(const void *data, size_t size, int16_t **samples, size_t *frames, long *rate);

#endif
