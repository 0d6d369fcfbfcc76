/*
 * td_requant.h - the one requantize primitive of tinydeploy, plus saturating helpers.
 *
 * Bit-exact twin of TFLite's MultiplyByQuantizedMultiplier (double-rounding variant, the
 * default of TFLite Micro): x * 2^max(shift,0), then the rounding doubling high multiply by a
 * Q31 multiplier, then a rounding (half away from zero) arithmetic right shift by
 * max(-shift,0). The Python twin is tinydeploy/quantize/fixedpoint.py; both are checked
 * against the tflite-micro interpreter in the golden tests.
 *
 * Invariants: multiplier in [2^30, 2^31-1] (or 0), shift in [-31, 30]. No heap, no state.
 */
#ifndef TD_REQUANT_H
#define TD_REQUANT_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* (a * b * 2 + 2^31) >> 32 with rounding half away from zero; the single overflow case
 * (INT32_MIN * INT32_MIN) saturates to INT32_MAX. */
static inline int32_t td_sat_rounding_doubling_high_mul(int32_t a, int32_t b)
{
    if (a == INT32_MIN && b == INT32_MIN) {
        return INT32_MAX;
    }
    const int64_t ab = (int64_t)a * (int64_t)b;
    const int64_t nudge = ab >= 0 ? ((int64_t)1 << 30) : (1 - ((int64_t)1 << 30));
    const int64_t v = ab + nudge;
    /* TFLite divides by 2^31 truncating toward zero; shifting the magnitude is the same
     * and avoids a 64-bit division call (__aeabi_ldivmod) on Cortex-M. |v| < 2^62. */
    return (int32_t)(v >= 0 ? (v >> 31) : -((-v) >> 31));
}

/* x / 2^exponent rounded half away from zero; exponent in [0, 31]. */
static inline int32_t td_rounding_divide_by_pot(int32_t x, int32_t exponent)
{
    int32_t mask = (int32_t)(((int64_t)1 << exponent) - 1);
    int32_t remainder = x & mask;
    int32_t threshold = (mask >> 1) + (x < 0 ? 1 : 0);
    return (x >> exponent) + (remainder > threshold ? 1 : 0);
}

/* round(x * multiplier * 2^(shift - 31)) as TFLite computes it. The left shift wraps (two's
 * complement) instead of being undefined, as TFLite's does on every target it supports. */
static inline int32_t td_requantize(int32_t x, int32_t multiplier, int32_t shift)
{
    int32_t left = shift > 0 ? shift : 0;
    int32_t right = shift > 0 ? 0 : -shift;
    int32_t shifted = (int32_t)((uint32_t)x << left);
    return td_rounding_divide_by_pot(td_sat_rounding_doubling_high_mul(shifted, multiplier),
                                     right);
}

static inline int32_t td_clamp_s32(int32_t x, int32_t lo, int32_t hi)
{
    return x < lo ? lo : (x > hi ? hi : x);
}

static inline int8_t td_sat_s8(int32_t x)
{
    return (int8_t)td_clamp_s32(x, INT8_MIN, INT8_MAX);
}

static inline int16_t td_sat_s16(int32_t x)
{
    return (int16_t)td_clamp_s32(x, INT16_MIN, INT16_MAX);
}

/* a + b saturated to int32 (gemmlowp SaturatingAdd). */
static inline int32_t td_sat_add_s32(int32_t a, int32_t b)
{
    int64_t s = (int64_t)a + (int64_t)b;
    return s > INT32_MAX ? INT32_MAX : (s < INT32_MIN ? INT32_MIN : (int32_t)s);
}

#ifdef __cplusplus
}
#endif

#endif /* TD_REQUANT_H */
