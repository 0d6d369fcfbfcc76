/*
 * td_conv2d_s16_ref.c - 16x8 CONV_2D (int16 activations with zero point 0, int8 per-channel
 * weights, int64 bias or none), bit-exact with TFLite Micro's reference: int64 sums
 * requantized from the int64 accumulator (td_requant64.h); the loop is td_conv2d_body.h's.
 * Not in place.
 */
#include "td_kernels.h"

#define TD_ACCUM TD_ACCUM_S16
#define TD_CONV_PARAMS td_conv2d_s16_params_t
#include "td_conv2d_body.h"

void td_conv2d_s16_ref(const td_conv2d_s16_params_t *p, const int16_t *in0, int16_t *out0)
{
    td_conv2d_body(p, in0, out0);
}
