/*
 * td_transpose_body.h - private to td_transpose_s8_ref.c and td_transpose_s16_ref.c: the
 * permutation copy for one element type, written once. The including file defines
 * TD_ELEM_T (int8_t or int16_t) before including it, once per translation unit.
 *
 * Output element (i0..i5), written densely in row-major order, is
 * in0[sum(ik * in_strides[k])] (strides in elements). A pure copy: TFLM transposes the
 * stored values whatever the element type. Not in place.
 */
#ifndef TD_ELEM_T
#error "define TD_ELEM_T before including td_transpose_body.h"
#endif

#include "td_kernels.h"

static inline void td_transpose_body(const td_transpose_params_t *p, const TD_ELEM_T *in0,
                                     TD_ELEM_T *out0)
{
    const int32_t *d = p->out_dims;
    const int32_t *s = p->in_strides;
    TD_ELEM_T *out = out0;
    for (int32_t i0 = 0; i0 < d[0]; ++i0) {
        for (int32_t i1 = 0; i1 < d[1]; ++i1) {
            for (int32_t i2 = 0; i2 < d[2]; ++i2) {
                for (int32_t i3 = 0; i3 < d[3]; ++i3) {
                    for (int32_t i4 = 0; i4 < d[4]; ++i4) {
                        const TD_ELEM_T *src = in0 + i0 * s[0] + i1 * s[1] + i2 * s[2]
                                               + i3 * s[3] + i4 * s[4];
                        for (int32_t i5 = 0; i5 < d[5]; ++i5) {
                            *out++ = src[i5 * s[5]];
                        }
                    }
                }
            }
        }
    }
}
