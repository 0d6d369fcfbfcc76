/*
 * td_mul_one.h - private to td_mul_s8_ref.c and td_mul_s16_ref.c: TFLite's quantized MUL of
 * one element pair, written once for both element types. The including file defines
 * TD_MUL_NAME (the function's name) and TD_MUL_T (int8_t or int16_t), once per translation
 * unit. (a - zp0) * (b - zp1) is rescaled once by the host's multiplier of
 * scale0 * scale1 / out_scale, offset by the output zero point and clamped to the fused
 * activation range.
 */
#if !defined(TD_MUL_NAME) || !defined(TD_MUL_T)
#error "define TD_MUL_NAME and TD_MUL_T first"
#endif

#include "td_kernels.h"

static inline TD_MUL_T TD_MUL_NAME(const td_mul_params_t *p, int32_t a, int32_t b)
{
    const int32_t prod = (a + p->in0_offset) * (b + p->in1_offset);
    const int32_t out = td_requantize(prod, p->out_mult, p->out_shift) + p->out_offset;
    return (TD_MUL_T)td_clamp_s32(out, p->act_min, p->act_max);
}
