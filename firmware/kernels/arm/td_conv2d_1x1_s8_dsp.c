/*
 * td_conv2d_1x1_s8_dsp.c - int8 pointwise (1x1) convolution with the DSP extension,
 * bit-exact with td_conv2d_s8_ref (and so with TFLite Micro).
 *
 * A 1x1 convolution without groups is a matrix product: output pixel p, channel o is
 * dot(in[pixel p], filter[o]) plus the folded bias, requantized per channel. Pixels are taken
 * in pairs in flat (batch, y, x) order (a pair may straddle two rows, so odd widths lose
 * nothing); each pair is sign-extended once into a q15 pair buffer in scratch and then
 * multiplied with every pair of packed filter rows, 2 pixels x 2 channels per inner loop
 * (see td_gemm_s8_dsp.h).
 *
 * Parameters: td_conv2d_params_t as for td_conv2d_s8_ref with filter_h = filter_w = 1,
 * filter_c = in_c (no groups), pad_h = pad_w = 0 (always so for a 1x1 kernel), any stride,
 * and two differences, both prepared on the host: `filter` points to the q15 rows of the
 * filter ([out_c][td_q15_len(in_c)] int16, little-endian, 4-byte aligned), and `bias` is never
 * NULL and holds bias[o] + input_offset * sum_i filter[o][i] (mod 2^32). input_offset is not
 * read. scratch: td_conv2d_1x1_s8_dsp_scratch_size(p) bytes, 4-byte aligned.
 */
#include "td_kernels.h"

#include "td_gemm_s8_dsp.h"

int32_t td_conv2d_1x1_s8_dsp_scratch_size(const td_conv2d_params_t *p)
{
    return td_pair_bytes(p->in_c);
}

/* Advances (b, y, x) over the output pixels in flat order and returns the address of the
 * current pixel's input pixel. */
static const int8_t *td_next_pixel(const td_conv2d_params_t *p, const int8_t *in0,
                                   int32_t pos[3])
{
    const int8_t *src =
        in0 + ((pos[0] * p->in_h + pos[1] * p->stride_h) * p->in_w + pos[2] * p->stride_w)
              * p->in_c;
    if (++pos[2] == p->out_w) {
        pos[2] = 0;
        if (++pos[1] == p->out_h) {
            pos[1] = 0;
            ++pos[0];
        }
    }
    return src;
}

void td_conv2d_1x1_s8_dsp(const td_conv2d_params_t *p, const int8_t *in0, int8_t *out0,
                          void *scratch)
{
    const int32_t k = p->in_c;
    const int32_t oc = p->out_c;
    const int32_t pixels = p->batches * p->out_h * p->out_w;
    td_word_t *pair = (td_word_t *)scratch;
    int32_t pos[3] = { 0, 0, 0 };
    for (int32_t px = 0; px < pixels; px += 2) {
        const int32_t two = px + 1 < pixels;
        const int8_t *a = td_next_pixel(p, in0, pos);
        const int8_t *b = two ? td_next_pixel(p, in0, pos) : 0;
        int8_t *d0 = out0 + px * oc;
        td_extend_pair(a, b, k, pair);
        td_pair_times_filter(pair, p->filter, k, oc, p->bias, p->mult, p->shift,
                             p->output_offset, p->act_min, p->act_max, d0,
                             two ? d0 + oc : 0);
    }
}
