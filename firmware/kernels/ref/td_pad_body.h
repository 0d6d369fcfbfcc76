/*
 * td_pad_body.h - private to td_pad_s8_ref.c and td_pad_s16_ref.c: PAD / PADV2 (constant
 * padding) for one element type, written once. The including file defines TD_ELEM_T
 * (int8_t or int16_t) before including it, once per translation unit.
 *
 * The output is filled with pad_value, then the input is copied to its place inside it: a
 * scatter of the dense input into the output's strides (td_strided_copy.h). Shapes are
 * right-aligned to TD_PAD_DIMS dims on the host, in elements. Not in place.
 */
#ifndef TD_ELEM_T
#error "define TD_ELEM_T before including td_pad_body.h"
#endif

#include <string.h>

#include "td_kernels.h"
#include "td_strided_copy.h"

static inline void td_pad_body(const td_pad_params_t *p, const TD_ELEM_T *in0,
                               TD_ELEM_T *out0)
{
    const int32_t *od = p->out_dims;
    const int32_t total = od[0] * od[1] * od[2] * od[3] * od[4];
    if (sizeof(TD_ELEM_T) == 1) {
        memset(out0, (int8_t)p->pad_value, (size_t)total);
    } else {
        for (int32_t i = 0; i < total; ++i) {
            out0[i] = (TD_ELEM_T)p->pad_value;
        }
    }
    int32_t dims[TD_COPY_DIMS], in_steps[TD_COPY_DIMS];
    int32_t out_dims[TD_COPY_DIMS], out_steps[TD_COPY_DIMS], before[TD_COPY_DIMS];
    td_right_align(p->in_dims, TD_PAD_DIMS, 1, dims);
    td_right_align(od, TD_PAD_DIMS, 1, out_dims);
    td_right_align(p->pad_before, TD_PAD_DIMS, 0, before);
    td_dense_steps(dims, in_steps);
    td_dense_steps(out_dims, out_steps);
    int32_t start = 0;
    for (int32_t k = 0; k < TD_COPY_DIMS; ++k) {
        start += before[k] * out_steps[k];
    }
    td_strided_copy(in0, in_steps, out0 + start, out_steps, dims, sizeof(TD_ELEM_T));
}
