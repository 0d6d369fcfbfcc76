/*
 * td_prelu_s8_ref.c - int8 PRELU with a broadcast alpha (operand 1), bit-exact with TFLite
 * Micro: x = in + in_offset; x >= 0 gives requantize(x, out_mult, out_shift), otherwise
 * requantize(x * (alpha + alpha_offset), alpha_mult, alpha_shift); plus the output zero
 * point, saturated to int8.
 */
#include "td_binary_walk.h"

static inline int8_t td_prelu_one(const td_binary_params_t *p, int32_t a, int32_t b)
{
    const int32_t x = a + p->in0_offset;
    int32_t v;
    if (x >= 0) {
        v = td_requantize(x, p->out_mult, p->out_shift);
    } else {
        v = td_requantize(x * (b + p->in1_offset), p->alpha_mult, p->alpha_shift);
    }
    return (int8_t)td_clamp_s32(v + p->out_offset, p->act_min, p->act_max);
}

void td_prelu_s8_ref(const td_binary_params_t *p, const int8_t *in0, const int8_t *in1,
                     int8_t *out0)
{
    TD_BINARY_WALK(p, in0, in1, out0, td_prelu_one);
}
