/*
 * td_pool2d_window.h - private to the pooling reference kernels (td_avgpool2d_s8_ref.c,
 * td_maxpool2d_s8_ref.c): where one output position's window lies in the input, clipped to
 * the image, as TFLite Micro's reference pooling computes it.
 *
 * For output coordinate o along one axis: origin = o * stride - pad is the input coordinate
 * of tap 0 (negative inside the top/left padding); the taps k in [first, end) are the ones
 * inside the image, 0 <= origin + k < in. Padding taps are never read nor counted.
 * end <= first for a window with no tap inside the image (impossible for TFLite's shapes).
 */
#ifndef TD_POOL2D_WINDOW_H
#define TD_POOL2D_WINDOW_H

#include <stdint.h>

typedef struct {
    int32_t origin; /* input coordinate of tap 0 */
    int32_t first;  /* first tap inside the image */
    int32_t end;    /* one past the last tap inside the image */
} td_pool2d_window_t;

static inline td_pool2d_window_t td_pool2d_window(int32_t o, int32_t stride, int32_t pad,
                                                  int32_t filter, int32_t in)
{
    td_pool2d_window_t w;
    w.origin = o * stride - pad;
    w.first = w.origin < 0 ? -w.origin : 0;
    w.end = filter < in - w.origin ? filter : in - w.origin;
    return w;
}

#endif /* TD_POOL2D_WINDOW_H */
