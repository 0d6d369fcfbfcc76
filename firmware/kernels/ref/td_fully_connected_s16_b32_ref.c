/*
 * td_fully_connected_s16_b32_ref.c - 16x8 FULLY_CONNECTED with an int32 bias (TFLite Micro's
 * int32-accumulator 16x8 path: int32 sums, the 32-bit requantization), bias in p->bias32;
 * the loop is td_fully_connected_body.h's.
 */
#include "td_kernels.h"

#define TD_ACCUM TD_ACCUM_S16_B32
#define TD_FC_PARAMS td_fully_connected_s16_params_t
#include "td_fully_connected_body.h"

void td_fully_connected_s16_b32_ref(const td_fully_connected_s16_params_t *p,
                                    const int16_t *in0, int16_t *out0)
{
    td_fully_connected_body(p, in0, out0);
}
