/*
 * td_dw3x3_taps.h - the nine input pointers of one 3x3 depthwise output pixel. Private to
 * td_dwconv2d_3x3_s8_mve.c (static inline: no call on the hot path).
 *
 * A tap inside the image points at that pixel's channels; a tap in the padding points at
 * zp_row, a row of the input zero point, which contributes exactly what the reference's
 * skipped tap contributes (zero after the input offset). image: [in_h][in_w][in_c] of one
 * batch; tap[3 * ky + kx] for kernel row ky, column kx.
 */
#ifndef TD_DW3X3_TAPS_H
#define TD_DW3X3_TAPS_H

#include "td_kernels.h"

static inline void td_dw3x3_taps(const td_dwconv2d_params_t *p, const int8_t *image,
                                 int32_t oy, int32_t ox, const int8_t *zp_row,
                                 const int8_t *tap[9])
{
    const int32_t iy0 = oy * p->stride_h - p->pad_h;
    const int32_t ix0 = ox * p->stride_w - p->pad_w;
    for (int32_t ky = 0; ky < 3; ++ky) {
        const int32_t iy = iy0 + ky * p->dilation_h;
        for (int32_t kx = 0; kx < 3; ++kx) {
            const int32_t ix = ix0 + kx * p->dilation_w;
            const int32_t inside = iy >= 0 && iy < p->in_h && ix >= 0 && ix < p->in_w;
            tap[3 * ky + kx] = inside ? image + (iy * p->in_w + ix) * p->in_c : zp_row;
        }
    }
}

#endif /* TD_DW3X3_TAPS_H */
