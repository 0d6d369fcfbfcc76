/*
 * td_strided_slice_body.h - private to td_strided_slice_s8_ref.c and
 * td_strided_slice_s16_ref.c: STRIDED_SLICE as a 5-D strided gather for one element type,
 * written once. The including file defines TD_ELEM_T (int8_t or int16_t) before including
 * it, once per translation unit.
 *
 * The host resolved begin/end/strides and all masks (TFLite Micro's StridedSlice logic) into
 * a start offset plus, per dim, a visit count and an element step (negative for negative
 * strides). Output elements are written in row-major order. Not in place.
 */
#ifndef TD_ELEM_T
#error "define TD_ELEM_T before including td_strided_slice_body.h"
#endif

#include <string.h>

#include "td_kernels.h"

static inline void td_strided_slice_body(const td_strided_slice_params_t *p,
                                         const TD_ELEM_T *in0, TD_ELEM_T *out0)
{
    const int32_t *c = p->counts;
    const int32_t *s = p->steps;
    TD_ELEM_T *out = out0;
    for (int32_t i0 = 0; i0 < c[0]; ++i0) {
        for (int32_t i1 = 0; i1 < c[1]; ++i1) {
            for (int32_t i2 = 0; i2 < c[2]; ++i2) {
                for (int32_t i3 = 0; i3 < c[3]; ++i3) {
                    const TD_ELEM_T *src = in0 + p->start + i0 * s[0] + i1 * s[1]
                                           + i2 * s[2] + i3 * s[3];
                    if (s[4] == 1) {
                        memcpy(out, src, (size_t)c[4] * sizeof(TD_ELEM_T));
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
