/*
 * td_conv2d_1x1_back_s8_opt.c - int8 pointwise (1x1) convolution without groups, portable
 * optimised C, output pixels taken from the last to the first; bit-exact with
 * td_conv2d_s8_ref.
 *
 * The arithmetic is td_conv2d_s8_opt's pointwise path (td_opt_pw.h, the same body); only the
 * pixel order differs. Every output pixel is computed after every later one and its input
 * pixel is not read after its own outputs are written, so the output may overlap the input
 * shifted towards higher addresses: the in-place planner puts this twin in the forward
 * kernel's place when the layer before (a depthwise convolution processed front to back)
 * has moved its own output down.
 *
 * Parameters: td_conv2d_params_t with filter_h = filter_w = 1, filter_c = in_c, no padding,
 * any stride; the host's folded bias and requant_form as for td_conv2d_s8_opt. No scratch.
 */
#include "td_kernels.h"

#include "td_opt_pw.h"

int32_t td_conv2d_1x1_back_s8_opt_scratch_size(const td_conv2d_params_t *p)
{
    (void)p;
    return 0;
}

void td_conv2d_1x1_back_s8_opt(const td_conv2d_params_t *p, const int8_t *in0, int8_t *out0)
{
    td_opt_pw(p, in0, out0, 1);
}
