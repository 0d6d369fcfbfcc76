/*
 * td_lut16.h - private to the int16 table kernels (td_softmax_s16_ref.c): TFLite's int16
 * LUTLookup on a 513-entry table filled on the host (kernels/int16.py::lut16_populate).
 *
 * The top 9 bits of the input pick one of 512 intervals, the low 7 bits interpolate
 * linearly towards the next entry, rounding half up: base + (slope * frac + 64) >> 7, with
 * slope the int16 difference of the two entries (TFLite's casts kept).
 */
#ifndef TD_LUT16_H
#define TD_LUT16_H

#include <stdint.h>

static inline int16_t td_lut16_lookup(const int16_t *lut, int16_t x)
{
    const uint32_t index = (uint32_t)(256 + (x >> 7));
    const int32_t frac = x & 0x7F;
    const int16_t base = lut[index];
    const int16_t slope = (int16_t)(lut[index + 1u] - base);
    return (int16_t)(base + ((slope * frac + 64) >> 7));
}

#endif /* TD_LUT16_H */
