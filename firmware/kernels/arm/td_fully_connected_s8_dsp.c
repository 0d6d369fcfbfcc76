/*
 * td_fully_connected_s8_dsp.c - int8 fully connected layer with the DSP extension, bit-exact
 * with td_fully_connected_s8_ref.
 *
 * out[b][o] = dot(in[b], filter[o]) + folded bias, requantized per feature: rows are taken in
 * pairs and output features in pairs (td_dot_2x2_s8), with 1 x 2 / 1 x 1 blocks for odd ones.
 *
 * Parameters: td_fully_connected_params_t as for td_fully_connected_s8_ref with
 * filter_offset = 0 (symmetric weights; the host falls back to the reference otherwise) and
 * `bias` never NULL, holding bias[o] + input_offset * sum_d filter[o][d] (mod 2^32, from the
 * host). input_offset is not read. No scratch memory.
 */
#include "td_kernels.h"

#include "td_gemm_s8_dsp.h"

int32_t td_fully_connected_s8_dsp_scratch_size(const td_fully_connected_params_t *p)
{
    (void)p;
    return 0;
}

void td_fully_connected_s8_dsp(const td_fully_connected_params_t *p, const int8_t *in0,
                               int8_t *out0)
{
    const int32_t k = p->accum_depth;
    const int32_t oc = p->out_c;
    const int32_t off = p->output_offset, lo = p->act_min, hi = p->act_max;
    const int32_t *bias = p->bias, *mult = p->mult, *shift = p->shift;
    int32_t acc[4];
    int32_t r = 0;
    for (; r + 2 <= p->batches; r += 2) {
        const int8_t *a0 = in0 + r * k;
        const int8_t *a1 = a0 + k;
        int8_t *d0 = out0 + r * oc;
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
    if (r < p->batches) {
        const int8_t *a0 = in0 + r * k;
        int8_t *d0 = out0 + r * oc;
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
