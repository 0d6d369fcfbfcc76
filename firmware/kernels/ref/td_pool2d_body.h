/*
 * td_pool2d_body.h - private to the four pooling reference kernels (td_avgpool2d_s8_ref.c,
 * td_avgpool2d_s16_ref.c, td_maxpool2d_s8_ref.c, td_maxpool2d_s16_ref.c): TFLite Micro's
 * reference pooling loop, written once for both operations and both element widths.
 *
 * Each window is clipped to the image (td_pool2d_window.h); padding taps are never read nor
 * counted. Average: the int32 sum over the valid taps divided by their count, rounded half
 * away from zero (a window with no valid tap, impossible for TFLite's shapes, gives 0).
 * Maximum: the largest valid tap, starting from the element type's minimum (a window with no
 * valid tap gives that minimum). The result is clamped to [act_min, act_max].
 * `wide` and `is_max` are constants at every call site, so each kernel compiles to its own
 * loop with no run-time dispatch. No scratch memory.
 */
#ifndef TD_POOL2D_BODY_H
#define TD_POOL2D_BODY_H

#include <stdint.h>

#include "td_kernels.h"
#include "td_pool2d_window.h"

/* in0/out0 are int8_t arrays (wide == 0) or int16_t arrays (wide != 0), NHWC. */
static inline void td_pool2d_ref(const td_pool2d_params_t *p, const void *in0, void *out0,
                                 int wide, int is_max)
{
    const int8_t *in8 = (const int8_t *)in0;
    const int16_t *in16 = (const int16_t *)in0;
    for (int32_t b = 0; b < p->batches; ++b) {
        for (int32_t oy = 0; oy < p->out_h; ++oy) {
            const td_pool2d_window_t wy =
                td_pool2d_window(oy, p->stride_h, p->pad_h, p->filter_h, p->in_h);
            for (int32_t ox = 0; ox < p->out_w; ++ox) {
                const td_pool2d_window_t wx =
                    td_pool2d_window(ox, p->stride_w, p->pad_w, p->filter_w, p->in_w);
                for (int32_t c = 0; c < p->channels; ++c) {
                    int32_t acc = is_max ? (wide ? INT16_MIN : INT8_MIN) : 0;
                    int32_t count = 0;
                    for (int32_t ky = wy.first; ky < wy.end; ++ky) {
                        for (int32_t kx = wx.first; kx < wx.end; ++kx) {
                            const int32_t i = ((b * p->in_h + wy.origin + ky) * p->in_w
                                               + wx.origin + kx) * p->channels + c;
                            const int32_t v = wide ? in16[i] : in8[i];
                            if (is_max) {
                                acc = v > acc ? v : acc;
                            } else {
                                acc += v;
                                ++count;
                            }
                        }
                    }
                    if (!is_max && count > 0) {
                        acc = acc > 0 ? (acc + count / 2) / count : (acc - count / 2) / count;
                    }
                    const int32_t o = ((b * p->out_h + oy) * p->out_w + ox) * p->channels + c;
                    const int32_t y = td_clamp_s32(acc, p->act_min, p->act_max);
                    if (wide) {
                        ((int16_t *)out0)[o] = (int16_t)y;
                    } else {
                        ((int8_t *)out0)[o] = (int8_t)y;
                    }
                }
            }
        }
    }
}

#endif /* TD_POOL2D_BODY_H */
