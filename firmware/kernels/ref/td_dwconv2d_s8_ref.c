/*
 * td_dwconv2d_s8_ref.c - reference int8 depthwise convolution, bit-exact with TFLite Micro.
 *
 * Output channel o = i * depth_multiplier + m reads input channel i only:
 * out[b, y, x, o] = clamp(requant(sum over (ky, kx) inside the image of
 *                   (in[b, iy, ix, i] + input_offset) * filter[ky, kx, o] + bias[o],
 *                   mult[o], shift[o]) + output_offset, act_min, act_max).
 * No scratch memory. The loop is td_conv2d_body.h's, as td_dwconv2d_body.h sets it up (int32
 * path of td_accum.h).
 */
#include "td_kernels.h"

#define TD_ACCUM TD_ACCUM_S8
#define TD_DW_PARAMS td_dwconv2d_params_t
#include "td_dwconv2d_body.h"

void td_dwconv2d_s8_ref(const td_dwconv2d_params_t *p, const int8_t *in0, int8_t *out0)
{
    td_conv2d_body(p, in0, out0);
}
