/*
 * td_gemm_s8_dsp.h - int8 matrix-product building blocks shared by the dsp CONV_2D kernels
 * (static inline, no symbols of its own).
 *
 * Weights stay int8 in flash, in the reference layout ([out_c][k], k = the dot-product depth):
 * four of them are read with one LDR and widened in registers by SXTB16 / SXTB16 ROR #8 into
 * the int16 lanes (w0, w2) and (w1, w3). Inputs are widened the same way, once per input row,
 * with the input offset added by SXTAB16 (so no bias folding: the bias is the model's), into
 * a "rows" buffer in scratch: for every block of four values, for each of TD_GEMM_ROWS rows,
 * the two words (x0+off, x2+off) and (x1+off, x3+off). SMLAD of matching words is then the
 * dot product of four values. The last, partial block holds whatever the input had there:
 * the weight bytes past k are read as 0, so it contributes nothing.
 *
 * One weight word is multiplied with TD_GEMM_ROWS input rows (so the widening of a weight is
 * shared by four output pixels, and the rows' words come from one pointer): 15 instructions
 * for 16 multiply-accumulates. Accumulators start at the bias; |x + off| <= 255 and
 * |w| <= 128 keep every SMLAD inside int32 for depths below 2^16.
 *
 * Requantization: per layer the host chose either the general td_requantize or the rounding
 * form (td_requant.h), which it proved exact for every accumulator the layer can produce.
 * Buffers are 4-byte aligned (arena and scratch are 16-byte aligned).
 */
#ifndef TD_GEMM_S8_DSP_H
#define TD_GEMM_S8_DSP_H

#include <stdint.h>

#include "td_requant.h"
#include "td_simd.h"

#define TD_GEMM_ROWS 4

/* blocks of four values in a row of k values (the last may be partial) */
static inline int32_t td_blocks(int32_t k)
{
    return (k + 3) >> 2;
}

/* Bytes of a rows buffer for rows of k values. */
static inline int32_t td_rows_bytes(int32_t k)
{
    return TD_GEMM_ROWS * 8 * td_blocks(k);
}

/* The four bytes at p, of which only the first n (1..3) are read; the others are 0. */
static inline int32_t td_read_partial_s8(const int8_t *p, int32_t n)
{
    uint32_t v = 0;
    for (int32_t i = 0; i < n; ++i) {
        v |= (uint32_t)(uint8_t)p[i] << (8 * i);
    }
    return (int32_t)v;
}

/* Widens rows[0..n-1] (n <= TD_GEMM_ROWS, k values each) with the input offset into buf;
 * rows n.. of buf are left as they were (their results are never stored). */
static inline void td_extend_rows(const int8_t *const rows[], int32_t n, int32_t k,
                                  int32_t input_offset, td_word_t *buf)
{
    const int32_t off2 = td_pack_off(input_offset);
    const int32_t full = k >> 2;
    for (int32_t j = 0; j < n; ++j) {
        const int8_t *src = rows[j];
        td_word_t *dst = buf + 2 * j;
        for (int32_t q = 0; q < full; ++q, src += 4, dst += 2 * TD_GEMM_ROWS) {
            const int32_t x = td_read_s8x4(src);
            dst[0] = td_sxtab16(off2, x);
            dst[1] = td_sxtab16_ror8(off2, x);
        }
        if (k & 3) {
            const int32_t x = td_read_partial_s8(src, k & 3);
            dst[0] = td_sxtab16(off2, x);
            dst[1] = td_sxtab16_ror8(off2, x);
        }
    }
}

/* Multiplies the rows buffer (n valid rows) with every int8 filter row and writes the int8
 * outputs dst[j * dst_stride + o] for j < n, o < out_c. `round_form` selects the rounding
 * form (host-proven) or the general td_requantize; the compiler specialises both. */
static inline __attribute__((always_inline)) void
td_rows_times_filter_body(const td_word_t *buf, int32_t n, const int8_t *filter, int32_t k,
                          int32_t out_c, const int32_t *bias, const int32_t *mult,
                          const int32_t *shift, int32_t out_off, int32_t lo, int32_t hi,
                          int8_t *dst, int32_t dst_stride, const int round_form)
{
    const int32_t full = k >> 2;
    const int32_t zp2p1 = 2 * out_off + 1;
    for (int32_t o = 0; o < out_c; ++o, filter += k) {
        const int8_t *w = filter;
        const int32_t b = bias != 0 ? bias[o] : 0;
        int32_t a0 = b, a1 = b, a2 = b, a3 = b;
        const td_word_t *x = buf;
        for (int32_t q = 0; q < full; ++q) {
            const int32_t wv = td_read_s8x4(w);
            w += 4;
            const int32_t we = td_sxtb16(wv), wo = td_sxtb16_ror8(wv);
            int32_t x0, x1;
            x = td_load2(x, &x0, &x1);
            a0 = td_smlad(x0, we, a0);
            a0 = td_smlad(x1, wo, a0);
            x = td_load2(x, &x0, &x1);
            a1 = td_smlad(x0, we, a1);
            a1 = td_smlad(x1, wo, a1);
            x = td_load2(x, &x0, &x1);
            a2 = td_smlad(x0, we, a2);
            a2 = td_smlad(x1, wo, a2);
            x = td_load2(x, &x0, &x1);
            a3 = td_smlad(x0, we, a3);
            a3 = td_smlad(x1, wo, a3);
        }
        if (k & 3) {
            const int32_t wv = td_read_partial_s8(w, k & 3);
            const int32_t we = td_sxtb16(wv), wo = td_sxtb16_ror8(wv);
            a0 = td_smlad(x[1], wo, td_smlad(x[0], we, a0));
            a1 = td_smlad(x[3], wo, td_smlad(x[2], we, a1));
            a2 = td_smlad(x[5], wo, td_smlad(x[4], we, a2));
            a3 = td_smlad(x[7], wo, td_smlad(x[6], we, a3));
        }
        const int32_t m = mult[o];
        int8_t *d = dst + o;
        if (round_form) {
            const int32_t e = -shift[o];
            const int32_t r = td_requant_rnd(zp2p1, e);
            a0 = td_requant_round_form(a0, m, e, r);
            a1 = td_requant_round_form(a1, m, e, r);
            a2 = td_requant_round_form(a2, m, e, r);
            a3 = td_requant_round_form(a3, m, e, r);
        } else {
            const int32_t s = shift[o];
            a0 = td_requantize(a0, m, s) + out_off;
            a1 = td_requantize(a1, m, s) + out_off;
            a2 = td_requantize(a2, m, s) + out_off;
            a3 = td_requantize(a3, m, s) + out_off;
        }
        d[0] = (int8_t)td_clamp_s32(a0, lo, hi);
        if (n > 1) {
            d[dst_stride] = (int8_t)td_clamp_s32(a1, lo, hi);
        }
        if (n > 2) {
            d[2 * dst_stride] = (int8_t)td_clamp_s32(a2, lo, hi);
        }
        if (n > 3) {
            d[3 * dst_stride] = (int8_t)td_clamp_s32(a3, lo, hi);
        }
    }
}

/* td_rows_times_filter_body for both requantization forms (one call site each). */
static inline void td_rows_times_filter(const td_word_t *buf, int32_t n, const int8_t *filter,
                                        int32_t k, int32_t out_c, const int32_t *bias,
                                        const int32_t *mult, const int32_t *shift,
                                        int32_t out_off, int32_t lo, int32_t hi,
                                        int8_t *dst, int32_t dst_stride, int32_t round_form)
{
    if (round_form) {
        td_rows_times_filter_body(buf, n, filter, k, out_c, bias, mult, shift, out_off, lo,
                                  hi, dst, dst_stride, 1);
    } else {
        td_rows_times_filter_body(buf, n, filter, k, out_c, bias, mult, shift, out_off, lo,
                                  hi, dst, dst_stride, 0);
    }
}

#endif /* TD_GEMM_S8_DSP_H */
