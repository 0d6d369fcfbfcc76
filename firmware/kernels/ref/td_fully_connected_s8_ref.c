/*
 * td_fully_connected_s8_ref.c - reference int8 fully connected layer, bit-exact with TFLM.
 *
 * out[b, o] = clamp(requant(sum over d of (in[b, d] + input_offset)
 *             * (filter[o, d] + filter_offset) + bias[o], mult[o], shift[o])
 *             + output_offset, act_min, act_max).   No scratch memory.
 * The loop is td_fully_connected_body.h's (int32 path of td_accum.h).
 */
#include "td_kernels.h"

#define TD_ACCUM TD_ACCUM_S8
#define TD_FC_PARAMS td_fully_connected_params_t
#include "td_fully_connected_body.h"

void td_fully_connected_s8_ref(const td_fully_connected_params_t *p, const int8_t *in0,
                               int8_t *out0)
{
    td_fully_connected_body(p, in0, out0);
}
