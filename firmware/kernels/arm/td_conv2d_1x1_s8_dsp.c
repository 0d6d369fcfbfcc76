/*
 * td_conv2d_1x1_s8_dsp.c - int8 pointwise (1x1) convolution with the DSP extension,
 * bit-exact with td_conv2d_s8_ref (and so with TFLite Micro).
 *
 * A 1x1 convolution without groups is a matrix product: output pixel p, channel o is
 * dot(in[pixel p][0..in_c), filter[o][0..in_c)) plus the folded bias, requantized per channel.
 * Pixels are taken in pairs in flat (batch, y, x) order (so a pair may straddle two rows and
 * odd widths lose nothing) and output channels in pairs: each 2 x 2 block runs one
 * td_dot_2x2_s8; an odd last pixel or channel uses the 1 x 2 / 1 x 1 blocks.
 *
 * Parameters: td_conv2d_params_t as for td_conv2d_s8_ref with filter_h = filter_w = 1,
 * filter_c = in_c (no groups), pad_h = pad_w = 0 (always so for a 1x1 kernel), any stride,
 * and one difference: `bias` is never NULL and holds the folded bias
 * bias[o] + input_offset * sum_i filter[o][i] (mod 2^32), computed on the host. input_offset is
 * not read. No scratch memory.
 */
#include "td_kernels.h"

#include "td_gemm_s8_dsp.h"

/* Walks output pixels in flat order and yields the address of each one's input pixel. */
typedef struct {
    const td_conv2d_params_t *p;
    const int8_t *in0;
    int32_t b, y, x;
} td_pixel_cursor_t;

static const int8_t *td_cursor_next(td_pixel_cursor_t *c)
{
    const td_conv2d_params_t *p = c->p;
    const int8_t *src =
        c->in0 + ((c->b * p->in_h + c->y * p->stride_h) * p->in_w + c->x * p->stride_w)
                 * p->in_c;
    if (++c->x == p->out_w) {
        c->x = 0;
        if (++c->y == p->out_h) {
            c->y = 0;
            ++c->b;
        }
    }
    return src;
}

int32_t td_conv2d_1x1_s8_dsp_scratch_size(const td_conv2d_params_t *p)
{
    (void)p;
    return 0;
}

void td_conv2d_1x1_s8_dsp(const td_conv2d_params_t *p, const int8_t *in0, int8_t *out0)
{
    const int32_t k = p->in_c;
    const int32_t oc = p->out_c;
    const int32_t pixels = p->batches * p->out_h * p->out_w;
    const int32_t off = p->output_offset, lo = p->act_min, hi = p->act_max;
    const int32_t *bias = p->bias, *mult = p->mult, *shift = p->shift;
    td_pixel_cursor_t cur = { p, in0, 0, 0, 0 };
    int32_t acc[4];
    int32_t px = 0;
    for (; px + 2 <= pixels; px += 2) {
        const int8_t *a0 = td_cursor_next(&cur);
        const int8_t *a1 = td_cursor_next(&cur);
        int8_t *d0 = out0 + px * oc;
        int8_t *d1 = d0 + oc;
        const int8_t *w = p->filter;
        int32_t o = 0;
        for (; o + 2 <= oc; o += 2, w += 2 * k) {
            td_dot_2x2_s8(a0, a1, w, w + k, k, acc);
            d0[o] = td_output_s8(acc[0], bias[o], mult[o], shift[o], off, lo, hi);
            d0[o + 1] = td_output_s8(acc[1], bias[o + 1], mult[o + 1], shift[o + 1], off,
                                     lo, hi);
            d1[o] = td_output_s8(acc[2], bias[o], mult[o], shift[o], off, lo, hi);
            d1[o + 1] = td_output_s8(acc[3], bias[o + 1], mult[o + 1], shift[o + 1], off,
                                     lo, hi);
        }
        if (o < oc) {
            td_dot_1x2_s8(w, a0, a1, k, acc);
            d0[o] = td_output_s8(acc[0], bias[o], mult[o], shift[o], off, lo, hi);
            d1[o] = td_output_s8(acc[1], bias[o], mult[o], shift[o], off, lo, hi);
        }
    }
    if (px < pixels) {
        const int8_t *a0 = td_cursor_next(&cur);
        int8_t *d0 = out0 + px * oc;
        const int8_t *w = p->filter;
        int32_t o = 0;
        for (; o + 2 <= oc; o += 2, w += 2 * k) {
            td_dot_1x2_s8(a0, w, w + k, k, acc);
            d0[o] = td_output_s8(acc[0], bias[o], mult[o], shift[o], off, lo, hi);
            d0[o + 1] = td_output_s8(acc[1], bias[o + 1], mult[o + 1], shift[o + 1], off,
                                     lo, hi);
        }
        if (o < oc) {
            d0[o] = td_output_s8(td_dot_1x1_s8(a0, w, k), bias[o], mult[o], shift[o], off,
                                 lo, hi);
        }
    }
}
