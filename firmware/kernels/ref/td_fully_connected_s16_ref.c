/*
 * td_fully_connected_s16_ref.c - 16x8 FULLY_CONNECTED (int16 activations, int8 weights,
 * int64 bias or none), bit-exact with TFLite Micro's reference: int64 sums requantized from
 * the int64 accumulator (td_requant64.h); the loop is td_fully_connected_body.h's.
 */
#include "td_kernels.h"

#define TD_ACCUM TD_ACCUM_S16
#define TD_FC_PARAMS td_fully_connected_s16_params_t
#include "td_fully_connected_body.h"

void td_fully_connected_s16_ref(const td_fully_connected_s16_params_t *p, const int16_t *in0,
                                int16_t *out0)
{
    td_fully_connected_body(p, in0, out0);
}
