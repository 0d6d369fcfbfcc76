/*
 * td_sub_s16_ref.c - int16 SUB with broadcasting, bit-exact with TFLite Micro: the int8
 * SUB scheme (offset, shift left by left_shift = 15, rescale both inputs to twice the
 * larger scale, subtract, rescale to the output, offset, clamp) on int16 data; params from
 * tinydeploy/kernels/int16.py; both operands are arena tensors. Safe in place.
 */
#include "td_bcast_rows.h"
#include "td_kernels.h"

static inline int16_t td_sub16_one(const td_add_params_t *p, int32_t a, int32_t b)
{
    const int32_t x = (int32_t)((uint32_t)(a + p->in0_offset) << p->left_shift);
    const int32_t y = (int32_t)((uint32_t)(b + p->in1_offset) << p->left_shift);
    const int32_t sx = td_requantize(x, p->in0_mult, p->in0_shift);
    const int32_t sy = td_requantize(y, p->in1_mult, p->in1_shift);
    const int32_t out = td_requantize(sx - sy, p->out_mult, p->out_shift) + p->out_offset;
    return (int16_t)td_clamp_s32(out, p->act_min, p->act_max);
}

void td_sub_s16_ref(const td_add_params_t *p, const int16_t *in0, const int16_t *in1,
                    int16_t *out0)
{
    /* both operands in the arena (in1_const is NULL) */
    TD_BCAST_WALK(int16_t, p, in0, in1, out0, td_sub16_one);
}
