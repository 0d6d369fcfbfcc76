/*
 * td_sub_s8_ref.c - int8 SUB with broadcasting, bit-exact with TFLite Micro's reference.
 *
 * As ADD: both inputs are offset, scaled by 2^left_shift (20), rescaled to twice the larger
 * input scale, then subtracted, rescaled to the output, offset and clamped to the fused
 * activation range. Multipliers and strides come from tinydeploy/kernels/binary.py.
 */
#include "td_binary_walk.h"

static inline int8_t td_sub_one(const td_binary_params_t *p, int32_t a, int32_t b)
{
    const int32_t x = (int32_t)((uint32_t)(a + p->in0_offset) << p->left_shift);
    const int32_t y = (int32_t)((uint32_t)(b + p->in1_offset) << p->left_shift);
    const int32_t sx = td_requantize(x, p->in0_mult, p->in0_shift);
    const int32_t sy = td_requantize(y, p->in1_mult, p->in1_shift);
    const int32_t out = td_requantize(sx - sy, p->out_mult, p->out_shift) + p->out_offset;
    return (int8_t)td_clamp_s32(out, p->act_min, p->act_max);
}

void td_sub_s8_ref(const td_binary_params_t *p, const int8_t *in0, const int8_t *in1,
                   int8_t *out0)
{
    TD_BINARY_WALK(p, in0, in1, out0, td_sub_one);
}
