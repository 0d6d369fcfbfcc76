/*
 * td_gemm_s8_dsp.h - int8 dot-product building blocks shared by the dsp CONV_2D and
 * FULLY_CONNECTED kernels (static inline, no symbols of its own).
 *
 * Bias folding: the blocks compute pure int8 x int8 dot products into int32 accumulators; the
 * input offset is not applied because the host folded input_offset * sum(filter row) into the
 * bias ("bias_folded", see tinydeploy/kernels/arm_dsp.py). That is exact: modulo 2^32
 * sum((x + off) * w) + bias == sum(x * w) + (bias + off * sum(w)), and the reference's int32
 * result is that value whenever it does not overflow (where TFLite itself is undefined).
 *
 * "q15 rows": a vector v of k int8 values stored as int16 in the order the SXTB16 instruction
 * produces them, so that a 32-bit word holds two lanes that SMLAD multiplies with the matching
 * word of another q15 row. For each full group of four, v[4q], v[4q+2], v[4q+1], v[4q+3]
 * (SXTB16 gives bytes 0 and 2, SXTB16 ROR #8 bytes 1 and 3); then the k % 4 remaining values
 * in natural order; then zeros up to td_q15_len(k) = k rounded up to a multiple of 4. Filters
 * are packed this way on the host (tinydeploy/kernels/arm_dsp.py: pack_q15_rows); inputs are
 * extended on the device (td_extend_pair). Two q15 rows of the same k have the same dot
 * product as the int8 vectors, and the zero padding makes every row a whole number of
 * two-word blocks: no scalar tail.
 *
 * A "pair" buffer holds two input rows a and b interleaved per block: a[w0] a[w1] b[w0] b[w1]
 * for every 4 values, so one pointer walks both. Buffers and packed filters must be 4-byte
 * aligned (arena and constants are 16-byte aligned; every row is a multiple of 8 bytes).
 *
 * |x * w| <= 2^14, so k < 2^17 keeps every partial sum inside int32.
 */
#ifndef TD_GEMM_S8_DSP_H
#define TD_GEMM_S8_DSP_H

#include <stdint.h>

#include "td_requant.h"
#include "td_simd.h"

/* int16 values in a q15 row of k values (k rounded up to a multiple of 4) */
static inline int32_t td_q15_len(int32_t k)
{
    return (k + 3) & ~3;
}

/* Bytes of a pair buffer for rows of k values. */
static inline int32_t td_pair_bytes(int32_t k)
{
    return 4 * td_q15_len(k);
}

/* Extends the int8 rows a and b (k values each) into the pair buffer `pair`. b may be NULL:
 * its lanes are then zero (a lone last row; its results are discarded). */
static inline void td_extend_pair(const int8_t *a, const int8_t *b, int32_t k, td_word_t *pair)
{
    const int32_t full = k >> 2;
    for (int32_t q = 0; q < full; ++q, pair += 4) {
        const int32_t x = td_read_s8x4(a + 4 * q);
        pair[0] = td_sxtb16(x);
        pair[1] = td_sxtb16_ror8(x);
        if (b != 0) {
            const int32_t y = td_read_s8x4(b + 4 * q);
            pair[2] = td_sxtb16(y);
            pair[3] = td_sxtb16_ror8(y);
        } else {
            pair[2] = 0;
            pair[3] = 0;
        }
    }
    if (k & 3) {
        int16_t ta[4] = { 0, 0, 0, 0 }, tb[4] = { 0, 0, 0, 0 };
        for (int32_t i = 0; i < (k & 3); ++i) {
            ta[i] = a[4 * full + i];
            tb[i] = b != 0 ? b[4 * full + i] : 0;
        }
        memcpy((int32_t *)pair, ta, sizeof ta);
        memcpy((int32_t *)pair + 2, tb, sizeof tb);
    }
}

/* acc[0] = a.w0, acc[1] = a.w1, acc[2] = b.w0, acc[3] = b.w1 for the pair buffer `pair`
 * (rows a, b) and the q15 filter rows w0, w1; `blocks` = td_q15_len(k) / 4. */
static inline void td_dot_2x2_q15(const td_word_t *pair, const td_word_t *w0,
                                  const td_word_t *w1, int32_t blocks, int32_t acc[4])
{
    int32_t s00 = 0, s01 = 0, s10 = 0, s11 = 0;
    const td_word_t *end = pair + 4 * blocks;
    while (pair != end) {
        int32_t a0, a1, b0, b1, u0, u1;
        pair = td_load2(pair, &a0, &a1);
        pair = td_load2(pair, &b0, &b1);
        w0 = td_load2(w0, &u0, &u1);
        s00 = td_smlad(a0, u0, s00);
        s00 = td_smlad(a1, u1, s00);
        s10 = td_smlad(b0, u0, s10);
        s10 = td_smlad(b1, u1, s10);
        w1 = td_load2(w1, &u0, &u1);
        s01 = td_smlad(a0, u0, s01);
        s01 = td_smlad(a1, u1, s01);
        s11 = td_smlad(b0, u0, s11);
        s11 = td_smlad(b1, u1, s11);
    }
    acc[0] = s00;
    acc[1] = s01;
    acc[2] = s10;
    acc[3] = s11;
}

/* The int8 output of one accumulator: + folded bias (mod 2^32), the one requantize primitive,
 * + output zero point, clamp to the activation range. */
static inline int8_t td_output_s8(int32_t acc, int32_t bias, int32_t mult, int32_t shift,
                                  int32_t output_offset, int32_t act_min, int32_t act_max)
{
    const int32_t v = td_requantize(td_add_wrap(acc, bias), mult, shift) + output_offset;
    return (int8_t)td_clamp_s32(v, act_min, act_max);
}

/* Multiplies the pair buffer (rows written to d0 and, if d1 is not NULL, d1) with every
 * q15 filter row and writes the requantized int8 outputs d0[o], d1[o] for o < out_c.
 * An odd last filter row is paired with itself and its duplicate result dropped. */
static inline void td_pair_times_filter(const td_word_t *pair, const int8_t *filter_q15,
                                        int32_t k, int32_t out_c, const int32_t *bias,
                                        const int32_t *mult, const int32_t *shift,
                                        int32_t out_off, int32_t lo, int32_t hi, int8_t *d0,
                                        int8_t *d1)
{
    const int32_t blocks = td_q15_len(k) >> 2;
    const int32_t row_words = 2 * blocks;
    const td_word_t *w = (const td_word_t *)(const void *)filter_q15;
    int32_t acc[4];
    int32_t o = 0;
    if (d1 != 0) { /* the common case, without per-output tests */
        for (; o + 1 < out_c; o += 2, w += 2 * row_words) {
            td_dot_2x2_q15(pair, w, w + row_words, blocks, acc);
            d0[o] = td_output_s8(acc[0], bias[o], mult[o], shift[o], out_off, lo, hi);
            d1[o] = td_output_s8(acc[2], bias[o], mult[o], shift[o], out_off, lo, hi);
            d0[o + 1] = td_output_s8(acc[1], bias[o + 1], mult[o + 1], shift[o + 1], out_off,
                                     lo, hi);
            d1[o + 1] = td_output_s8(acc[3], bias[o + 1], mult[o + 1], shift[o + 1], out_off,
                                     lo, hi);
        }
    }
    for (; o < out_c; o += 2, w += 2 * row_words) {
        const int32_t two = o + 1 < out_c;
        td_dot_2x2_q15(pair, w, two ? w + row_words : w, blocks, acc);
        d0[o] = td_output_s8(acc[0], bias[o], mult[o], shift[o], out_off, lo, hi);
        if (d1 != 0) {
            d1[o] = td_output_s8(acc[2], bias[o], mult[o], shift[o], out_off, lo, hi);
        }
        if (two) {
            d0[o + 1] = td_output_s8(acc[1], bias[o + 1], mult[o + 1], shift[o + 1], out_off,
                                     lo, hi);
            if (d1 != 0) {
                d1[o + 1] = td_output_s8(acc[3], bias[o + 1], mult[o + 1], shift[o + 1],
                                         out_off, lo, hi);
            }
        }
    }
}

#endif /* TD_GEMM_S8_DSP_H */
