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

#if !defined(__ARM_FEATURE_MVE) || !(__ARM_FEATURE_MVE & 1)
#error "td_conv2d_1x1_back_s8_mve.c needs MVE (-mcpu=cortex-m55 -mfloat-abi=hard)"
#endif

#include <arm_mve.h>

#include "td_conv2d_1x1_mve.h"

int32_t td_conv2d_1x1_back_s8_mve_scratch_size(const td_conv2d_params_t *p)
{
    (void)p;
    return 0;
}

void td_conv2d_1x1_back_s8_mve(const td_conv2d_params_t *p, const int8_t *in0, int8_t *out0)
{
    const int32_t k = p->in_c;
    const int32_t oc = p->out_c;
    const int32_t in_h = p->in_h, in_w = p->in_w, out_h = p->out_h, out_w = p->out_w;
    const int32_t sh = p->stride_h, sw = p->stride_w;
    for (int32_t b = p->batches - 1; b >= 0; --b) {
        for (int32_t oy = out_h - 1; oy >= 0; --oy) {
            const int8_t *row = in0 + ((b * in_h + oy * sh) * in_w) * k;
            int8_t *dst = out0 + ((b * out_h + oy) * out_w) * oc;
            for (int32_t ox = out_w - 1; ox >= 0; --ox) {
                td_pw_pixel_mve(p, row + ox * sw * k, dst + ox * oc);
            }
        }
    }
}
