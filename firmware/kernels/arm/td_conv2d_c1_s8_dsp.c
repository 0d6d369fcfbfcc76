/*
 * td_conv2d_c1_s8_dsp.c - int8 2-D convolution of a one-channel input with a filter four
 * taps wide (a keyword-spotting first layer: 10x4 on 49x10x1), any filter height, stride,
 * vertical dilation and padding, any output channel count; bit-exact with td_conv2d_s8_ref.
 * No scratch.
 *
 * With one input channel a kernel row's four taps are four consecutive input bytes: one
 * (unaligned) LDR, widened with the input offset by SXTAB16 / SXTAB16 ROR #8 into the lane
 * pairs (kx 0, kx 2) and (kx 1, kx 3). No im2col. Output pixels are taken in pairs (flat b, y,
 * x order); the kernel rows inside the image (td_tap_range: rows outside are skipped, as the
 * reference skips them) of both pixels are widened once into a 192-byte stack buffer
 * (td_c1_gather; at the left and right border the taps outside the image are the input zero
 * point, which widens to 0), and then every pair of output channels runs over those rows:
 * two LDRD for the pixels' words, two LDR for the channels' filter words, four SXTB16 and
 * eight SMLAD, 18 instructions for 16 multiply-accumulates (td_c1_rows, two rows per loop
 * iteration; the rounding form's constant folded into SMMLAR). A pair whose pixels
 * see different kernel rows (a pair across a top or bottom border row) is done one pixel at
 * a time; kernels taller than TD_C1_ROWS rows are done in chunks, gathered again for each
 * pair of channels.
 *
 * Filter layout (the reference's bytes regrouped on the host, arm_dsp.interleave_rows with
 * two lanes): for each pair of output channels, for each kernel row, the two channels' four
 * taps; an odd last channel as in the reference ([ky][kx]).
 *
 * Access order (tinydeploy/kernels/access.py, conv_c1_order): with at most TD_C1_ROWS valid
 * kernel rows, all input of a step (a pair, or one pixel of an unmatched pair) is read
 * before any of its outputs is written.
 *
 * Parameters: td_conv2d_params_t as for td_conv2d_s8_ref with in_c = filter_c = 1,
 * filter_w = 4, dilation_w = 1 (any input width); bias, mult and shift are the reference's;
 * requant_form as chosen on the host.
 */
#include "td_kernels.h"

#include "td_gemm_s8_dsp.h"
#include "td_tap_range.h"

int32_t td_conv2d_c1_s8_dsp_scratch_size(const td_conv2d_params_t *p)
{
    (void)p;
    return 0;
}

/* Kernel rows gathered at a time: 12 rows x 2 pixels x 2 widened words = 192 bytes of stack
 * (a fixed bound, whatever the shape). */
#define TD_C1_ROWS 12

#if TD_SIMD_NATIVE && defined(__OPTIMIZE__)
/* One gathered row of the asm below: 18 instructions for 16 multiply-accumulates. */
#define TD_C1_ROW                                                                          \
    "ldrd %[ae], %[ao], [%[x]], #8\n\t"                                                     \
    "ldrd %[be], %[bo], [%[x]], #8\n\t"                                                     \
    "ldr %[wv], [%[w]], #4\n\t"                                                             \
    "sxtb16 %[we], %[wv]\n\t"                                                               \
    "sxtb16 %[wv], %[wv], ror #8\n\t"                                                       \
    "smlad %[ra0], %[ae], %[we], %[ra0]\n\t"                                                \
    "smlad %[rb0], %[be], %[we], %[rb0]\n\t"                                                \
    "smlad %[ra0], %[ao], %[wv], %[ra0]\n\t"                                                \
    "smlad %[rb0], %[bo], %[wv], %[rb0]\n\t"                                                \
    "ldr %[wv], [%[w]], #4\n\t"                                                             \
    "sxtb16 %[we], %[wv]\n\t"                                                               \
    "sxtb16 %[wv], %[wv], ror #8\n\t"                                                       \
    "smlad %[ra1], %[ae], %[we], %[ra1]\n\t"                                                \
    "smlad %[rb1], %[be], %[we], %[rb1]\n\t"                                                \
    "smlad %[ra1], %[ao], %[wv], %[ra1]\n\t"                                                \
    "smlad %[rb1], %[bo], %[wv], %[rb1]\n\t"
#endif

/* Accumulators of two pixels (a, b) and two channels (0, 1) += n >= 1 gathered rows (four
 * widened words per row: a even, a odd, b even, b odd) times the channels' filter words (two
 * per row, w, 4-byte aligned). */
static inline __attribute__((always_inline)) void
td_c1_rows(const td_word_t *x, int32_t n, const int8_t *w, int32_t *a0, int32_t *a1,
           int32_t *b0, int32_t *b1)
{
#if TD_SIMD_NATIVE && defined(__OPTIMIZE__)
    int32_t ra0 = *a0, ra1 = *a1, rb0 = *b0, rb1 = *b1;
    int32_t ae, ao, be, bo, wv, we;
    __asm__ volatile(
        "tst %[n], #1\n\t"           /* an odd row first, then two per iteration */
        "beq 2f\n\t"
        TD_C1_ROW
        "subs %[n], %[n], #1\n\t"
        "beq 3f\n\t"
        "2:\n\t"
        TD_C1_ROW
        TD_C1_ROW
        "subs %[n], %[n], #2\n\t"
        "bne 2b\n\t"
        "3:\n\t"
        : [ra0] "+r"(ra0), [ra1] "+r"(ra1), [rb0] "+r"(rb0), [rb1] "+r"(rb1), [x] "+r"(x),
          [w] "+r"(w), [n] "+r"(n), [ae] "=&r"(ae), [ao] "=&r"(ao), [be] "=&r"(be),
          [bo] "=&r"(bo), [wv] "=&r"(wv), [we] "=&r"(we)
        :
        : "cc", "memory");
    *a0 = ra0;
    *a1 = ra1;
    *b0 = rb0;
    *b1 = rb1;
#else
    for (; n > 0; --n, x += 4, w += 8) {
        const int32_t w0 = td_read_s8x4(w), w1 = td_read_s8x4(w + 4);
        *a0 = td_smlad(x[1], td_sxtb16_ror8(w0), td_smlad(x[0], td_sxtb16(w0), *a0));
        *b0 = td_smlad(x[3], td_sxtb16_ror8(w0), td_smlad(x[2], td_sxtb16(w0), *b0));
        *a1 = td_smlad(x[1], td_sxtb16_ror8(w1), td_smlad(x[0], td_sxtb16(w1), *a1));
        *b1 = td_smlad(x[3], td_sxtb16_ror8(w1), td_smlad(x[2], td_sxtb16(w1), *b1));
    }
#endif
}

/* One output pixel: its first input row inside the image, the column of its first tap and
 * its kernel rows inside the image [k0, k1). */
typedef struct {
    const int8_t *row;
    int32_t ix0, k0, k1;
} td_c1_pixel_t;

/* Kernel rows r0 .. r0 + n - 1 (counted from the pixel's k0) of one pixel, widened with the
 * input offset, into words 0 and 1 (slot 0) or 2 and 3 (slot 1) of each buffer row. */
static void td_c1_gather(const td_conv2d_params_t *p, const td_c1_pixel_t *px, int32_t r0,
                         int32_t n, td_word_t *buf)
{
    const int32_t step = p->dilation_h * p->in_w;
    const int32_t off2 = td_pack_off(p->input_offset);
    const int32_t ix0 = px->ix0, inside = ix0 >= 0 && ix0 + 4 <= p->in_w;
    const int8_t zp = (int8_t)(-p->input_offset);
    const int8_t *row = px->row + r0 * step;
    for (int32_t r = 0; r < n; ++r, row += step, buf += 4) {
        int32_t x;
        if (inside) {
            x = td_read_s8x4(row + ix0);
        } else {
            int8_t t[4];
            for (int32_t kx = 0; kx < 4; ++kx) {
                const int32_t ix = ix0 + kx;
                t[kx] = ix >= 0 && ix < p->in_w ? row[ix] : zp;
            }
            x = td_read_s8x4(t);
        }
        buf[0] = td_sxtab16(off2, x);
        buf[1] = td_sxtab16_ror8(off2, x);
    }
}

/* The outputs of pixels a and b (at da, db) in the general requantization (a call: it is
 * the rare path, kept out of the pair loop). */
static __attribute__((noinline)) void
td_c1_store_general(const td_conv2d_params_t *p, int32_t acc_a, int32_t acc_b, int32_t m,
                    int32_t sh, int8_t *da, int8_t *db)
{
    const int32_t zp = p->output_offset, lo = p->act_min, hi = p->act_max;
    *db = td_gemm_out_general(acc_b, m, sh, zp, lo, hi, p->requant_form);
    *da = td_gemm_out_general(acc_a, m, sh, zp, lo, hi, p->requant_form);
}

/* *da, *db from the accumulators, with multiplier m and shift sh (fast: td_fast_requant
 * holds for the layer; zp2p1 = 2 * zero point + 1). */
static inline __attribute__((always_inline)) void
td_c1_store(const td_conv2d_params_t *p, int32_t acc_a, int32_t acc_b, int32_t m, int32_t sh,
            int32_t zp2p1, int8_t *da, int8_t *db, int fast)
{
    if (fast) {
        const int32_t e = -sh, r = td_requant_rnd(zp2p1, e);
        *db = (int8_t)td_ssat8(td_requant_round_fold(acc_b, m, e, r));
        *da = (int8_t)td_ssat8(td_requant_round_fold(acc_a, m, e, r));
    } else {
        td_c1_store_general(p, acc_a, acc_b, m, sh, da, db);
    }
}

/* Every output channel of pixels a and b (b may be a), which see the same kernel rows. */
static void td_c1_pair(const td_conv2d_params_t *p, const td_c1_pixel_t *a,
                       const td_c1_pixel_t *b, int8_t *da, int8_t *db, int fast)
{
    const int32_t fh = p->filter_h, oc = p->out_c, k0 = a->k0, rows = a->k1 - a->k0;
    const int32_t *bias = p->bias, *mult = p->mult;
    const int8_t *shift = p->shift;
    const int32_t zp2p1 = 2 * p->output_offset + 1;
    td_word_t buf[4 * TD_C1_ROWS];
    const int32_t refill = rows > TD_C1_ROWS;
    if (!refill) {
        td_c1_gather(p, a, 0, rows, buf);
        td_c1_gather(p, b, 0, rows, buf + 2);
    }
    const int8_t *wg = p->filter + 8 * k0;
    const int32_t wstride = 8 * fh;
    int32_t c = 0;
    for (; c + 1 < oc; c += 2, wg += wstride) {   /* (indexed: one counter to keep) */
        int32_t a0 = 0, a1 = 0;
        if (bias != 0) {
            a0 = bias[c];
            a1 = bias[c + 1];
        }
        int32_t b0 = a0, b1 = a1;
        if (!refill) {
            if (rows > 0) {
                td_c1_rows(buf, rows, wg, &a0, &a1, &b0, &b1);
            }
        } else {
            for (int32_t r = 0; r < rows; r += TD_C1_ROWS) {
                const int32_t n = rows - r < TD_C1_ROWS ? rows - r : TD_C1_ROWS;
                td_c1_gather(p, a, r, n, buf);
                td_c1_gather(p, b, r, n, buf + 2);
                td_c1_rows(buf, n, wg + 8 * r, &a0, &a1, &b0, &b1);
            }
        }
        td_c1_store(p, a0, b0, mult[c], shift[c], zp2p1, da + c, db + c, fast);
        td_c1_store(p, a1, b1, mult[c + 1], shift[c + 1], zp2p1, da + c + 1, db + c + 1,
                    fast);
    }
    mult += c;
    shift += c;
    da += c;
    db += c;
    if (bias != 0) {
        bias += c;
    }
    if (oc & 1) {   /* an odd last channel: reference layout [ky][kx] */
        const int8_t *w = wg - 8 * k0 + 4 * k0;
        int32_t acc_a = bias != 0 ? bias[0] : 0, acc_b = acc_a;
        for (int32_t r = 0; r < rows; ++r, w += 4) {
            const int32_t j = r % TD_C1_ROWS;
            if (refill && j == 0) {
                const int32_t n = rows - r < TD_C1_ROWS ? rows - r : TD_C1_ROWS;
                td_c1_gather(p, a, r, n, buf);
                td_c1_gather(p, b, r, n, buf + 2);
            }
            const int32_t wv = td_read_s8x4(w);
            const int32_t we = td_sxtb16(wv), wo = td_sxtb16_ror8(wv);
            acc_a = td_smlad(buf[4 * j + 1], wo, td_smlad(buf[4 * j], we, acc_a));
            acc_b = td_smlad(buf[4 * j + 3], wo, td_smlad(buf[4 * j + 2], we, acc_b));
        }
        td_c1_store(p, acc_a, acc_b, mult[0], shift[0], zp2p1, da, db, fast);
    }
}

/* Output pixel `px` (flat b, y, x order): where its rows are and which it sees. */
static void td_c1_locate(const td_conv2d_params_t *p, const int8_t *in0, int32_t px,
                         td_c1_pixel_t *out)
{
    const int32_t per_image = p->out_h * p->out_w;
    const int32_t b = px / per_image, oy = (px - b * per_image) / p->out_w;
    const int32_t ox = px - b * per_image - oy * p->out_w;
    const int32_t iy0 = oy * p->stride_h - p->pad_h;
    td_tap_range(iy0, p->dilation_h, p->filter_h, p->in_h, &out->k0, &out->k1);
    out->row = in0 + (b * p->in_h + iy0 + out->k0 * p->dilation_h) * p->in_w;
    out->ix0 = ox * p->stride_w - p->pad_w;
}

void td_conv2d_c1_s8_dsp(const td_conv2d_params_t *p, const int8_t *in0, int8_t *out0)
{
    const int fast = td_fast_requant(p->requant_form, p->act_min, p->act_max);
    const int32_t oc = p->out_c, pixels = p->batches * p->out_h * p->out_w;
    for (int32_t px = 0; px < pixels; px += 2) {
        td_c1_pixel_t a, b;
        td_c1_locate(p, in0, px, &a);
        int8_t *da = out0 + px * oc;
        if (px + 1 == pixels) {
            td_c1_pair(p, &a, &a, da, da, fast);
            break;
        }
        td_c1_locate(p, in0, px + 1, &b);
        if (a.k0 == b.k0 && a.k1 == b.k1) {
            td_c1_pair(p, &a, &b, da, da + oc, fast);
        } else {   /* different kernel rows: one pixel at a time */
            td_c1_pair(p, &a, &a, da, da, fast);
            td_c1_pair(p, &b, &b, da + oc, da + oc, fast);
        }
    }
}
