// The innermost loop of the native voice engine (VoiceEngine's Lanes), in C for the SIMD
// shuffles Swift does not emit: one voice's 4-point interpolated sample read, four samples at a
// time in SSE2 (x86-64's baseline, so no dispatch), with a plain C loop elsewhere.
#ifndef PIANOLA_CVOICEKERNEL_H
#define PIANOLA_CVOICEKERNEL_H

#include <stdint.h>

/// Reads `count` samples of one voice into `output` (every `stride`th float), from the point
/// `point` and the 32-bit fraction `*fraction`, stepping by `step` (32.32 fixed point) per sample:
/// each sample is the four points from `point[-1]` to `point[2]` times the row of four
/// coefficients at the fraction's top eight bits in `table` (256 rows), summed in order, times
/// `*gain`, which then grows by `gain_step`. The caller makes sure every point read is the
/// sample's own. Updates `*fraction` and `*gain`; returns how many points the read moved on.
///
/// The sums are the same, to the bit, as the plain loop's: no fused multiply-add, the same order.
long pianola_voice_read(
    const int16_t *point, uint32_t *fraction, uint64_t step, const float *table, float *gain, float gain_step,
    float *output, long stride, long count);

#endif
