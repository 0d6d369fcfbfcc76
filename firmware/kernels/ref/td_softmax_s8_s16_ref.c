/*
 * td_softmax_s8_s16_ref.c - int8 in, int16 out SOFTMAX (output scale 1/65536, zero point
 * -32768), bit-exact with TFLite Micro: the int8 kernel's gemmlowp path (host exp table,
 * Q12.19 sum, reciprocal), with the final shift for a 16-bit output (num_bits_over_unit + 15)
 * and the int16 offset. Used by keyword models such as TFLM's keyword_scrambled. No scratch.
 */
#include "td_kernels.h"

static int32_t td_clz32(uint32_t x)
{
    int32_t n = 0;
    if (x == 0) {
        return 32;
    }
    while ((x & 0x80000000u) == 0) {
        x <<= 1;
        ++n;
    }
    return n;
}

/* gemmlowp SaturatingRoundingMultiplyByPOT<2> on a raw int32. */
static int32_t td_sat_mul_pot2(int32_t x)
{
    const int32_t threshold = (1 << 29) - 1;
    if (x > threshold) {
        return INT32_MAX;
    }
    if (x < -threshold) {
        return INT32_MIN;
    }
    return (int32_t)((uint32_t)x << 2);
}

/* gemmlowp one_over_one_plus_x_for_x_in_0_1: a is Q0.31 in [0, 1), result Q0.31. */
static int32_t td_one_over_one_plus_x(int32_t a)
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
        x = (int32_t)((uint32_t)x
                      + (uint32_t)td_sat_mul_pot2(td_sat_rounding_doubling_high_mul(x,
                                                                                  one_minus)));
    }
    /* Rescale<0>(ExactMulByPot<-1>(x)): ExactMulByPot only relabels x as Q1.30 (the raw
     * value is unchanged), so the result is SaturatingRoundingMultiplyByPOT<1>(x). */
    if (x > (1 << 30) - 1) {
        return INT32_MAX;
    }
    if (x < -((1 << 30) - 1)) {
        return INT32_MIN;
    }
    return (int32_t)((uint32_t)x << 1);
}

void td_softmax_s8_s16_ref(const td_softmax_params_t *p, const int8_t *in0, int16_t *out0)
{
    for (int32_t r = 0; r < p->rows; ++r) {
        const int8_t *x = in0 + r * p->depth;
        int16_t *y = out0 + r * p->depth;
        int32_t m = INT8_MIN;
        for (int32_t c = 0; c < p->depth; ++c) {
            m = x[c] > m ? x[c] : m;
        }
        uint32_t sum = 0;
        for (int32_t c = 0; c < p->depth; ++c) {
            sum += (uint32_t)td_rounding_divide_by_pot(p->exp_lut[m - x[c]], 12);
        }
        const int32_t headroom_plus_one = td_clz32(sum);
        const int32_t bits_over_unit = 12 - headroom_plus_one;
        const int32_t shifted_minus_one =
            (int32_t)((sum << headroom_plus_one) - ((uint32_t)1 << 31));
        const int32_t recip = td_one_over_one_plus_x(shifted_minus_one);
        const int32_t exponent = bits_over_unit + 31 - 16;
        for (int32_t c = 0; c < p->depth; ++c) {
            const int32_t e = p->exp_lut[m - x[c]];
            /* TFLM aborts when exponent > 31 (a row with more than ~2^16 values at its
             * maximum); every such probability is below 2^-16, so 0 is the exact limit. */
            const int32_t v = exponent > 31 ? 0 : td_rounding_divide_by_pot(
                td_sat_rounding_doubling_high_mul(recip, e), exponent);
            y[c] = td_sat_s16(v + INT16_MIN);
        }
    }
}
