/*
 * td_gemm_s8_dsp.h - int8 matrix-product building blocks shared by the dsp CONV_2D kernels
 * (static inline, except td_gemm_out_general and the pointwise products td_pw_product and
 * td_pw_group: td_gemm_s8_dsp.c).
 *
 * Weights stay int8 in flash, in the reference layout ([out_c][k], k = the dot-product depth):
 * four of them are read with one LDR and widened in registers by SXTB16 / SXTB16 ROR #8 into
 * the int16 lanes (w0, w2) and (w1, w3). Inputs are widened the same way, once per input row,
 * with the input offset added by SXTAB16 (so no bias folding: the bias is the model's), into
 * a "rows" buffer (a td_pw_frame_t in the kernel's stack frame, or arena scratch for
 * td_conv2d_s8_dsp): for every block of four values, for each of TD_GEMM_ROWS rows,
 * the two words (x0+off, x2+off) and (x1+off, x3+off). SMLAD of matching words is then the
 * dot product of four values. In the last, partial block the lanes past k hold 0 (and the
 * weight bytes there are read as 0 by both products), so it contributes nothing.
 *
 * One weight word is multiplied with several input rows (so the widening of a weight is shared
 * by several output pixels, and the rows' words come from one pointer): TD_GEMM_ROWS (6) in
 * the pointwise product, 18 instructions for 24 multiply-accumulates in its channel loop
 * (td_gemm_s8_dsp.c; 5 rows for a partial group, 15 for 20); TD_IM2COL_ROWS (4) in td_conv2d_s8_dsp, 16 for 16 (td_dot_rows, inline
 * assembly). Accumulators start at the bias; |x + off| <= 255 and |w| <= 128
 * keep every SMLAD inside int32 for depths below 2^16.
 *
 * Requantization: per layer the host chose either the general td_requantize or the rounding
 * form (td_requant.h), which it proved exact for every accumulator the layer can produce.
 * Buffers are 4-byte aligned (arena and scratch are 16-byte aligned).
 */
#ifndef TD_GEMM_S8_DSP_H
#define TD_GEMM_S8_DSP_H

#include <stdint.h>

#include "td_kernels.h"
#include "td_requant.h"
#include "td_simd.h"

/* Input rows multiplied together by the pointwise product (td_pw_product): 6 (18 instructions
 * per 24 MACs in its channel loop; 48 bytes of rows buffer per 4 values of depth). More rows
 * would need more registers than an inline-assembly loop can take. The functions below take
 * the row count as a constant argument, at most TD_GEMM_ROWS. */
#define TD_GEMM_ROWS 6
/* td_conv2d_s8_dsp's rows, whose rows buffer and columns can be arena scratch: 4 (16
 * instructions per 16 MACs in td_dot_rows), two thirds of the scratch of six */
#define TD_IM2COL_ROWS 4

/* The pointwise and window kernels keep their rows buffer in a td_pw_frame_t in their stack
 * frame (td_pw_group's for the pointwise ones), a fixed TD_GEMM_STACK_BYTES (measured by
 * -fstack-usage like any frame), so the arena holds no scratch for them: depths up to
 * TD_GEMM_STACK_DEPTH (64) values. Deeper layers go to td_conv2d_s8_dsp, whose rows buffer
 * is arena scratch where it does not fit the same number of bytes in its frame, or to the
 * frame-only forms with fewer rows. */
#define TD_GEMM_STACK_DEPTH 64
#define TD_GEMM_STACK_BYTES (TD_GEMM_ROWS * 8 * TD_GEMM_STACK_DEPTH / 4)

/* The input pixel that the 1x1 filter of output pixel (b, y, x) reads (no padding). */
static inline const int8_t *td_pw_pixel(const td_conv2d_params_t *p, const int8_t *in0,
                                        int32_t b, int32_t y, int32_t x)
{
    return in0 + ((b * p->in_h + y * p->stride_h) * p->in_w + x * p->stride_w) * p->in_c;
}

/* blocks of four values in a row of k values (the last may be partial) */
static inline int32_t td_blocks(int32_t k)
{
    return (k + 3) >> 2;
}

/* Bytes of a rows buffer for `rows` rows of k values. */
static inline int32_t td_rows_bytes(int32_t rows, int32_t k)
{
    return rows * 8 * td_blocks(k);
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

/* The blocks of four values from *src up to end (> *src) widened with the input offset (off2
 * in both lanes) into the rows buffer at *dst, one block per 2 * rows words; both
 * pointers advanced past them. Per block one LDR (any alignment), two SXTAB16, one STRD. */
static inline __attribute__((always_inline)) void
td_widen_row(const int8_t **src, const int8_t *end, td_word_t **dst, int32_t off2,
             const int32_t rows)
{
    const int8_t *s = *src;
    td_word_t *d = *dst;
#if TD_SIMD_NATIVE && defined(__OPTIMIZE__)
    int32_t x, lo;
    __asm__ volatile(
        "1:\n\t"
        "ldr     %[x], [%[s]], #4\n\t"
        "sxtab16 %[lo], %[off2], %[x]\n\t"
        "sxtab16 %[x], %[off2], %[x], ror #8\n\t"
        "strd    %[lo], %[x], [%[d]], %[step]\n\t"
        "cmp     %[s], %[end]\n\t"
        "bne     1b\n\t"
        : [s] "+r"(s), [d] "+r"(d), [x] "=&r"(x), [lo] "=&r"(lo)
        : [end] "r"(end), [off2] "r"(off2), [step] "i"(8 * rows)
        : "cc", "memory");
#else
    for (; s != end; s += 4, d += 2 * rows) {
        const int32_t x = td_read_s8x4(s);
        d[0] = td_sxtab16(off2, x);
        d[1] = td_sxtab16_ror8(off2, x);
    }
#endif
    *src = s;
    *dst = d;
}

/* Widens rows[0..n-1] (1 <= n <= nrows, k values each) with the input offset into the
 * buffer buf of nrows rows; the rows n.. of buf repeat row n-1 (their outputs are written to
 * row n-1's place again, with the same values), so the matrix product needs no per-row
 * tests. */
static inline __attribute__((always_inline)) void
td_extend_rows(const int8_t *const rows[], int32_t n, int32_t k, int32_t input_offset,
               td_word_t *buf, const int32_t nrows)
{
    const int32_t off2 = td_pack_off(input_offset);
    const int32_t full = k >> 2;
    for (int32_t j = 0; j < nrows; ++j) {
        const int8_t *src = rows[j < n ? j : n - 1];
        const int8_t *const end = src + 4 * full;
        td_word_t *dst = buf + 2 * j;
        if (full > 0) {
            td_widen_row(&src, end, &dst, off2, nrows);
        }
        if (k & 3) {   /* lanes past k hold 0 (so any weight there contributes nothing) */
            const int32_t t = k & 3;
            const int32_t x = td_read_partial_s8(src, t);
            dst[0] = (int32_t)((uint32_t)td_sxtab16(off2, x) & (t == 3 ? 0xFFFFFFFFu : 0xFFFFu));
            dst[1] = (int32_t)((uint32_t)td_sxtab16_ror8(off2, x) & (t >= 2 ? 0xFFFFu : 0u));
        }
    }
}

/* The output value of an accumulator before the clamp, in the chosen requantization form
 * (e_or_shift: e = -shift for the rounding form, else the shift). */
static inline __attribute__((always_inline)) int32_t
td_gemm_value(int32_t acc, int32_t m, int32_t e_or_shift, int32_t r, int32_t out_off,
              const int round_form)
{
    return round_form ? td_requant_round_form(acc, m, e_or_shift, r)
                      : td_requantize(acc, m, e_or_shift) + out_off;
}

/* clamp to [lo, hi]; full_range: the range is all of int8 (one SSAT) */
static inline __attribute__((always_inline)) int8_t
td_gemm_clamp(int32_t v, int32_t lo, int32_t hi, const int full_range)
{
    return full_range ? (int8_t)td_ssat8(v) : (int8_t)td_clamp_s32(v, lo, hi);
}

/* a[0..rows-1] += the dot products of `blocks` >= 1 blocks of the widened rows at x (the
 * rows buffer layout, rows = 1, 2, 3, 4 or 6) with filter row *w (advanced past them): per
 * block one LDR and two SXTB16 of the weights, one LDRD per row and two SMLAD. */
static inline __attribute__((always_inline)) void
td_dot_rows(const td_word_t *x, const int8_t **w, int32_t blocks, int32_t a[TD_GEMM_ROWS],
            const int32_t rows)
{
#if TD_SIMD_NATIVE && defined(__OPTIMIZE__)
    int32_t r0 = a[0], r1 = a[1], r2 = a[2], r3 = a[3];
    const int8_t *pw = *w;
    int32_t wv, we, x0, x1;
#define TD_DOT_ROW(r)                                   \
        "ldrd %[x0], %[x1], [%[x]], #8\n\t"             \
        "smlad %[" r "], %[x0], %[we], %[" r "]\n\t"    \
        "smlad %[" r "], %[x1], %[wv], %[" r "]\n\t"
#define TD_DOT_WEIGHTS                                  \
        "ldr %[wv], [%[pw]], #4\n\t"                    \
        "sxtb16 %[we], %[wv]\n\t"                       \
        "sxtb16 %[wv], %[wv], ror #8\n\t"
    if (rows == 6) {
        int32_t r4 = a[4], r5 = a[5];
        __asm__ volatile(
            "1:\n\t"
            TD_DOT_WEIGHTS
            TD_DOT_ROW("r0") TD_DOT_ROW("r1") TD_DOT_ROW("r2") TD_DOT_ROW("r3")
            TD_DOT_ROW("r4") TD_DOT_ROW("r5")
            "subs %[n], %[n], #1\n\t"
            "bne 1b\n\t"
            : [r0] "+r"(r0), [r1] "+r"(r1), [r2] "+r"(r2), [r3] "+r"(r3), [r4] "+r"(r4),
              [r5] "+r"(r5), [x] "+r"(x), [pw] "+r"(pw), [n] "+r"(blocks), [wv] "=&r"(wv),
              [we] "=&r"(we), [x0] "=&r"(x0), [x1] "=&r"(x1)
            :
            : "cc", "memory");
        a[4] = r4;
        a[5] = r5;
    } else if (rows < 4) {   /* one block per iteration */
#define TD_DOT_FEW(rows_asm)                                                              \
        __asm__ volatile(                                                                 \
            "1:\n\t" TD_DOT_WEIGHTS rows_asm                                              \
            "subs %[n], %[n], #1\n\t"                                                     \
            "bne 1b\n\t"                                                                  \
            : [r0] "+r"(r0), [r1] "+r"(r1), [r2] "+r"(r2), [x] "+r"(x), [pw] "+r"(pw),     \
              [n] "+r"(blocks), [wv] "=&r"(wv), [we] "=&r"(we), [x0] "=&r"(x0),             \
              [x1] "=&r"(x1)                                                              \
            :                                                                             \
            : "cc", "memory")
        if (rows == 3) {
            TD_DOT_FEW(TD_DOT_ROW("r0") TD_DOT_ROW("r1") TD_DOT_ROW("r2"));
        } else if (rows == 2) {
            TD_DOT_FEW(TD_DOT_ROW("r0") TD_DOT_ROW("r1"));
        } else {
            TD_DOT_FEW(TD_DOT_ROW("r0"));
        }
#undef TD_DOT_FEW
    } else {   /* two blocks per iteration, an odd count entering in the middle */
        __asm__ volatile(
            "lsrs %[n], %[n], #1\n\t"
            "bcc 1f\n\t"
            "adds %[n], %[n], #1\n\t"
            "b 2f\n\t"
            "1:\n\t"
            TD_DOT_WEIGHTS
            TD_DOT_ROW("r0") TD_DOT_ROW("r1") TD_DOT_ROW("r2") TD_DOT_ROW("r3")
            "2:\n\t"
            TD_DOT_WEIGHTS
            TD_DOT_ROW("r0") TD_DOT_ROW("r1") TD_DOT_ROW("r2") TD_DOT_ROW("r3")
            "subs %[n], %[n], #1\n\t"
            "bne 1b\n\t"
            : [r0] "+r"(r0), [r1] "+r"(r1), [r2] "+r"(r2), [r3] "+r"(r3), [x] "+r"(x),
              [pw] "+r"(pw), [n] "+r"(blocks), [wv] "=&r"(wv), [we] "=&r"(we), [x0] "=&r"(x0),
              [x1] "=&r"(x1)
            :
            : "cc", "memory");
    }
#undef TD_DOT_ROW
#undef TD_DOT_WEIGHTS
    a[0] = r0;
    a[1] = r1;
    a[2] = r2;
    a[3] = r3;
    *w = pw;
#else
    const int8_t *pw = *w;
    for (; blocks > 0; --blocks, pw += 4, x += 2 * rows) {
        const int32_t wv = td_read_s8x4(pw);
        const int32_t we = td_sxtb16(wv), wo = td_sxtb16_ror8(wv);
        for (int32_t j = 0; j < rows; ++j) {
            a[j] = td_smlad(x[2 * j + 1], wo, td_smlad(x[2 * j], we, a[j]));
        }
    }
    *w = pw;
#endif
}

/* 1 when the branch-free requantization needs no clamp but SSAT: the rounding form proven on
 * the host (requant_form) and an activation range that is all of int8. */
static inline int td_fast_requant(int32_t requant_form, int32_t act_min, int32_t act_max)
{
    return requant_form && act_min == INT8_MIN && act_max == INT8_MAX;
}

/* One output in the requantization the host chose, clamped to [lo, hi]: the path of layers
 * whose range is not all of int8 or whose rounding form was not proven. A call, defined once
 * in td_gemm_s8_dsp.c, so that the kernels' copies for those layers stay small and every
 * kernel of a build shares one copy. */
int8_t td_gemm_out_general(int32_t acc, int32_t m, int32_t shift, int32_t out_off, int32_t lo,
                           int32_t hi, int32_t round_form);

/* The matrix product of the rows buffer with every int8 filter row: output o of row j goes
 * to d[j][o]. Specialised by the compiler for the fast requantization (td_fast_requant) or
 * the general one (td_gemm_out_general). */
static inline __attribute__((always_inline)) void
td_rows_times_filter_body(const td_word_t *buf, const int8_t *filter, int32_t k,
                          int32_t out_c, const int32_t *bias, const int32_t *mult,
                          const int8_t *shift, int32_t out_off, int32_t lo, int32_t hi,
                          int8_t *const d[TD_GEMM_ROWS], int32_t round_form, const int fast,
                          const int32_t rows)
{
    const int32_t full = k >> 2, tail = k & 3;
    const int32_t zp2p1 = 2 * out_off + 1;
    int8_t *d0 = d[0], *d1 = d[1], *d2 = d[2], *d3 = d[3], *d4 = d[4], *d5 = d[5];
    const int8_t *w = filter;
    const td_word_t *x = buf + 2 * rows * full;   /* the partial block */
    for (int32_t o = 0; o < out_c; ++o) {
        const int32_t b = bias != 0 ? bias[o] : 0;
        int32_t a[TD_GEMM_ROWS] = {b, b, b, b, b, b};
        if (full > 0) {
            td_dot_rows(buf, &w, full, a, rows);
        }
        int32_t a0 = a[0], a1 = a[1], a2 = a[2], a3 = a[3], a4 = a[4], a5 = a[5];
        if (tail) {
            const int32_t wv = td_read_partial_s8(w, tail);
            w += tail;
            const int32_t we = td_sxtb16(wv), wo = td_sxtb16_ror8(wv);
            a0 = td_smlad(x[1], wo, td_smlad(x[0], we, a0));
            if (rows > 1) {
                a1 = td_smlad(x[3], wo, td_smlad(x[2], we, a1));
            }
            if (rows > 2) {
                a2 = td_smlad(x[5], wo, td_smlad(x[4], we, a2));
            }
            if (rows > 3) {
                a3 = td_smlad(x[7], wo, td_smlad(x[6], we, a3));
            }
            if (rows > 4) {
                a4 = td_smlad(x[9], wo, td_smlad(x[8], we, a4));
                a5 = td_smlad(x[11], wo, td_smlad(x[10], we, a5));
            }
        }
        const int32_t m = mult[o];
        if (fast) {
            const int32_t e = -shift[o], r = td_requant_rnd(zp2p1, e);
#define TD_GEMM_OUT(dj, aj) (dj)[o] = (int8_t)td_ssat8(td_requant_round_form((aj), m, e, r))
            if (rows > 4) {
                TD_GEMM_OUT(d5, a5);
                TD_GEMM_OUT(d4, a4);
            }
            if (rows > 3) {
                TD_GEMM_OUT(d3, a3);
            }
            if (rows > 2) {
                TD_GEMM_OUT(d2, a2);
            }
            if (rows > 1) {
                TD_GEMM_OUT(d1, a1);
            }
            TD_GEMM_OUT(d0, a0);
#undef TD_GEMM_OUT
        } else {
            /* a call per output anyway: a loop (smaller code) */
            const int32_t sh = shift[o];
            const int32_t v[TD_GEMM_ROWS] = {a0, a1, a2, a3, a4, a5};
            for (int32_t j = rows - 1; j >= 0; --j) {
                d[j][o] = td_gemm_out_general(v[j], m, sh, out_off, lo, hi, round_form);
            }
        }
    }
}

/* The next output pixel (b, y, x) in flat (batch, y, x) order. */
static inline void td_next_pixel(const td_conv2d_params_t *p, int32_t *b, int32_t *y,
                                 int32_t *x)
{
    if (++*x == p->out_w) {
        *x = 0;
        if (++*y == p->out_h) {
            *y = 0;
            ++*b;
        }
    }
}

/* What td_pw_channels reads; the offsets are the assembly's. Pointers marked "end" point
 * past their last element (indexed by o in [-out_c, -1]). */
typedef struct {
    int8_t *d[TD_GEMM_ROWS];   /* [0..20]  end of each output row's out_c bytes */
    const td_word_t *rows;     /* [24]     first word of the rows buffer in use */
    const int32_t *bias;       /* [28]     end of bias[out_c] */
    const int32_t *mult;       /* [32]     end of mult[out_c] */
    const int8_t *shift;       /* [36]     end of shift[out_c] */
    int32_t zp2p1;             /* [40]     2 * output_offset + 1 */
    int32_t entry;             /* [44]     the unrolled block to start at: 16 - blocks */
    const int8_t *filter;      /* [48]     out_c rows of 4 * blocks bytes each, 4-byte aligned */
    int32_t neg_out_c;         /* [52]     -out_c */
    uint32_t entry_pc;         /* [56]     the entry block's address (set by the loop) */
    int32_t o;                 /* [60]     the loop's channel index while lr holds weights */
} td_pw_state_t;

/* The rows buffer and, right after it, the state: the end of the rows is the state's
 * address (where the depth loop ends). The rows in use are the last td_rows_bytes(rows, k)
 * (td_pw_rows). */
typedef struct {
    td_word_t rows[TD_GEMM_STACK_BYTES / 4];
    td_pw_state_t st;
} td_pw_frame_t;

/* The widened rows of depth k in a frame, `rows` of them: the last td_rows_bytes(rows, k)
 * bytes of its rows buffer (so they end at the state, the channel loop's sentinel). */
static inline td_word_t *td_pw_rows(td_pw_frame_t *f, int32_t k, int32_t rows)
{
    return f->rows + TD_GEMM_STACK_BYTES / 4 - 2 * rows * td_blocks(k);
}

/* The rows of the pointwise product of a group of n (1..TD_GEMM_ROWS) pixels:
 * TD_PW_SHORT_ROWS (5) for a partial group under the branch-free requantization over all of
 * int8 (the assembly channel loops: 15 instructions per 20 multiply-accumulates of five rows,
 * so a group of five, one output row of a streamed keyword-spotting layer, costs 5/6 of a
 * full group, and smaller groups repeat fewer rows), else TD_GEMM_ROWS. The caller widens
 * this many rows (td_pw_rows) and td_pw_product multiplies as many. */
#define TD_PW_SHORT_ROWS 5
/* TD_PW_SHORT_GROUPS 0 leaves the five-row loop out (1,800 B of flash on the Cortex-M4): the
 * build defines it so when no call of the model has fewer than six output pixels in all
 * (tinydeploy/codegen/project.py), where it would only serve each layer's last group of a
 * full window, under 1 % of its instructions. A streamed step's one row of five pixels
 * is all partial groups. */
#ifndef TD_PW_SHORT_GROUPS
#define TD_PW_SHORT_GROUPS 1
#endif
/* TD_PW_GENERAL 0 leaves td_pw_product's C product with the general requantization out (and
 * with it, unless another kernel calls it, td_gemm_out_general): the build defines it so
 * when every call of the pointwise product has the branch-free requantization over all of
 * int8, a bias and whole words of filter (tinydeploy/codegen/project.py), as every layer of
 * the DS-CNN does. */
#ifndef TD_PW_GENERAL
#define TD_PW_GENERAL 1
#endif
static inline int32_t td_pw_rows_for(const td_conv2d_params_t *p, int32_t n)
{
    return TD_PW_SHORT_GROUPS && n < TD_GEMM_ROWS
                   && td_fast_requant(p->requant_form, p->act_min, p->act_max)
               ? TD_PW_SHORT_ROWS
               : TD_GEMM_ROWS;
}

/* The outputs of the widened rows in f (td_pw_rows(f, k, td_pw_rows_for(p, n)),
 * k <= TD_GEMM_STACK_DEPTH values each, the rows n.. repeating row n-1) multiplied with
 * every filter row of p (depth k) to dst + j * out_c for the rows j < n
 * (td_gemm_s8_dsp.c). */
void td_pw_product(const td_conv2d_params_t *p, int32_t k, td_pw_frame_t *f, int32_t n,
                   int8_t *dst);

/* The outputs of a group of n (1..TD_GEMM_ROWS) input pixels rows[0..n-1] of a pointwise
 * layer (in_c <= TD_GEMM_STACK_DEPTH) to dst + j * out_c: the rows widened into the rows
 * buffer in this function's frame, then multiplied with every filter row (td_gemm_s8_dsp.c).
 * Every input byte is read before the first output byte is written. */
void td_pw_group(const td_conv2d_params_t *p, const int8_t *const rows[TD_GEMM_ROWS],
                 int32_t n, int8_t *dst);

/* Multiplies the rows buffer with every filter row and writes the int8 outputs of row j
 * (j < n) to dst + j * dst_stride; rows past n repeat row n-1 (see td_extend_rows). */
static inline __attribute__((always_inline)) void
td_rows_times_filter(const td_word_t *buf, int32_t n, const int8_t *filter, int32_t k,
                     int32_t out_c, const int32_t *bias, const int32_t *mult,
                     const int8_t *shift, int32_t out_off, int32_t lo, int32_t hi,
                     int8_t *dst, int32_t dst_stride, int32_t round_form, const int32_t rows)
{
    int8_t *d[TD_GEMM_ROWS];
    for (int32_t j = 0; j < TD_GEMM_ROWS; ++j) {
        d[j] = dst + (j < n ? j : n - 1) * dst_stride;
    }
    /* two copies: the branch-free form over all of int8 (every DS-CNN layer), and the rest
     * with the form tested per output */
    if (td_fast_requant(round_form, lo, hi)) {
        td_rows_times_filter_body(buf, filter, k, out_c, bias, mult, shift, out_off, lo, hi,
                                  d, 1, 1, rows);
    } else {
        td_rows_times_filter_body(buf, filter, k, out_c, bias, mult, shift, out_off, lo, hi,
                                  d, round_form, 0, rows);
    }
}

#endif /* TD_GEMM_S8_DSP_H */
