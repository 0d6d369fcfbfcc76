/*
 * td_conv2d_1x1_s8_mve.c - int8 pointwise (1x1) convolution with the M-profile Vector
 * Extension (Helium), bit-exact with td_conv2d_s8_ref (and so with TFLite Micro).
 *
 * A 1x1 convolution without groups is a matrix product: output pixel p, channel o is
 * dot(in[pixel p], filter[o]) plus the folded bias, requantized per channel. The pixels are
 * taken from the first to the last; each one is computed by td_pw_pixel_mve
 * (td_conv2d_1x1_mve.h: four filter rows at a time, 16 int8 lanes per VMLADAVA, tail
 * predication, td_requantize_x4_mve). td_conv2d_1x1_back_s8_mve is the same product from the
 * last pixel to the first.
 *
 * Bias folding, as for the dsp kernels (see td_gemm_s8_dsp.h and
 * tinydeploy/kernels/arm_mve.py): the products are plain int8 x int8; the host added
 * input_offset * sum(filter[o]) to the bias, which is exact modulo 2^32.
 *
 * Parameters: td_conv2d_params_t as for td_conv2d_s8_ref with filter_h = filter_w = 1,
 * filter_c = in_c (no groups), pad_h = pad_w = 0, any stride, and `bias` never NULL, holding
 * bias[o] + input_offset * sum_i filter[o][i] (mod 2^32); input_offset is not read. `filter`
 * is the reference layout [out_c][in_c] int8, any alignment. |x * w| <= 2^14, so in_c < 2^17
 * keeps every partial sum inside int32. No scratch memory (the companion returns 0).
 */
#include "td_kernels.h"

#include "td_conv2d_1x1_mve.h"

int32_t td_conv2d_1x1_s8_mve_scratch_size(const td_conv2d_params_t *p)
{
    (void)p;
    return 0;
}

void td_conv2d_1x1_s8_mve(const td_conv2d_params_t *p, const int8_t *in0, int8_t *out0)
{
    td_pw_image_mve(p, in0, out0, 0);
}
