/*
 * td_dwconv2d_body.h - private to td_dwconv2d_s8_ref.c and td_dwconv2d_s16_ref.c: TFLite
 * Micro's reference DEPTHWISE_CONV_2D for one of its paths (td_accum.h, chosen by the
 * including file, which also names the params struct TD_DW_PARAMS), written once.
 *
 * Output channel o = i * depth_multiplier + m reads input channel i only:
 * out[b, y, x, o] = clamp(requant(sum over (ky, kx) inside the image of
 *                   (in[b, iy, ix, i] + input_offset) * filter[ky, kx, o] + bias[o],
 *                   mult[o], shift[o]) + output_offset, act_min, act_max)
 * (offsets 0 on the 16x8 path). No scratch memory. Not in place.
 */
#include <stddef.h>

#include "td_accum.h"
#include "td_kernels.h"

static inline void td_dwconv2d_body(const TD_DW_PARAMS *p, const TD_ACC_ELEM_T *in0,
                                    TD_ACC_ELEM_T *out0)
{
    for (int32_t b = 0; b < p->batches; ++b) {
        for (int32_t oy = 0; oy < p->out_h; ++oy) {
            const int32_t iy0 = oy * p->stride_h - p->pad_h;
            for (int32_t ox = 0; ox < p->out_w; ++ox) {
                const int32_t ix0 = ox * p->stride_w - p->pad_w;
                for (int32_t i = 0; i < p->in_c; ++i) {
                    for (int32_t m = 0; m < p->depth_multiplier; ++m) {
                        const int32_t o = i * p->depth_multiplier + m;
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
                                const int32_t v =
                                    in0[((b * p->in_h + iy) * p->in_w + ix) * p->in_c + i];
                                const int32_t f =
                                    p->filter[(ky * p->filter_w + kx) * p->out_c + o];
                                acc = TD_ACC_ADD(acc, (v + TD_ACC_IN_OFFSET(p)) * f);
                            }
                        }
                        if (p->TD_ACC_BIAS != NULL) {
                            acc = TD_ACC_ADD(acc, p->TD_ACC_BIAS[o]);
                        }
                        const int32_t r =
                            TD_ACC_REQUANT(acc, p->mult[o], p->shift[o]) + TD_ACC_OUT_OFFSET(p);
                        out0[((b * p->out_h + oy) * p->out_w + ox) * p->out_c + o] =
                            (TD_ACC_ELEM_T)td_clamp_s32(r, p->act_min, p->act_max);
                    }
                }
            }
        }
    }
}
