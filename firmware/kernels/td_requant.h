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

/* ---- the rounding form: a branch-free td_requantize, exact under host-proven bounds ----
 *
 * For one output channel with shift <= -1 (e = -shift in [1, 31]), a multiplier m in
 * (0, 2^31) and an output zero point zp, and an accumulator acc with |acc| <= A:
 *
 *   td_requantize(acc, m, shift) + zp == (x + (x >> 31) + r) >> e
 *       where x = (2 * acc * m + 2^31) >> 32  (SMMULR of 2 * acc and m)
 *       and   r = (2 * zp + 1) * 2^(e - 1)    (td_requant_rnd)
 *
 * Why: with m > 0 the doubling high multiply never saturates, and its nudge (+2^30 or
 * 1 - 2^30, then truncation) equals flooring acc * m + 2^30 over 2^31, which is SMMULR of
 * 2 * acc; the rounding divide by 2^e (halves away from zero) equals flooring
 * x + 2^(e-1) - [x < 0] over 2^e; adding zp * 2^e before the floor adds zp after it.
 * Preconditions (tinydeploy/quantize/fixedpoint.py: rounding_form_holds, checked per channel
 * on the host, which otherwise keeps the general td_requantize): A < 2^30 so that 2 * acc
 * fits int32; |2 * zp + 1| * 2^e < 2^31 so that r is computed without overflow; and
 * A + 2 + |r| < 2^31 so that the sum never wraps. The result is the output value before the
 * activation clamp. */

/* r of the rounding form: (2 * zp + 1) * 2^(e - 1), from zp2p1 = 2 * zp + 1 and e >= 1 */
static inline int32_t td_requant_rnd(int32_t zp2p1, int32_t e)
{
    return (int32_t)((uint32_t)zp2p1 << e) >> 1;
}

/* (2 * acc * m + 2^31) >> 32: the high word of the rounded product (SMMULR) */
static inline int32_t td_smmulr2(int32_t acc, int32_t m)
{
    const int32_t acc2 = (int32_t)((uint32_t)acc << 1);
#if defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP
    int32_t r;
    __asm__("smmulr %0, %1, %2" : "=r"(r) : "r"(acc2), "r"(m));
    return r;
#else
    return (int32_t)(((int64_t)acc2 * (int64_t)m + ((int64_t)1 << 31)) >> 32);
#endif
}

/* td_requantize(acc, m, -e) + zp in the rounding form (preconditions above) */
static inline int32_t td_requant_round_form(int32_t acc, int32_t m, int32_t e, int32_t r)
{
    const int32_t x = td_smmulr2(acc, m);
    return (x + (x >> 31) + r) >> e;
}

/* td_requant_round_form with the accumulator's sign in place of the product's, as the
 * pointwise kernels' assembly computes it: SMMLAR of 2 * acc and m accumulating r gives x + r
 * in one instruction, and acc stays available for its sign. Equal to td_requant_round_form
 * for every acc under the same preconditions: m > 0 makes x >= 0 whenever acc >= 0, and x < 0
 * only if acc < 0, so the two sign terms differ only when x == 0 > acc; there both give zp,
 * since r = zp * 2^e + 2^(e-1) and (r - 1) >> e == r >> e for e >= 1. */
static inline int32_t td_requant_round_form_acc(int32_t acc, int32_t m, int32_t e, int32_t r)
{
    const int32_t xr = (int32_t)((uint32_t)td_smmulr2(acc, m) + (uint32_t)r);
    return (xr + (acc >> 31)) >> e;
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
