/*
 * td_fully_connected_s8_ref.c - reference int8 fully connected layer, bit-exact with TFLM.
 *
 * out[b, o] = clamp(requant(sum over d of (in[b, d] + input_offset)
 *             * (filter[o, d] + filter_offset) + bias[o], mult[o], shift[o])
 *             + output_offset, act_min, act_max).   No scratch memory.
 */
#include "td_kernels.h"

void td_fully_connected_s8_ref(const td_fully_connected_params_t *p, const int8_t *in0,
                               int8_t *out0)
{
    for (int32_t b = 0; b < p->batches; ++b) {
        const int8_t *row = in0 + b * p->accum_depth;
        for (int32_t o = 0; o < p->out_c; ++o) {
            const int8_t *w = p->filter + o * p->accum_depth;
            int32_t acc = 0;
            for (int32_t d = 0; d < p->accum_depth; ++d) {
                acc += ((int32_t)row[d] + p->input_offset) * ((int32_t)w[d] + p->filter_offset);
            }
            if (p->bias != 0) {
                acc += p->bias[o];
            }
            acc = td_requantize(acc, p->mult[o], p->shift[o]) + p->output_offset;
            out0[b * p->out_c + o] = (int8_t)td_clamp_s32(acc, p->act_min, p->act_max);
        }
    }
}
