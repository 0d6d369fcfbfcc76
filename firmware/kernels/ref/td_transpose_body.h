/*
 * td_transpose_body.h - private to td_transpose_s8_ref.c and td_transpose_s16_ref.c: the
 * permutation copy for one element type. The including file defines TD_ELEM_T (int8_t or
 * int16_t) before including it, once per translation unit.
 *
 * Output element (i0..i5), written densely in row-major order, is
 * in0[sum(ik * in_strides[k])] (strides in elements): a gather (td_strided_copy.h). A pure
 * copy: TFLM transposes the stored values whatever the element type. Not in place.
 */
#ifndef TD_ELEM_T
#error "define TD_ELEM_T before including td_transpose_body.h"
#endif

#include "td_kernels.h"
#include "td_strided_copy.h"

static inline void td_transpose_body(const td_transpose_params_t *p, const TD_ELEM_T *in0,
                                     TD_ELEM_T *out0)
{
    int32_t out_steps[TD_COPY_DIMS];
    td_dense_steps(p->out_dims, out_steps);
    td_strided_copy(in0, p->in_strides, out0, out_steps, p->out_dims, sizeof(TD_ELEM_T));
}
