/*
 * td_resize_nearest_s8_ref.c - int8 RESIZE_NEAREST_NEIGHBOR (NHWC), as TFLite Micro: every
 * output pixel copies the `depth` channels of one input pixel, whose row and column the
 * host computed with TFLite's float arithmetic (align_corners, half_pixel_centers folded
 * in); the loop is td_resize_nearest_body.h's. Not in place.
 */
#include "td_kernels.h"

#define TD_ELEM_T int8_t
#include "td_resize_nearest_body.h"

void td_resize_nearest_s8_ref(const td_resize_params_t *p, const int8_t *in0, int8_t *out0)
{
    td_resize_nearest_body(p, in0, out0);
}
