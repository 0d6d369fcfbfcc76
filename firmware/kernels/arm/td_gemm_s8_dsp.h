/*
 * td_gemm_s8_dsp.h - int8 dot-product blocks shared by the dsp CONV_2D and FULLY_CONNECTED
 * kernels (static inline, no symbols of its own).
 *
 * Every block computes pure int8 x int8 dot products of length k into int32 accumulators:
 * the input offset is not applied here because the host folded input_offset * sum(filter row)
 * into the bias ("bias_folded", see tinydeploy/kernels/arm_dsp.py). That is exact: modulo 2^32
 * sum((x + off) * w) + bias == sum(x * w) + (bias + off * sum(w)), and the reference's int32
 * result is that value whenever it does not overflow (where TFLite itself is undefined).
 *
 * Four int8 lanes of a row x and of a filter row w are sign-extended into two int16x2 words
 * each, x_e = (x0, x2), x_o = (x1, x3), so that SMLAD(x_e, w_e) + SMLAD(x_o, w_o) adds the four
 * products. A 2 x 2 block (2 input rows x 2 filter rows) loads 4 words and does 8 SMLADs per
 * 4 lanes. A tail of k % 4 lanes is done in scalar C.
 *
 * |x * w| <= 2^14, so k < 2^17 keeps every partial sum inside int32.
 */
#ifndef TD_GEMM_S8_DSP_H
#define TD_GEMM_S8_DSP_H

#include <stdint.h>

#include "td_requant.h"
#include "td_simd.h"

/* acc[2*r + c] = sum_{i<k} a_r[i] * w_c[i] for rows a0, a1 and filter rows w0, w1 */
static inline void td_dot_2x2_s8(const int8_t *a0, const int8_t *a1, const int8_t *w0,
                                 const int8_t *w1, int32_t k, int32_t acc[4])
{
    int32_t s00 = 0, s01 = 0, s10 = 0, s11 = 0;
    const int8_t *end4 = a0 + (k & ~3);
    while (a0 != end4) {
        const int32_t x = td_read_s8x4(a0);
        const int32_t y = td_read_s8x4(a1);
        const int32_t xe = td_sxtb16(x), xo = td_sxtb16_ror8(x);
        const int32_t ye = td_sxtb16(y), yo = td_sxtb16_ror8(y);
        int32_t w = td_read_s8x4(w0);
        int32_t we = td_sxtb16(w), wo = td_sxtb16_ror8(w);
        s00 = td_smlad(xe, we, s00);
        s00 = td_smlad(xo, wo, s00);
        s10 = td_smlad(ye, we, s10);
        s10 = td_smlad(yo, wo, s10);
        w = td_read_s8x4(w1);
        we = td_sxtb16(w);
        wo = td_sxtb16_ror8(w);
        s01 = td_smlad(xe, we, s01);
        s01 = td_smlad(xo, wo, s01);
        s11 = td_smlad(ye, we, s11);
        s11 = td_smlad(yo, wo, s11);
        a0 += 4;
        a1 += 4;
        w0 += 4;
        w1 += 4;
    }
    for (int32_t i = 0; i < (k & 3); ++i) {
        const int32_t x = a0[i], y = a1[i], u = w0[i], v = w1[i];
        s00 += x * u;
        s01 += x * v;
        s10 += y * u;
        s11 += y * v;
    }
    acc[0] = s00;
    acc[1] = s01;
    acc[2] = s10;
    acc[3] = s11;
}

/* acc[c] = sum_{i<k} a0[i] * w_c[i]: one input row, two filter rows */
static inline void td_dot_1x2_s8(const int8_t *a0, const int8_t *w0, const int8_t *w1,
                                 int32_t k, int32_t acc[2])
{
    int32_t s0 = 0, s1 = 0;
    const int8_t *end4 = a0 + (k & ~3);
    while (a0 != end4) {
        const int32_t x = td_read_s8x4(a0);
        const int32_t xe = td_sxtb16(x), xo = td_sxtb16_ror8(x);
        int32_t w = td_read_s8x4(w0);
        s0 = td_smlad(xe, td_sxtb16(w), s0);
        s0 = td_smlad(xo, td_sxtb16_ror8(w), s0);
        w = td_read_s8x4(w1);
        s1 = td_smlad(xe, td_sxtb16(w), s1);
        s1 = td_smlad(xo, td_sxtb16_ror8(w), s1);
        a0 += 4;
        w0 += 4;
        w1 += 4;
    }
    for (int32_t i = 0; i < (k & 3); ++i) {
        s0 += a0[i] * w0[i];
        s1 += a0[i] * w1[i];
    }
    acc[0] = s0;
    acc[1] = s1;
}

/* sum_{i<k} a0[i] * w0[i] */
static inline int32_t td_dot_1x1_s8(const int8_t *a0, const int8_t *w0, int32_t k)
{
    int32_t s = 0;
    const int8_t *end4 = a0 + (k & ~3);
    while (a0 != end4) {
        const int32_t x = td_read_s8x4(a0);
        const int32_t w = td_read_s8x4(w0);
        s = td_smlad(td_sxtb16(x), td_sxtb16(w), s);
        s = td_smlad(td_sxtb16_ror8(x), td_sxtb16_ror8(w), s);
        a0 += 4;
        w0 += 4;
    }
    for (int32_t i = 0; i < (k & 3); ++i) {
        s += a0[i] * w0[i];
    }
    return s;
}

/* The int8 output of one accumulator: + folded bias (mod 2^32), the one requantize primitive,
 * + output zero point, clamp to the activation range. */
static inline int8_t td_output_s8(int32_t acc, int32_t bias, int32_t mult, int32_t shift,
                                  int32_t output_offset, int32_t act_min, int32_t act_max)
{
    const int32_t v = td_requantize(td_add_wrap(acc, bias), mult, shift) + output_offset;
    return (int8_t)td_clamp_s32(v, act_min, act_max);
}

#endif /* TD_GEMM_S8_DSP_H */
