/*
 * td_transpose_s16_ref.c - int16 TRANSPOSE (up to 5-D, TFLM's int16 kernel): the int8
 * kernel's permutation copy (td_transpose_body.h) on int16 elements; strides in elements.
 * Not in place.
 */
#include "td_kernels.h"

#define TD_ELEM_T int16_t
#include "td_transpose_body.h"

void td_transpose_s16_ref(const td_transpose_params_t *p, const int16_t *in0, int16_t *out0)
{
    td_transpose_body(p, in0, out0);
}
