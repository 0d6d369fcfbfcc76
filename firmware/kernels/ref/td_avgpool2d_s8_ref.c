/*
 * td_avgpool2d_s8_ref.c - reference int8 avg pooling, bit-exact with TFLite Micro.
 *
 * Each window is clipped to the image; padding taps are never read nor counted.
 * The average is the int32 sum over the valid taps divided by their count, rounded half
 * away from zero (a window with no valid tap, impossible for TFLite's shapes, gives 0).
 * The result is clamped to [act_min, act_max]. No scratch memory.
 */
#include "td_kernels.h"

void td_avgpool2d_s8_ref(const td_pool2d_params_t *p, const int8_t *in0, int8_t *out0)
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
                    int32_t acc = 0;
                    int32_t count = 0;
                    for (int32_t ky = ky0; ky < ky1; ++ky) {
                        for (int32_t kx = kx0; kx < kx1; ++kx) {
                            acc += in0[((b * p->in_h + iy0 + ky) * p->in_w + ix0 + kx)
                                       * p->channels + c];
                            ++count;
                        }
                    }
                    if (count > 0) {
                        acc = acc > 0 ? (acc + count / 2) / count : (acc - count / 2) / count;
                    }
                    out0[((b * p->out_h + oy) * p->out_w + ox) * p->channels + c] =
                        (int8_t)td_clamp_s32(acc, p->act_min, p->act_max);
                }
            }
        }
    }
}
