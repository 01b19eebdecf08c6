#include "CVorbisFile.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <vorbis/vorbisfile.h>

// A read position over a block of memory, for libvorbisfile's callbacks.
struct memory_stream {
    const unsigned char *data;
    size_t size;
    size_t position;
};

static size_t memory_read(void *destination, size_t size, size_t count, void *source) {
    struct memory_stream *stream = source;
    if (size == 0) return 0;
    size_t available = (stream->size - stream->position) / size;
    size_t taken = count < available ? count : available;
    memcpy(destination, stream->data + stream->position, taken * size);
    stream->position += taken * size;
    return taken;
}

static int memory_seek(void *source, ogg_int64_t offset, int whence) {
    struct memory_stream *stream = source;
    ogg_int64_t base = whence == SEEK_SET ? 0 : whence == SEEK_CUR ? (ogg_int64_t)stream->position : (ogg_int64_t)stream->size;
    ogg_int64_t target = base + offset;
    if (target < 0 || target > (ogg_int64_t)stream->size) return -1;
    stream->position = (size_t)target;
    return 0;
}

static long memory_tell(void *source) { return (long)((struct memory_stream *)source)->position; }

int pianola_vorbis_decode(const void *data, size_t size, int16_t **samples, size_t *frames, long *rate) {
    struct memory_stream stream = {data, size, 0};
    ov_callbacks callbacks = {memory_read, memory_seek, NULL, memory_tell};
    OggVorbis_File file;
    int status = ov_open_callbacks(&stream, &file, NULL, 0, callbacks);
    if (status < 0) return status;
    vorbis_info *info = ov_info(&file, -1);
    if (info == NULL || info->channels < 1) {
        ov_clear(&file);
        return OV_EBADHEADER;
    }
    ogg_int64_t total = ov_pcm_total(&file, -1);
    size_t capacity = total > 0 ? (size_t)total : 4096;
    int16_t *out = malloc(capacity * sizeof(int16_t));
    if (out == NULL) {
        ov_clear(&file);
        return -1;
    }
    size_t count = 0;
    int section = 0;
    for (;;) {
        float **pcm = NULL;
        long read = ov_read_float(&file, &pcm, 4096, &section);
        if (read == OV_HOLE) continue;
        if (read < 0) {
            free(out);
            ov_clear(&file);
            return (int)read;
        }
        if (read == 0) break;
        if (count + (size_t)read > capacity) {
            size_t grown = (count + (size_t)read) * 2;
            int16_t *larger = realloc(out, grown * sizeof(int16_t));
            if (larger == NULL) {
                free(out);
                ov_clear(&file);
                return -1;
            }
            out = larger;
            capacity = grown;
        }
        const float *channel = pcm[0];
        for (long i = 0; i < read; i++) {
            float scaled = roundf(channel[i] * 32767.0f);
            if (scaled > 32767.0f) scaled = 32767.0f;
            if (scaled < -32768.0f) scaled = -32768.0f;
            out[count++] = (int16_t)scaled;
        }
    }
    *rate = info->rate;
    ov_clear(&file);
    *samples = out;
    *frames = count;
    return 0;
}
