/*
 * td_maxpool2d_s16_ref.c - int16 MAX_POOL_2D: the largest valid tap, as TFLite Micro's
 * int16 reference; the int8 kernel's windows (td_pool2d_window.h) and clamp on int16 data.
 * No scratch memory.
 */
#include "td_kernels.h"
#include "td_pool2d_window.h"

void td_maxpool2d_s16_ref(const td_pool2d_params_t *p, const int16_t *in0,
                          int16_t *out0)
{
    for (int32_t b = 0; b < p->batches; ++b) {
        for (int32_t oy = 0; oy < p->out_h; ++oy) {
            const td_pool2d_window_t wy =
                td_pool2d_window(oy, p->stride_h, p->pad_h, p->filter_h, p->in_h);
            for (int32_t ox = 0; ox < p->out_w; ++ox) {
                const td_pool2d_window_t wx =
                    td_pool2d_window(ox, p->stride_w, p->pad_w, p->filter_w, p->in_w);
                for (int32_t c = 0; c < p->channels; ++c) {
                    int32_t acc = INT16_MIN;
                    for (int32_t ky = wy.first; ky < wy.end; ++ky) {
                        for (int32_t kx = wx.first; kx < wx.end; ++kx) {
                            const int32_t v = in0[((b * p->in_h + wy.origin + ky) * p->in_w
                                                   + wx.origin + kx) * p->channels + c];
                            acc = v > acc ? v : acc;
                        }
                    }
                    out0[((b * p->out_h + oy) * p->out_w + ox) * p->channels + c] =
                        (int16_t)td_clamp_s32(acc, p->act_min, p->act_max);
                }
            }
        }
    }
}
