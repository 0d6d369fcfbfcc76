/*
 * td_mul_s16_ref.c - int16 MUL with broadcasting (zero points 0), bit-exact with TFLite
 * Micro: a * b rescaled once by scale0 * scale1 / out_scale and clamped, as the int8 kernel;
 * both operands in the arena. Safe in place.
 */
#include "td_bcast_rows.h"
#include "td_kernels.h"

static inline int16_t td_mul16_one(const td_mul_params_t *p, int32_t a, int32_t b)
{
    const int32_t prod = (a + p->in0_offset) * (b + p->in1_offset);
    const int32_t out = td_requantize(prod, p->out_mult, p->out_shift) + p->out_offset;
    return (int16_t)td_clamp_s32(out, p->act_min, p->act_max);
}

void td_mul_s16_ref(const td_mul_params_t *p, const int16_t *in0, const int16_t *in1,
                    int16_t *out0)
{
    /* both operands in the arena (in1_const is NULL) */
    TD_BCAST_WALK(int16_t, p, in0, in1, out0, td_mul16_one);
}
