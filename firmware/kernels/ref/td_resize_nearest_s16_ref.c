/*
 * td_resize_nearest_s16_ref.c - int16 RESIZE_NEAREST_NEIGHBOR (NHWC), TFLM's int16 kernel:
 * the int8 kernel's pixel copies (td_resize_nearest_body.h) on int16 elements. Not in place.
 */
#include "td_kernels.h"

#define TD_ELEM_T int16_t
#include "td_resize_nearest_body.h"

void td_resize_nearest_s16_ref(const td_resize_params_t *p, const int16_t *in0,
                               int16_t *out0)
{
    td_resize_nearest_body(p, in0, out0);
}
