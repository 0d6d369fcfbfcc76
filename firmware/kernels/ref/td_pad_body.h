/*
 * td_pad_body.h - private to td_pad_s8_ref.c and td_pad_s16_ref.c: PAD / PADV2 (constant
 * padding) for one element type, written once. The including file defines TD_ELEM_T
 * (int8_t or int16_t) before including it, once per translation unit.
 *
 * The output is filled with pad_value, then each innermost input row is copied to its
 * place. Shapes are right-aligned to TD_PAD_DIMS dims on the host, in elements. Not in place.
 */
#ifndef TD_ELEM_T
#error "define TD_ELEM_T before including td_pad_body.h"
#endif

#include <string.h>

#include "td_kernels.h"

static inline void td_pad_body(const td_pad_params_t *p, const TD_ELEM_T *in0,
                               TD_ELEM_T *out0)
{
    const int32_t *id = p->in_dims;
    const int32_t *od = p->out_dims;
    const int32_t *b = p->pad_before;
    const int32_t total = od[0] * od[1] * od[2] * od[3] * od[4];
    if (sizeof(TD_ELEM_T) == 1) {
        memset(out0, (int8_t)p->pad_value, (size_t)total);
    } else {
        for (int32_t i = 0; i < total; ++i) {
            out0[i] = (TD_ELEM_T)p->pad_value;
        }
    }
    const TD_ELEM_T *src = in0;
    for (int32_t i0 = 0; i0 < id[0]; ++i0) {
        for (int32_t i1 = 0; i1 < id[1]; ++i1) {
            for (int32_t i2 = 0; i2 < id[2]; ++i2) {
                for (int32_t i3 = 0; i3 < id[3]; ++i3) {
                    const int32_t o = (((((i0 + b[0]) * od[1] + (i1 + b[1])) * od[2]
                                         + (i2 + b[2])) * od[3] + (i3 + b[3])) * od[4])
                                      + b[4];
                    memcpy(out0 + o, src, (size_t)id[4] * sizeof(TD_ELEM_T));
                    src += id[4];
                }
            }
        }
    }
}
