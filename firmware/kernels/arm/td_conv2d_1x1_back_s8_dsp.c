/*
 * td_conv2d_1x1_back_s8_dsp.c - int8 pointwise (1x1) convolution with the DSP extension,
 * output pixels taken from the last to the first; bit-exact with td_conv2d_s8_ref.
 *
 * The arithmetic is td_conv2d_1x1_s8_dsp's (pairs of pixels sign-extended into a q15 pair
 * buffer in scratch, multiplied with every pair of packed filter rows, td_gemm_s8_dsp.h);
 * only the order differs. With an odd pixel count the last pixel goes alone first, then the
 * pairs (n-3, n-2), (n-5, n-4), ... down to (0, 1). Both input pixels of a step are read
 * into scratch before any output of the step is written, and no later step reads a pixel
 * after that one, so the output may overlap the input shifted towards higher addresses:
 * the in-place planner puts it after the input when the layer before it (a depthwise
 * convolution processed front to back) has moved its own output down.
 *
 * Parameters: as td_conv2d_1x1_s8_dsp (filter_h = filter_w = 1, filter_c = in_c, no
 * padding, any stride; `filter` the q15 rows, `bias` the folded bias, never NULL).
 * scratch: td_conv2d_1x1_back_s8_dsp_scratch_size(p) bytes, 4-byte aligned.
 */
#include "td_kernels.h"

#include "td_gemm_s8_dsp.h"

int32_t td_conv2d_1x1_back_s8_dsp_scratch_size(const td_conv2d_params_t *p)
{
    return td_pair_bytes(p->in_c);
}

/* The input pixel of output pixel `px` (flat batch, y, x order). */
static const int8_t *td_input_pixel(const td_conv2d_params_t *p, const int8_t *in0,
                                    int32_t px)
{
    const int32_t per_image = p->out_h * p->out_w;
    const int32_t b = px / per_image;
    const int32_t oy = (px - b * per_image) / p->out_w;
    const int32_t ox = px - b * per_image - oy * p->out_w;
    return in0 + ((b * p->in_h + oy * p->stride_h) * p->in_w + ox * p->stride_w) * p->in_c;
}

void td_conv2d_1x1_back_s8_dsp(const td_conv2d_params_t *p, const int8_t *in0, int8_t *out0,
                               void *scratch)
{
    const int32_t k = p->in_c;
    const int32_t oc = p->out_c;
    const int32_t pixels = p->batches * p->out_h * p->out_w;
    td_word_t *pair = (td_word_t *)scratch;
    int32_t px = pixels;
    if (px & 1) {
        --px;
        td_extend_pair(td_input_pixel(p, in0, px), 0, k, pair);
        td_pair_times_filter(pair, p->filter, k, oc, p->bias, p->mult, p->shift,
                             p->output_offset, p->act_min, p->act_max, out0 + px * oc, 0);
    }
    while (px > 0) {
        px -= 2;
        int8_t *d0 = out0 + px * oc;
        td_extend_pair(td_input_pixel(p, in0, px), td_input_pixel(p, in0, px + 1), k, pair);
        td_pair_times_filter(pair, p->filter, k, oc, p->bias, p->mult, p->shift,
                             p->output_offset, p->act_min, p->act_max, d0, d0 + oc);
    }
}
