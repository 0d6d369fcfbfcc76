/*
 * td_maxpool2d_s8_ref.c - reference int8 max pooling, bit-exact with TFLite Micro.
 *
 * Each window is clipped to the image; padding taps are never read nor counted.
 * The maximum starts at -128 (a window with no valid tap gives -128).
 * The result is clamped to [act_min, act_max]. No scratch memory.
 */
#include "td_kernels.h"

void td_maxpool2d_s8_ref(const td_pool2d_params_t *p, const int8_t *in0, int8_t *out0)
{
    for (int32_t b = 0; b < p->batches; ++b) {
        for (int32_t oy = 0; oy < p->out_h; ++oy) {
            const int32_t iy0 = oy * p->stride_h - p->pad_h;
            const int32_t ky0 = iy0 < 0 ? -iy0 : 0;
            const int32_t ky1 = p->filter_h < p->in_h - iy0 ? p->filter_h : p->in_h - iy0;
            for (int32_t ox = 0; ox < p->out_w; ++ox) {
                const int32_t ix0 = ox * p->stride_w - p->pad_w;
                const int32_t kx0 = ix0 < 0 ? -ix0 : 0;
                const int32_t kx1 = p->filter_w < p->in_w - ix0 ? p->filter_w : p->in_w - ix0;
                for (int32_t c = 0; c < p->channels; ++c) {
                    int32_t acc = INT8_MIN;
                    for (int32_t ky = ky0; ky < ky1; ++ky) {
                        for (int32_t kx = kx0; kx < kx1; ++kx) {
                            const int32_t v = in0[((b * p->in_h + iy0 + ky) * p->in_w + ix0 + kx)
                                                  * p->channels + c];
                            acc = v > acc ? v : acc;
                        }
                    }
                    out0[((b * p->out_h + oy) * p->out_w + ox) * p->channels + c] =
                        (int8_t)td_clamp_s32(acc, p->act_min, p->act_max);
                }
            }
        }
    }
}
