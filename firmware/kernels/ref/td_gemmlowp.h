/*
 * td_gemmlowp.h - private to the reference kernels that follow gemmlowp's fixed-point
 * arithmetic (td_softmax_body.h, td_log_softmax_s8_ref.c, td_inv_sqrt.h): the few primitives
 * they all need, written once so that every kernel rounds and saturates the same way.
 *
 * Invariants: raw int32 values, two's complement wrap where gemmlowp wraps (additions done on
 * uint32), saturation where gemmlowp saturates; no state, no memory.
 */
#ifndef TD_GEMMLOWP_H
#define TD_GEMMLOWP_H

#include <stdint.h>

#include "td_requant.h"

/* Leading zeros of x, 32 for 0. */
static inline int32_t td_clz32(uint32_t x)
{
    int32_t n = 0;
    if (x == 0u) {
        return 32;
    }
    while ((x & 0x80000000u) == 0u) {
        x <<= 1;
        ++n;
    }
    return n;
}

/* gemmlowp SaturatingRoundingMultiplyByPOT: x * 2^e saturated (e > 0) or rounded (e <= 0). */
static inline int32_t td_sat_rounding_mul_pot(int32_t x, int32_t e)
{
    if (e <= 0) {
        return td_rounding_divide_by_pot(x, -e);
    }
    const int32_t threshold = (int32_t)(((int64_t)1 << (31 - e)) - 1);
    if (x > threshold) {
        return INT32_MAX;
    }
    if (x < -threshold) {
        return INT32_MIN;
    }
    return (int32_t)((uint32_t)x << e);
}

/* gemmlowp one_over_one_plus_x_for_x_in_0_1: a is Q0.31 in [0, 1), result Q0.31. */
static inline int32_t td_one_over_one_plus_x(int32_t a)
{
    /* RoundingHalfSum(a, One) with One = INT32_MAX in Q0.31 */
    const int64_t s = (int64_t)a + INT32_MAX;
    const int32_t half_den = (int32_t)((s + (s >= 0 ? 1 : -1)) / 2);
    const int32_t c48_17 = 1515870810;     /* 48/17 in Q2.29 */
    const int32_t cm32_17 = -1010580540;   /* -32/17 in Q2.29 */
    const int32_t one_q2 = 1 << 29;
    int32_t x = (int32_t)((uint32_t)c48_17
                          + (uint32_t)td_sat_rounding_doubling_high_mul(half_den, cm32_17));
    for (int i = 0; i < 3; ++i) {
        const int32_t hdx = td_sat_rounding_doubling_high_mul(half_den, x);
        const int32_t one_minus = (int32_t)((uint32_t)one_q2 - (uint32_t)hdx);
        x = (int32_t)((uint32_t)x + (uint32_t)td_sat_rounding_mul_pot(
                          td_sat_rounding_doubling_high_mul(x, one_minus), 2));
    }
    /* Rescale<0>(ExactMulByPot<-1>(x)): ExactMulByPot only relabels x as Q1.30 (the raw
     * value is unchanged), so the result is SaturatingRoundingMultiplyByPOT<1>(x). */
    return td_sat_rounding_mul_pot(x, 1);
}

/* The largest of x[0..n-1] (INT8_MIN for n = 0): the row maximum every softmax-family kernel
 * subtracts before its exponentials. */
static inline int32_t td_max_s8(const int8_t *x, int32_t n)
{
    int32_t m = INT8_MIN;
    for (int32_t c = 0; c < n; ++c) {
        m = x[c] > m ? x[c] : m;
    }
    return m;
}

#endif /* TD_GEMMLOWP_H */
