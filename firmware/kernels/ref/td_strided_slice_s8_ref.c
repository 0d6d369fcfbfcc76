/*
 * td_strided_slice_s8_ref.c - int8 STRIDED_SLICE as a 5-D strided gather
 * (td_strided_slice_body.h): the host resolved begin/end/strides and all masks into a start
 * offset plus per-dim counts and element steps. Not in place.
 */
#include "td_kernels.h"

#define TD_ELEM_T int8_t
#include "td_strided_slice_body.h"

void td_strided_slice_s8_ref(const td_strided_slice_params_t *p, const int8_t *in0,
                             int8_t *out0)
{
    td_strided_slice_body(p, in0, out0);
}
