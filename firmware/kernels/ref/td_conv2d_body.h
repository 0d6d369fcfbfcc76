/*
 * td_conv2d_body.h - private to the reference CONV_2D kernels (td_conv2d_s8_ref.c,
 * td_conv2d_s16_ref.c, td_conv2d_s16_b32_ref.c) and, through td_dwconv2d_body.h, the
 * DEPTHWISE_CONV_2D ones: TFLite Micro's reference loop for one of its paths (td_accum.h,
 * chosen by the including file, which also names the params struct TD_CONV_PARAMS), written
 * once for both ops:
 *
 *   out[b, y, x, o] = clamp(requant(sum over (ky, kx, i) of (in[b, y*sy - ph + ky*dy,
 *                     x*sx - pw + kx*dx, c0(o) + i] + input_offset) * w(o, ky, kx, i)
 *                     + bias[o], mult[o], shift[o]) + output_offset, act_min, act_max)
 *
 * where taps outside the image are skipped (zero padding in the real domain); offsets 0 on
 * the 16x8 paths. CONV_2D: i < filter_c, c0(o) = (o / (out_c / groups)) * filter_c with
 * groups = in_c / filter_c, w(o, ky, kx, i) = filter[o][ky][kx][i]. DEPTHWISE_CONV_2D
 * (TD_CONV_DEPTHWISE 1): a depthwise convolution is the grouped one with one input channel
 * per group (groups = in_c, out_c / groups = depth_multiplier), so i = 0,
 * c0(o) = o / depth_multiplier and w(o, ky, kx, 0) = filter[ky][kx][o] (TFLite's
 * [1, H, W, C*M] layout). No scratch memory. Not in place.
 */
#include <stddef.h>

#include "td_accum.h"
#include "td_kernels.h"

#ifndef TD_CONV_DEPTHWISE
#define TD_CONV_DEPTHWISE 0
#endif

static inline void td_conv2d_body(const TD_CONV_PARAMS *p, const TD_ACC_ELEM_T *in0,
                                  TD_ACC_ELEM_T *out0)
{
#if TD_CONV_DEPTHWISE
    const int32_t filter_c = 1;
    const int32_t w_kx = p->out_c; /* filter element steps along kx, ky and o */
    const int32_t w_o = 1;
#else
    const int32_t filter_c = p->filter_c;
    const int32_t w_kx = filter_c;
    const int32_t w_o = p->filter_h * p->filter_w * filter_c;
#endif
    const int32_t w_ky = p->filter_w * w_kx;
    const int32_t per_group = p->out_c / (p->in_c / filter_c);
    for (int32_t b = 0; b < p->batches; ++b) {
        for (int32_t oy = 0; oy < p->out_h; ++oy) {
            const int32_t iy0 = oy * p->stride_h - p->pad_h;
            for (int32_t ox = 0; ox < p->out_w; ++ox) {
                const int32_t ix0 = ox * p->stride_w - p->pad_w;
                for (int32_t o = 0; o < p->out_c; ++o) {
                    const int32_t c0 = (o / per_group) * filter_c;
                    TD_ACC_T acc = 0;
                    for (int32_t ky = 0; ky < p->filter_h; ++ky) {
                        const int32_t iy = iy0 + p->dilation_h * ky;
                        if (iy < 0 || iy >= p->in_h) {
                            continue;
                        }
                        for (int32_t kx = 0; kx < p->filter_w; ++kx) {
                            const int32_t ix = ix0 + p->dilation_w * kx;
                            if (ix < 0 || ix >= p->in_w) {
                                continue;
                            }
                            const TD_ACC_ELEM_T *src =
                                in0 + (((b * p->in_h + iy) * p->in_w + ix) * p->in_c + c0);
                            const int8_t *w = p->filter + o * w_o + ky * w_ky + kx * w_kx;
                            for (int32_t i = 0; i < filter_c; ++i) {
                                acc = TD_ACC_ADD(acc, ((int32_t)src[i] + TD_ACC_IN_OFFSET(p))
                                                      * (int32_t)w[i]);
                            }
                        }
                    }
                    if (p->TD_ACC_BIAS != NULL) {
                        acc = TD_ACC_ADD(acc, p->TD_ACC_BIAS[o]);
                    }
                    const int32_t v =
                        TD_ACC_REQUANT(acc, p->mult[o], p->shift[o]) + TD_ACC_OUT_OFFSET(p);
                    out0[((b * p->out_h + oy) * p->out_w + ox) * p->out_c + o] =
                        (TD_ACC_ELEM_T)td_clamp_s32(v, p->act_min, p->act_max);
                }
            }
        }
    }
}
