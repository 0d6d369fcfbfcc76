/*
 * td_conv2d_1x1_back_s8_dsp.c - int8 pointwise (1x1) convolution with the DSP extension,
 * output pixels taken from the last to the first; bit-exact with td_conv2d_s8_ref.
 *
 * The arithmetic is td_conv2d_1x1_s8_dsp's (groups of TD_GEMM_ROWS pixels widened into the
 * rows buffer and multiplied with every int8 filter row, td_pw_group); only the order
 * differs: the group of the last TD_GEMM_ROWS pixels first, down to a partial group of the
 * first pixels. All input pixels of a group are read into the rows buffer before any output
 * of the group is written, and no later group reads a pixel after that one, so the output
 * may overlap the input shifted towards higher addresses: the in-place planner puts it after
 * the input when the layer before it (a depthwise convolution processed front to back) has
 * moved its own output down.
 *
 * Parameters: as td_conv2d_1x1_s8_dsp (filter_h = filter_w = 1, filter_c = in_c, no
 * padding, any stride; the reference's int8 filter and bias, requant_form from the host).
 * No scratch (the rows buffer is in td_pw_group's frame).
 */
#include "td_kernels.h"

#include "td_gemm_s8_dsp.h"

int32_t td_conv2d_1x1_back_s8_dsp_scratch_size(const td_conv2d_params_t *p)
{
    (void)p;
    return 0;
}

/* The input pixel of output pixel `px` (flat batch, y, x order); with stride 1 the input
 * pixels are the output pixels (a 1x1 filter, no padding). */
static const int8_t *td_input_pixel(const td_conv2d_params_t *p, const int8_t *in0,
                                    int32_t px)
{
    if (p->stride_h == 1 && p->stride_w == 1) {
        return in0 + px * p->in_c;
    }
    const int32_t per_image = p->out_h * p->out_w;
    const int32_t b = px / per_image;
    const int32_t oy = (px - b * per_image) / p->out_w;
    const int32_t ox = px - b * per_image - oy * p->out_w;
    return td_pw_pixel(p, in0, b, oy, ox);
}

void td_conv2d_1x1_back_s8_dsp(const td_conv2d_params_t *p, const int8_t *in0, int8_t *out0)
{
    int32_t end = p->batches * p->out_h * p->out_w;
    while (end > 0) {
        const int32_t first = end > TD_GEMM_ROWS ? end - TD_GEMM_ROWS : 0;
        const int32_t n = end - first;
        const int8_t *rows[TD_GEMM_ROWS];
        for (int32_t j = 0; j < n; ++j) {
            rows[j] = td_input_pixel(p, in0, first + j);
        }
        td_pw_group(p, rows, n, out0 + first * p->out_c);
        end = first;
    }
}
