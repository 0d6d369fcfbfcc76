/*
 * td_opt_dot.h - the inner loops of the portable optimised kernels (static inline, private
 * to kernels/opt/): plain C for cores without the DSP extension (Cortex-M0/M0+), where
 * speed comes from the loop shape (pointer walks, unrolling by four, no per-tap tests) and
 * the requantization form the host chose, not from SIMD.
 */
#ifndef TD_OPT_DOT_H
#define TD_OPT_DOT_H

#include <stdint.h>

#include "td_requant.h"
#include "td_tap_range.h"

/* acc + sum_{i<n} (x[i] + off) * w[i] */
static inline int32_t td_opt_dot(const int8_t *x, const int8_t *w, int32_t n, int32_t off,
                                 int32_t acc)
{
    int32_t i = 0;
    if (off == 0) {
        for (; i + 4 <= n; i += 4) {
            acc += x[i] * w[i] + x[i + 1] * w[i + 1] + x[i + 2] * w[i + 2]
                   + x[i + 3] * w[i + 3];
        }
        for (; i < n; ++i) {
            acc += x[i] * w[i];
        }
        return acc;
    }
    for (; i + 4 <= n; i += 4) {
        acc += (x[i] + off) * w[i] + (x[i + 1] + off) * w[i + 1] + (x[i + 2] + off) * w[i + 2]
               + (x[i + 3] + off) * w[i + 3];
    }
    for (; i < n; ++i) {
        acc += (x[i] + off) * w[i];
    }
    return acc;
}

/* td_smmulr2(acc, m) = (2 * acc * m + 2^31) >> 32 for m in [0, 2^31) (the rounding form's
 * multipliers) from 16-bit halves in 32-bit arithmetic: the Cortex-M0 has no 32 x 32 -> 64
 * multiply, and libgcc's __aeabi_lmul (a call and ~45 instructions for all 64 bits) was half
 * of a requantization. With a = 2 * acc = ah * 2^16 + al and m = mh * 2^16 + ml (al, ml in
 * [0, 2^16)), a * m + 2^31 = 2^32 (ah mh + (ah ml >> 16) + (al mh >> 16)) + 2^16 mid + (al ml
 * mod 2^16), mid = (al ml >> 16) + (ah ml mod 2^16) + (al mh mod 2^16) + 2^15 < 2^18; so the
 * high word adds mid >> 16. Every product fits its type (|ah ml| < 2^31, al ml < 2^32). */
static inline int32_t td_opt_smmulr2(int32_t acc, int32_t m)
{
    const int32_t a = (int32_t)((uint32_t)acc << 1);
    const int32_t ah = a >> 16, mh = m >> 16;
    const uint32_t al = (uint32_t)a & 0xFFFFu, ml = (uint32_t)m & 0xFFFFu;
    const int32_t hl = ah * (int32_t)ml, lh = (int32_t)al * mh;
    const uint32_t mid = ((al * ml) >> 16) + ((uint32_t)hl & 0xFFFFu) + ((uint32_t)lh & 0xFFFFu)
                         + 0x8000u;
    return ah * mh + (hl >> 16) + (lh >> 16) + (int32_t)(mid >> 16);
}

/* The int8 output of one accumulator in the host-chosen requantization form (the rounding
 * form of td_requant.h with td_opt_smmulr2 for its high multiply). */
static inline int8_t td_opt_out(int32_t acc, int32_t m, int32_t shift, int32_t out_off,
                                int32_t lo, int32_t hi, int32_t round_form)
{
    int32_t v;
    if (round_form) {
        const int32_t e = -shift, x = td_opt_smmulr2(acc, m);
        v = (x + (x >> 31) + td_requant_rnd(2 * out_off + 1, e)) >> e;
    } else {
        v = td_requantize(acc, m, shift) + out_off;
    }
    return (int8_t)td_clamp_s32(v, lo, hi);
}

/* The output pixels of a windowed op (convolution, depthwise) in NHWC order, each with its
 * window: the input row and column of its first tap (iy0, ix0; negative in the padding) and
 * the kernel rows [ky0, ky1) and columns [kx0, kx1) that fall inside the image (td_tap_range;
 * the rows found once per output row). Start it with TD_OPT_WALK(p, in0) from either
 * parameter struct; each td_opt_walk_next() moves to the next pixel, 0 after the last. */
typedef struct {
    int32_t batches, in_h, in_w, in_c, out_h, out_w;
    int32_t filter_h, filter_w, stride_h, stride_w, dilation_h, dilation_w, pad_h, pad_w;
    int32_t b, oy, ox;          /* the current output pixel */
    const int8_t *image;        /* its batch's input image */
    int32_t iy0, ix0, ky0, ky1, kx0, kx1;
} td_opt_walk_t;

#define TD_OPT_WALK(p, in0)                                                                  \
    { (p)->batches, (p)->in_h, (p)->in_w, (p)->in_c, (p)->out_h, (p)->out_w, (p)->filter_h,  \
      (p)->filter_w, (p)->stride_h, (p)->stride_w, (p)->dilation_h, (p)->dilation_w,         \
      (p)->pad_h, (p)->pad_w, 0, 0, -1, (in0), 0, 0, 0, 0, 0, 0 }

static inline int32_t td_opt_walk_next(td_opt_walk_t *w)
{
    if (w->ox >= 0 && w->ox + 1 < w->out_w) {
        ++w->ox;
    } else {
        if (w->ox >= 0 && ++w->oy == w->out_h) {   /* past the last row: the next image */
            w->oy = 0;
            if (++w->b == w->batches) {
                return 0;
            }
            w->image += w->in_h * w->in_w * w->in_c;
        }
        w->ox = 0;
        w->iy0 = w->oy * w->stride_h - w->pad_h;
        td_tap_range(w->iy0, w->dilation_h, w->filter_h, w->in_h, &w->ky0, &w->ky1);
    }
    w->ix0 = w->ox * w->stride_w - w->pad_w;
    td_tap_range(w->ix0, w->dilation_w, w->filter_w, w->in_w, &w->kx0, &w->kx1);
    return 1;
}

#endif /* TD_OPT_DOT_H */
