/*
 * td_avgpool2d_s16_ref.c - int16 AVERAGE_POOL_2D: the int32 sum of the valid taps divided by
 * their count, rounded half away from zero, as TFLite Micro's
 * int16 reference; the int8 kernel's windows (td_pool2d_window.h) and clamp on int16 data.
 * No scratch memory.
 */
#include "td_kernels.h"
#include "td_pool2d_window.h"

void td_avgpool2d_s16_ref(const td_pool2d_params_t *p, const int16_t *in0,
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
                    int32_t acc = 0;
                    int32_t count = 0;
                    for (int32_t ky = wy.first; ky < wy.end; ++ky) {
                        for (int32_t kx = wx.first; kx < wx.end; ++kx) {
                            acc += in0[((b * p->in_h + wy.origin + ky) * p->in_w
                                        + wx.origin + kx) * p->channels + c];
                            ++count;
                        }
                    }
                    if (count > 0) {
                        acc = acc > 0 ? (acc + count / 2) / count : (acc - count / 2) / count;
                    }
                    out0[((b * p->out_h + oy) * p->out_w + ox) * p->channels + c] =
                        (int16_t)td_clamp_s32(acc, p->act_min, p->act_max);
                }
            }
        }
    }
}
