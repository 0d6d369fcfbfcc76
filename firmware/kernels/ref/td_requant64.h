/*
 * td_requant64.h - private to the 16x8 kernels (td_fully_connected_s16_ref.c,
 * td_conv2d_s16_ref.c): TFLite's MultiplyByQuantizedMultiplier for an int64 accumulator
 * (double-rounding build): the Q31 multiplier is rounded to Q15, then one rounding shift by
 * 15 - shift. |x| < 2^47 and shift in [-31, 7] (TFLite's contract; the host checks the
 * shapes that bound x).
 */
#ifndef TD_REQUANT64_H
#define TD_REQUANT64_H

#include <stdint.h>

static inline int32_t td_requantize64(int64_t x, int32_t multiplier, int32_t shift)
{
    const int32_t reduced = multiplier < 0x7FFF0000 ? ((multiplier + (1 << 15)) >> 16) : 0x7FFF;
    const int32_t total_shift = 15 - shift;
    const int64_t v = x * (int64_t)reduced + ((int64_t)1 << (total_shift - 1));
    /* arithmetic shift of a negative int64 (what TFLite's compilers do) */
    return (int32_t)(v >= 0 ? (v >> total_shift) : ~((~v) >> total_shift));
}

#endif /* TD_REQUANT64_H */
