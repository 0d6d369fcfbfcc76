/*
 * td_conv2d_1x1_back_s8_mve.c - int8 pointwise (1x1) convolution with the M-profile Vector
 * Extension (Helium), output pixels taken from the last to the first; bit-exact with
 * td_conv2d_s8_ref (and so with TFLite Micro).
 *
 * The arithmetic is td_conv2d_1x1_s8_mve's (td_pw_pixel_mve, td_conv2d_1x1_mve.h); only the
 * order differs. A pixel's output channels are written while its input pixel is still being
 * read, and no later pixel reads anything after that one (pixels go down), so the output may
 * overlap the input shifted towards higher addresses by at least one pixel's worth of bytes
 * (exactly: see conv_1x1_lanes_back_order in tinydeploy/kernels/access.py). The in-place
 * planner puts this twin in the forward kernel's place when the layer before it (a depthwise
 * convolution processed front to back) has moved its own output down, and so keeps a chain of
 * depthwise and pointwise layers inside one tensor's bytes plus a few rows, without scratch.
 *
 * Parameters: as td_conv2d_1x1_s8_mve (filter_h = filter_w = 1, filter_c = in_c, no padding,
 * any stride; the reference int8 filter [out_c][in_c]; `bias` never NULL, holding the folded
 * bias). No scratch memory (the companion returns 0).
 */
#include "td_kernels.h"

#include "td_conv2d_1x1_mve.h"

int32_t td_conv2d_1x1_back_s8_mve_scratch_size(const td_conv2d_params_t *p)
{
    (void)p;
    return 0;
}

void td_conv2d_1x1_back_s8_mve(const td_conv2d_params_t *p, const int8_t *in0, int8_t *out0)
{
    td_pw_image_mve(p, in0, out0, 1);
}
