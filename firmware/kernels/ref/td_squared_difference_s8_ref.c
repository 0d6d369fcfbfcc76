/*
 * td_squared_difference_s8_ref.c - int8 SQUARED_DIFFERENCE with broadcasting, bit-exact
 * with TFLite Micro: inputs offset, scaled by 2^left_shift (7), rescaled to twice the larger
 * input scale, subtracted, squared (fits int32: |diff| < 2^15), then rescaled by a general
 * multiplier (possibly > 1) to the output and clamped to int8.
 */
#include "td_binary_walk.h"

static inline int8_t td_sqdiff_one(const td_binary_params_t *p, int32_t a, int32_t b)
{
    const int32_t x = (int32_t)((uint32_t)(a + p->in0_offset) << p->left_shift);
    const int32_t y = (int32_t)((uint32_t)(b + p->in1_offset) << p->left_shift);
    const int32_t d = td_requantize(x, p->in0_mult, p->in0_shift)
                      - td_requantize(y, p->in1_mult, p->in1_shift);
    const int32_t out = td_requantize(d * d, p->out_mult, p->out_shift) + p->out_offset;
    return (int8_t)td_clamp_s32(out, p->act_min, p->act_max);
}

void td_squared_difference_s8_ref(const td_binary_params_t *p, const int8_t *in0,
                                  const int8_t *in1, int8_t *out0)
{
    TD_BINARY_WALK(p, in0, in1, out0, td_sqdiff_one);
}
