/*
 * td_strided_slice_s16_ref.c - int16 STRIDED_SLICE, TFLM's int16 kernel: the int8 kernel's
 * strided gather (td_strided_slice_body.h) on int16 elements; offsets and steps in
 * elements. Not in place.
 */
#include "td_kernels.h"

#define TD_ELEM_T int16_t
#include "td_strided_slice_body.h"

void td_strided_slice_s16_ref(const td_strided_slice_params_t *p, const int16_t *in0,
                              int16_t *out0)
{
    td_strided_slice_body(p, in0, out0);
}
