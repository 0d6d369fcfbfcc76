/*
 * td_strided_slice_s8_ref.c - int8 STRIDED_SLICE as a 5-D strided gather.
 *
 * The host resolved begin/end/strides and all masks (TFLite Micro's StridedSlice logic) into
 * a start offset plus, per dim, a visit count and an element step (negative for negative
 * strides). Output elements are written in row-major order. Not in place.
 */
#include <string.h>

#include "td_kernels.h"

void td_strided_slice_s8_ref(const td_strided_slice_params_t *p, const int8_t *in0,
                             int8_t *out0)
{
    const int32_t *c = p->counts;
    const int32_t *s = p->steps;
    int8_t *out = out0;
    for (int32_t i0 = 0; i0 < c[0]; ++i0) {
        for (int32_t i1 = 0; i1 < c[1]; ++i1) {
            for (int32_t i2 = 0; i2 < c[2]; ++i2) {
                for (int32_t i3 = 0; i3 < c[3]; ++i3) {
                    const int8_t *src = in0 + p->start + i0 * s[0] + i1 * s[1] + i2 * s[2]
                                        + i3 * s[3];
                    if (s[4] == 1) {
                        memcpy(out, src, (size_t)c[4]);
                        out += c[4];
                    } else {
                        for (int32_t i4 = 0; i4 < c[4]; ++i4) {
                            *out++ = src[i4 * s[4]];
                        }
                    }
                }
            }
        }
    }
}
