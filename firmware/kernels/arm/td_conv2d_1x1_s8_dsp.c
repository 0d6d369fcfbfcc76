/*
 * td_conv2d_1x1_s8_dsp.c - int8 pointwise (1x1) convolution with the DSP extension,
 * bit-exact with td_conv2d_s8_ref (and so with TFLite Micro).
 *
 * A 1x1 convolution without groups is a matrix product: output pixel p, channel o is
 * bias[o] + dot(in[pixel p] + input_offset, filter[o]), requantized per channel. Pixels
 * are taken TD_GEMM_ROWS (6) at a time in flat (batch, y, x) order (a group may straddle
 * rows, so odd widths lose nothing); each group is widened once into the rows buffer and
 * multiplied with every int8 filter row (td_pw_group, td_gemm_s8_dsp.h). A group's input
 * is read entirely before any of its outputs is written.
 *
 * Parameters: td_conv2d_params_t as for td_conv2d_s8_ref with filter_h = filter_w = 1,
 * filter_c = in_c <= TD_GEMM_STACK_DEPTH (no groups), pad_h = pad_w = 0 (always so for a 1x1
 * kernel), any stride; filter, bias, mult and shift are the reference's; requant_form as
 * chosen on the host. No scratch (the rows buffer is in td_pw_group's frame).
 */
#include "td_kernels.h"

#include "td_gemm_s8_dsp.h"

int32_t td_conv2d_1x1_s8_dsp_scratch_size(const td_conv2d_params_t *p)
{
    (void)p;
    return 0;
}

void td_conv2d_1x1_s8_dsp(const td_conv2d_params_t *p, const int8_t *in0, int8_t *out0)
{
    const int32_t pixels = p->batches * p->out_h * p->out_w;
    int32_t b = 0, y = 0, x = 0;
    for (int32_t px = 0; px < pixels; px += TD_GEMM_ROWS) {
        const int32_t n = pixels - px < TD_GEMM_ROWS ? pixels - px : TD_GEMM_ROWS;
        const int8_t *rows[TD_GEMM_ROWS];
        for (int32_t j = 0; j < n; ++j, td_next_pixel(p, &b, &y, &x)) {
            rows[j] = td_pw_pixel(p, in0, b, y, x);
        }
        td_pw_group(p, rows, n, out0 + px * p->out_c);
    }
}
