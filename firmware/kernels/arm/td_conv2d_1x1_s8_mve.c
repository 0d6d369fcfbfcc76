/*
 * td_conv2d_1x1_s8_mve.c - int8 pointwise (1x1) convolution with the M-profile Vector
 * Extension (Helium), bit-exact with td_conv2d_s8_ref (and so with TFLite Micro).
 *
 * A 1x1 convolution without groups is a matrix product: output pixel p, channel o is
 * dot(in[pixel p], filter[o]) plus the folded bias, requantized per channel. For each output
 * pixel, four filter rows at a time are multiplied with the pixel's channels, 16 int8 lanes
 * per VMLADAVA (multiply, add across the vector, accumulate into a scalar int32). The last
 * partial chunk of a row uses tail-predicated zeroing loads (VCTP8 + VLDRB.Z): disabled lanes
 * read no memory and hold 0, so the rows need no padding and no read goes past a tensor.
 * An out_c that is not a multiple of 4 repeats the last row in the missing slots and drops
 * the duplicate results.
 *
 * Bias folding, as for the dsp kernels (see td_gemm_s8_dsp.h and
 * tinydeploy/kernels/arm_mve.py): the products are plain int8 x int8; the host added
 * input_offset * sum(filter[o]) to the bias, which is exact modulo 2^32. Requantization is
 * the one scalar primitive td_requantize per output.
 *
 * Parameters: td_conv2d_params_t as for td_conv2d_s8_ref with filter_h = filter_w = 1,
 * filter_c = in_c (no groups), pad_h = pad_w = 0, any stride, and `bias` never NULL, holding
 * bias[o] + input_offset * sum_i filter[o][i] (mod 2^32); input_offset is not read. `filter`
 * is the reference layout [out_c][in_c] int8, any alignment. |x * w| <= 2^14, so in_c < 2^17
 * keeps every partial sum inside int32. No scratch memory (the companion returns 0).
 */
#include "td_kernels.h"

#if !defined(__ARM_FEATURE_MVE) || !(__ARM_FEATURE_MVE & 1)
#error "td_conv2d_1x1_s8_mve.c needs the MVE integer extension (-mcpu=cortex-m55 -mfloat-abi=hard)"
#endif

#include <arm_mve.h>

#include "td_simd.h"

int32_t td_conv2d_1x1_s8_mve_scratch_size(const td_conv2d_params_t *p)
{
    (void)p;
    return 0;
}

/* acc[j] = dot(x, w[j]) over k int8 values, for the four rows w[0..3]. */
static inline void td_dot_1x4_mve(const int8_t *x, const int8_t *const w[4], int32_t k,
                                  int32_t acc[4])
{
    int32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    const int8_t *w0 = w[0], *w1 = w[1], *w2 = w[2], *w3 = w[3];
    int32_t i = 0;
    for (; i + 16 <= k; i += 16) {
        const int8x16_t v = vldrbq_s8(x + i);
        s0 = vmladavaq_s8(s0, v, vldrbq_s8(w0 + i));
        s1 = vmladavaq_s8(s1, v, vldrbq_s8(w1 + i));
        s2 = vmladavaq_s8(s2, v, vldrbq_s8(w2 + i));
        s3 = vmladavaq_s8(s3, v, vldrbq_s8(w3 + i));
    }
    if (i < k) {
        const mve_pred16_t pred = vctp8q((uint32_t)(k - i));
        const int8x16_t v = vldrbq_z_s8(x + i, pred);
        s0 = vmladavaq_s8(s0, v, vldrbq_z_s8(w0 + i, pred));
        s1 = vmladavaq_s8(s1, v, vldrbq_z_s8(w1 + i, pred));
        s2 = vmladavaq_s8(s2, v, vldrbq_z_s8(w2 + i, pred));
        s3 = vmladavaq_s8(s3, v, vldrbq_z_s8(w3 + i, pred));
    }
    acc[0] = s0;
    acc[1] = s1;
    acc[2] = s2;
    acc[3] = s3;
}

void td_conv2d_1x1_s8_mve(const td_conv2d_params_t *p, const int8_t *in0, int8_t *out0)
{
    const int32_t k = p->in_c;
    const int32_t oc = p->out_c;
    const int8_t *filter = p->filter;
    const int32_t *bias = p->bias, *mult = p->mult, *shift = p->shift;
    const int32_t out_off = p->output_offset, lo = p->act_min, hi = p->act_max;
    const int32_t in_h = p->in_h, in_w = p->in_w, out_h = p->out_h, out_w = p->out_w;
    const int32_t sh = p->stride_h, sw = p->stride_w;
    int8_t *dst = out0;
    for (int32_t b = 0; b < p->batches; ++b) {
        for (int32_t oy = 0; oy < out_h; ++oy) {
            const int8_t *row = in0 + ((b * in_h + oy * sh) * in_w) * k;
            for (int32_t ox = 0; ox < out_w; ++ox, dst += oc) {
                const int8_t *x = row + ox * sw * k;
                for (int32_t o = 0; o < oc; o += 4) {
                    const int32_t n = oc - o < 4 ? oc - o : 4;
                    const int8_t *w[4];
                    int32_t acc[4];
                    for (int32_t j = 0; j < 4; ++j) {
                        w[j] = filter + (o + (j < n ? j : n - 1)) * k;
                    }
                    td_dot_1x4_mve(x, w, k, acc);
                    for (int32_t j = 0; j < n; ++j) {
                        const int32_t v =
                            td_requantize(td_add_wrap(acc[j], bias[o + j]), mult[o + j],
                                          shift[o + j]) + out_off;
                        dst[o + j] = (int8_t)td_clamp_s32(v, lo, hi);
                    }
                }
            }
        }
    }
}
