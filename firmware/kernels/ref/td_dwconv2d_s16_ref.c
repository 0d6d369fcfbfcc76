/*
 * td_dwconv2d_s16_ref.c - 16x8 DEPTHWISE_CONV_2D (int16 activations with zero point 0, int8
 * per-channel weights, int64 bias), bit-exact with TFLite Micro: int64 sums, per-channel
 * int64 requantization (td_requant64.h), clamp; the loop is td_conv2d_body.h's, as
 * td_dwconv2d_body.h sets it up. Filter layout [filter_h][filter_w][out_c] as the int8
 * kernel. Not in place.
 */
#include "td_kernels.h"

#define TD_ACCUM TD_ACCUM_S16
#define TD_DW_PARAMS td_dwconv2d_s16_params_t
#include "td_dwconv2d_body.h"

void td_dwconv2d_s16_ref(const td_dwconv2d_s16_params_t *p, const int16_t *in0,
                         int16_t *out0)
{
    td_conv2d_body(p, in0, out0);
}
