/*
 * td_dwconv2d_s16_ref.c - 16x8 DEPTHWISE_CONV_2D (int16 activations with zero point 0, int8
 * per-channel weights, int64 bias), bit-exact with TFLite Micro: int64 accumulation over the
 * taps inside the image, bias, per-channel int64 requantization (td_requant64.h), clamp.
 * Filter layout [filter_h][filter_w][out_c] as the int8 kernel. Not in place.
 */
#include <stddef.h>

#include "td_requant64.h"
#include "td_kernels.h"

void td_dwconv2d_s16_ref(const td_dwconv2d_s16_params_t *p, const int16_t *in0,
                         int16_t *out0)
{
    for (int32_t b = 0; b < p->batches; ++b) {
        for (int32_t oy = 0; oy < p->out_h; ++oy) {
            const int32_t iy0 = oy * p->stride_h - p->pad_h;
            for (int32_t ox = 0; ox < p->out_w; ++ox) {
                const int32_t ix0 = ox * p->stride_w - p->pad_w;
                for (int32_t i = 0; i < p->in_c; ++i) {
                    for (int32_t m = 0; m < p->depth_multiplier; ++m) {
                        const int32_t o = i * p->depth_multiplier + m;
                        int64_t acc = 0;
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
                                const int32_t v =
                                    in0[((b * p->in_h + iy) * p->in_w + ix) * p->in_c + i];
                                const int32_t f =
                                    p->filter[(ky * p->filter_w + kx) * p->out_c + o];
                                acc += (int64_t)(v * f);
                            }
                        }
                        if (p->bias != NULL) {
                            acc += p->bias[o];
                        }
                        const int32_t r = td_requantize64(acc, p->mult[o], p->shift[o]);
                        out0[((b * p->out_h + oy) * p->out_w + ox) * p->out_c + o] =
                            (int16_t)td_clamp_s32(r, p->act_min, p->act_max);
                    }
                }
            }
        }
    }
}
