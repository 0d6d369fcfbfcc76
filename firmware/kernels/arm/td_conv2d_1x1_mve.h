/*
 * td_conv2d_1x1_mve.h - one output pixel of the int8 pointwise (1x1) convolution with the
 * M-profile Vector Extension (Helium). Private to td_conv2d_1x1_s8_mve.c (pixels front to
 * back) and td_conv2d_1x1_back_s8_mve.c (back to front), which differ only in the order in
 * which they visit the pixels (td_pw_image_mve). Static inline: no call on the hot path.
 *
 * For one output pixel, four filter rows at a time are multiplied with the pixel's channels,
 * 16 int8 lanes per VMLADAVA (multiply, add across the vector, accumulate into a scalar
 * int32). The last partial chunk of a row uses tail-predicated zeroing loads (VCTP8 +
 * VLDRB.Z): disabled lanes read no memory and hold 0, so the rows need no padding and no read
 * goes past a tensor. An out_c that is not a multiple of 4 repeats the last row in the
 * missing slots and drops the duplicate results. Requantization runs on the four results at
 * once (td_requantize_x4_mve, identical to td_requantize for every input).
 *
 * Access order (what in-place execution relies on, tinydeploy/kernels/access.py): the
 * output channels of the pixel are written in groups of four, in order, and every group
 * reads the whole input pixel first; nothing outside the input pixel is read and nothing
 * outside the output pixel is written.
 */
#ifndef TD_CONV2D_1X1_MVE_H
#define TD_CONV2D_1X1_MVE_H

#if !defined(__ARM_FEATURE_MVE) || !(__ARM_FEATURE_MVE & 1)
#error "the MVE pointwise kernels need MVE (-mcpu=cortex-m55 -mfloat-abi=hard)"
#endif

#include <arm_mve.h>

#include "td_kernels.h"
#include "td_requant_mve.h"

/* The int8 outputs dst[0..n-1] (n in 1..4) of four accumulators: + folded bias (mod 2^32),
 * requantize, + output zero point, clamp. The per-channel arrays are read for n lanes only. */
static inline void td_pw_output_x4_mve(int32x4_t acc, const int32_t *bias, const int32_t *mult,
                                       const int8_t *shift, int32_t out_off, int32_t lo,
                                       int32_t hi, int8_t *dst, int32_t n)
{
    if (n == 4) { /* a whole group (a constant once inlined): no predication */
        int32x4_t v = vaddq_s32(acc, vldrwq_s32(bias));
        v = td_requantize_x4_mve(v, vldrwq_s32(mult), vldrbq_s32(shift));
        v = vaddq_n_s32(v, out_off);
        vstrbq_s32(dst, vminq_s32(vmaxq_s32(v, vdupq_n_s32(lo)), vdupq_n_s32(hi)));
        return;
    }
    const mve_pred16_t pred = vctp32q((uint32_t)n);
    int32x4_t v = vaddq_s32(acc, vldrwq_z_s32(bias, pred));
    v = td_requantize_x4_mve(v, vldrwq_z_s32(mult, pred), vldrbq_z_s32(shift, pred));
    v = vaddq_n_s32(v, out_off);
    v = vminq_s32(vmaxq_s32(v, vdupq_n_s32(lo)), vdupq_n_s32(hi));
    vstrbq_p_s32(dst, v, pred);
}

/* The four dot products of x with the rows w0..w3 over k int8 values, as int32 lanes. */
static inline int32x4_t td_pw_dot_1x4_mve(const int8_t *x, const int8_t *w0, const int8_t *w1,
                                          const int8_t *w2, const int8_t *w3, int32_t k)
{
    int32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    int32_t i = 0;
    for (; i + 16 <= k; i += 16) {
        const int8x16_t v = vldrbq_s8(x + i);
        s0 = vmladavaq_s8(s0, v, vldrbq_s8(w0 + i));
        s1 = vmladavaq_s8(s1, v, vldrbq_s8(w1 + i));
        s2 = vmladavaq_s8(s2, v, vldrbq_s8(w2 + i));
        s3 = vmladavaq_s8(s3, v, vldrbq_s8(w3 + i));
    }
    if (i < k) {
        const mve_pred16_t pred = vctp8q((uint32_t)(k - i));
        const int8x16_t v = vldrbq_z_s8(x + i, pred);
        s0 = vmladavaq_s8(s0, v, vldrbq_z_s8(w0 + i, pred));
        s1 = vmladavaq_s8(s1, v, vldrbq_z_s8(w1 + i, pred));
        s2 = vmladavaq_s8(s2, v, vldrbq_z_s8(w2 + i, pred));
        s3 = vmladavaq_s8(s3, v, vldrbq_z_s8(w3 + i, pred));
    }
    int32x4_t acc = vdupq_n_s32(s0);
    acc = vsetq_lane_s32(s1, acc, 1);
    acc = vsetq_lane_s32(s2, acc, 2);
    return vsetq_lane_s32(s3, acc, 3);
}

/* Output pixel dst[0..out_c-1] of input pixel x[0..in_c-1] (parameters as for
 * td_conv2d_1x1_s8_mve). */
static inline void td_pw_pixel_mve(const td_conv2d_params_t *p, const int8_t *x, int8_t *dst)
{
    const int32_t k = p->in_c;
    const int32_t oc = p->out_c;
    const int8_t *filter = p->filter;
    const int32_t *bias = p->bias, *mult = p->mult;
    const int8_t *shift = p->shift;
    const int32_t out_off = p->output_offset, lo = p->act_min, hi = p->act_max;
    int32_t o = 0;
    for (; o + 4 <= oc; o += 4) {
        const int8_t *w0 = filter + o * k;
        td_pw_output_x4_mve(td_pw_dot_1x4_mve(x, w0, w0 + k, w0 + 2 * k, w0 + 3 * k, k),
                            bias + o, mult + o, shift + o, out_off, lo, hi, dst + o, 4);
    }
    if (o < oc) { /* 1..3 rows left: the last one fills the missing slots */
        const int32_t n = oc - o;
        const int8_t *w0 = filter + o * k;
        const int8_t *wl = filter + (oc - 1) * k;
        td_pw_output_x4_mve(td_pw_dot_1x4_mve(x, w0, n > 1 ? w0 + k : wl,
                                              n > 2 ? w0 + 2 * k : wl, wl, k),
                            bias + o, mult + o, shift + o, out_off, lo, hi, dst + o, n);
    }
}

/* Every output pixel (parameters as for td_conv2d_1x1_s8_mve), in flat (batch, y, x) order
 * from the first pixel to the last, or from the last to the first when `back` (a constant
 * once inlined: the two kernels' only difference). */
static inline void td_pw_image_mve(const td_conv2d_params_t *p, const int8_t *in0,
                                   int8_t *out0, const int back)
{
    const int32_t k = p->in_c;
    const int32_t oc = p->out_c;
    const int32_t in_h = p->in_h, in_w = p->in_w, out_h = p->out_h, out_w = p->out_w;
    const int32_t sh = p->stride_h, sw = p->stride_w;
    for (int32_t bi = 0; bi < p->batches; ++bi) {
        const int32_t b = back ? p->batches - 1 - bi : bi;
        for (int32_t yi = 0; yi < out_h; ++yi) {
            const int32_t oy = back ? out_h - 1 - yi : yi;
            const int8_t *row = in0 + ((b * in_h + oy * sh) * in_w) * k;
            int8_t *dst = out0 + ((b * out_h + oy) * out_w) * oc;
            for (int32_t xi = 0; xi < out_w; ++xi) {
                const int32_t ox = back ? out_w - 1 - xi : xi;
                td_pw_pixel_mve(p, row + ox * sw * k, dst + ox * oc);
            }
        }
    }
}

#endif /* TD_CONV2D_1X1_MVE_H */
