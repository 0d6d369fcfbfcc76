/*
 * td_conv2d_s16_body.h - private to td_conv2d_s16_ref.c and td_conv2d_s16_b32_ref.c:
 * TFLite Micro's 16x8 CONV_2D for one of its two accumulators (td_s16_accum.h, chosen by the
 * including file), written once: the sum over the taps inside the image (grouped
 * convolution as the int8 kernel), plus bias, per-channel requantization, clamp. Not in place.
 */
#include <stddef.h>

#include "td_kernels.h"
#include "td_s16_accum.h"

static inline void td_conv2d_s16_body(const td_conv2d_s16_params_t *p, const int16_t *in0,
                                      int16_t *out0)
{
    const int32_t groups = p->in_c / p->filter_c;
    const int32_t oc_per_group = p->out_c / groups;
    for (int32_t b = 0; b < p->batches; ++b) {
        for (int32_t oy = 0; oy < p->out_h; ++oy) {
            for (int32_t ox = 0; ox < p->out_w; ++ox) {
                for (int32_t o = 0; o < p->out_c; ++o) {
                    const int32_t g = o / oc_per_group;
                    TD_S16_ACC_T acc = 0;
                    for (int32_t fy = 0; fy < p->filter_h; ++fy) {
                        const int32_t iy = oy * p->stride_h - p->pad_h + fy * p->dilation_h;
                        if (iy < 0 || iy >= p->in_h) {
                            continue;
                        }
                        for (int32_t fx = 0; fx < p->filter_w; ++fx) {
                            const int32_t ix = ox * p->stride_w - p->pad_w + fx * p->dilation_w;
                            if (ix < 0 || ix >= p->in_w) {
                                continue;
                            }
                            const int16_t *x = in0 + ((b * p->in_h + iy) * p->in_w + ix) * p->in_c
                                               + g * p->filter_c;
                            const int8_t *w = p->filter
                                              + ((o * p->filter_h + fy) * p->filter_w + fx)
                                                * p->filter_c;
                            for (int32_t c = 0; c < p->filter_c; ++c) {
                                acc = TD_S16_ADD(acc, (int32_t)w[c] * (int32_t)x[c]);
                            }
                        }
                    }
                    if (p->TD_S16_BIAS != NULL) {
                        acc = TD_S16_ADD(acc, p->TD_S16_BIAS[o]);
                    }
                    const int32_t v = TD_S16_REQUANT(acc, p->mult[o], p->shift[o]);
                    out0[((b * p->out_h + oy) * p->out_w + ox) * p->out_c + o] =
                        (int16_t)td_clamp_s32(v, p->act_min, p->act_max);
                }
            }
        }
    }
}
