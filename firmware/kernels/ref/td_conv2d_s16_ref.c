/*
 * td_conv2d_s16_ref.c - 16x8 CONV_2D (int16 activations with zero point 0, int8 per-channel
 * weights, int64 bias), bit-exact with TFLite Micro's reference: int64 accumulation over the
 * taps inside the image, plus bias, per-channel requantization of the int64 sum
 * (td_requant64.h), clamp. Grouped convolution as the int8 kernel. Not in place.
 */
#include <stddef.h>

#include "td_kernels.h"
#include "td_requant64.h"

void td_conv2d_s16_ref(const td_conv2d_s16_params_t *p, const int16_t *in0, int16_t *out0)
{
    const int32_t groups = p->in_c / p->filter_c;
    const int32_t oc_per_group = p->out_c / groups;
    for (int32_t b = 0; b < p->batches; ++b) {
        for (int32_t oy = 0; oy < p->out_h; ++oy) {
            for (int32_t ox = 0; ox < p->out_w; ++ox) {
                for (int32_t o = 0; o < p->out_c; ++o) {
                    const int32_t g = o / oc_per_group;
                    int64_t acc = 0;
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
                                acc += (int64_t)((int32_t)w[c] * (int32_t)x[c]);
                            }
                        }
                    }
                    if (p->bias != NULL) {
                        acc += p->bias[o];
                    }
                    const int32_t v = td_requantize64(acc, p->mult[o], p->shift[o]);
                    out0[((b * p->out_h + oy) * p->out_w + ox) * p->out_c + o] =
                        (int16_t)td_clamp_s32(v, p->act_min, p->act_max);
                }
            }
        }
    }
}
