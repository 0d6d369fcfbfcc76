/*
 * td_conv2d_s8_ref.c - reference int8 2-D convolution, bit-exact with TFLite Micro.
 *
 * out[b, y, x, o] = clamp(requant(sum over (ky, kx, i) of (in[b, y*sy - ph + ky*dy,
 *                   x*sx - pw + kx*dx, g*filter_c + i] + input_offset) * filter[o, ky, kx, i]
 *                   + bias[o], mult[o], shift[o]) + output_offset, act_min, act_max)
 * where g = o / (out_c / groups) and taps outside the image are skipped (zero padding in
 * the real domain). No scratch memory. The loop is td_conv2d_body.h's (int32 path of
 * td_accum.h).
 */
#include "td_kernels.h"

#define TD_ACCUM TD_ACCUM_S8
#define TD_CONV_PARAMS td_conv2d_params_t
#include "td_conv2d_body.h"

void td_conv2d_s8_ref(const td_conv2d_params_t *p, const int8_t *in0, int8_t *out0)
{
    td_conv2d_body(p, in0, out0);
}
