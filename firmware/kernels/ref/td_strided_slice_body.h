/*
 * td_strided_slice_body.h - private to td_strided_slice_s8_ref.c and
 * td_strided_slice_s16_ref.c: STRIDED_SLICE as a 5-D strided gather for one element type,
 * written once. The including file defines TD_ELEM_T (int8_t or int16_t) before including
 * it, once per translation unit.
 *
 * The host resolved begin/end/strides and all masks (TFLite Micro's StridedSlice logic) into
 * a start offset plus, per dim, a visit count and an element step (negative for negative
 * strides). Output elements are written densely in row-major order: a gather
 * (td_strided_copy.h). Not in place.
 */
#ifndef TD_ELEM_T
#error "define TD_ELEM_T before including td_strided_slice_body.h"
#endif

#include "td_kernels.h"
#include "td_strided_copy.h"

static inline void td_strided_slice_body(const td_strided_slice_params_t *p,
                                         const TD_ELEM_T *in0, TD_ELEM_T *out0)
{
    int32_t counts[TD_COPY_DIMS], steps[TD_COPY_DIMS], out_steps[TD_COPY_DIMS];
    td_right_align(p->counts, TD_SLICE_DIMS, 1, counts);
    td_right_align(p->steps, TD_SLICE_DIMS, 0, steps);
    td_dense_steps(counts, out_steps);
    td_strided_copy(in0 + p->start, steps, out0, out_steps, counts, sizeof(TD_ELEM_T));
}
