/*
 * td_maxpool2d_s8_ref.c - reference int8 max pooling, bit-exact with TFLite Micro.
 *
 * Each window is clipped to the image (td_pool2d_window.h); padding taps are never read nor
 * counted.
 * The maximum starts at -128 (a window with no valid tap gives -128).
 * The result is clamped to [act_min, act_max]. No scratch memory.
 */
#include "td_kernels.h"
#include "td_pool2d_window.h"

void td_maxpool2d_s8_ref(const td_pool2d_params_t *p, const int8_t *in0, int8_t *out0)
{
    for (int32_t b = 0; b < p->batches; ++b) {
        for (int32_t oy = 0; oy < p->out_h; ++oy) {
            const td_pool2d_window_t wy =
                td_pool2d_window(oy, p->stride_h, p->pad_h, p->filter_h, p->in_h);
            for (int32_t ox = 0; ox < p->out_w; ++ox) {
                const td_pool2d_window_t wx =
                    td_pool2d_window(ox, p->stride_w, p->pad_w, p->filter_w, p->in_w);
                for (int32_t c = 0; c < p->channels; ++c) {
                    int32_t acc = INT8_MIN;
                    for (int32_t ky = wy.first; ky < wy.end; ++ky) {
                        for (int32_t kx = wx.first; kx < wx.end; ++kx) {
                            const int32_t v = in0[((b * p->in_h + wy.origin + ky) * p->in_w
                                                   + wx.origin + kx) * p->channels + c];
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
