/*
 * td_fully_connected_s8_dsp.c - int8 fully connected layer with the DSP extension, bit-exact
 * with td_fully_connected_s8_ref.
 *
 * out[b][o] = dot(in[b], filter[o]) + folded bias, requantized per feature. Input rows are
 * taken in pairs, sign-extended into a q15 pair buffer in scratch, and multiplied with every
 * pair of packed filter rows (2 rows x 2 features per inner loop, see td_gemm_s8_dsp.h).
 *
 * Parameters: td_fully_connected_params_t as for td_fully_connected_s8_ref with
 * filter_offset = 0 (symmetric weights; the host keeps the reference kernel otherwise) and two
 * differences prepared on the host: `filter` points to the q15 rows of the filter
 * ([out_c][td_q15_len(accum_depth)] int16, little-endian, 4-byte aligned) and `bias` is never
 * NULL and holds bias[o] + input_offset * sum_d filter[o][d] (mod 2^32). input_offset is not
 * read. scratch: td_fully_connected_s8_dsp_scratch_size(p) bytes, 4-byte aligned.
 */
#include "td_kernels.h"

#include "td_gemm_s8_dsp.h"

int32_t td_fully_connected_s8_dsp_scratch_size(const td_fully_connected_params_t *p)
{
    return td_pair_bytes(p->accum_depth);
}

void td_fully_connected_s8_dsp(const td_fully_connected_params_t *p, const int8_t *in0,
                               int8_t *out0, void *scratch)
{
    const int32_t k = p->accum_depth;
    const int32_t oc = p->out_c;
    td_word_t *pair = (td_word_t *)scratch;
    for (int32_t r = 0; r < p->batches; r += 2) {
        const int32_t two = r + 1 < p->batches;
        const int8_t *a = in0 + r * k;
        int8_t *d0 = out0 + r * oc;
        td_extend_pair(a, two ? a + k : 0, k, pair);
        td_pair_times_filter(pair, p->filter, k, oc, p->bias, p->mult, p->shift,
                             p->output_offset, p->act_min, p->act_max, d0,
                             two ? d0 + oc : 0);
    }
}
