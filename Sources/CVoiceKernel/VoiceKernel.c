#include "CVoiceKernel.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

// Every product and sum rounds on its own, as Swift's do: the kernel's output is the Swift
// loop's, to the bit.
#pragma clang fp contract(off)

long pianola_voice_read(
    const int16_t *point, uint32_t *fraction, uint64_t step, const float *table, float *gain, float gain_step,
    float *output, long stride, long count) {
    const int16_t *const first = point;
    uint64_t phase = *fraction;
    float level = *gain;
    long index = 0;
#if defined(__SSE2__)
    for (; index + 4 <= count; index += 4) {
        __m128 q[4];
        for (int k = 0; k < 4; k++) {
            const float *row = table + 4 * (long)((uint32_t)phase >> 24);
            __m128i points = _mm_loadl_epi64((const __m128i *)(const void *)(point - 1));
            // Sign-extends the four 16-bit points to 32 bits: each in a lane's top half, shifted down.
            __m128i wide = _mm_srai_epi32(_mm_unpacklo_epi16(points, points), 16);
            q[k] = _mm_mul_ps(_mm_loadu_ps(row), _mm_cvtepi32_ps(wide));
            phase += step;
            point += phase >> 32;
            phase &= 0xFFFFFFFFu;
        }
        _MM_TRANSPOSE4_PS(q[0], q[1], q[2], q[3]);
        __m128 value = _mm_add_ps(_mm_add_ps(_mm_add_ps(q[0], q[1]), q[2]), q[3]);
        float gains[4];
        for (int k = 0; k < 4; k++) {
            gains[k] = level;
            level += gain_step;
        }
        float out[4];
        _mm_storeu_ps(out, _mm_mul_ps(value, _mm_loadu_ps(gains)));
        for (int k = 0; k < 4; k++) output[(index + k) * stride] = out[k];
    }
#endif
    for (; index < count; index++) {
        const float *row = table + 4 * (long)((uint32_t)phase >> 24);
        float value = row[0] * (float)point[-1] + row[1] * (float)point[0] + row[2] * (float)point[1]
                      + row[3] * (float)point[2];
        output[index * stride] = value * level;
        level += gain_step;
        phase += step;
        point += phase >> 32;
        phase &= 0xFFFFFFFFu;
    }
    *fraction = (uint32_t)phase;
    *gain = level;
    return (long)(point - first);
}
