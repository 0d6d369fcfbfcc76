/*
 * td_add_s8_ref.c - int8 ADD with broadcasting, bit-exact with TFLite Micro's reference.
 *
 * Each input is offset by its zero point, scaled by 2^left_shift (20), rescaled by its own
 * multiplier to a common scale (twice the larger input scale), summed, rescaled to the
 * output scale, offset and clamped to the fused activation range. All multipliers, shifts,
 * offsets and broadcast strides were computed on the host (tinydeploy/kernels/elementwise.py).
 */
#include <stddef.h>

#include "td_bcast_rows.h"
#include "td_kernels.h"

static inline int8_t td_add_one(const td_add_params_t *p, int32_t a, int32_t b)
{
    const int32_t x = (int32_t)((uint32_t)(a + p->in0_offset) << p->left_shift);
    const int32_t y = (int32_t)((uint32_t)(b + p->in1_offset) << p->left_shift);
    const int32_t sx = td_requantize(x, p->in0_mult, p->in0_shift);
    const int32_t sy = td_requantize(y, p->in1_mult, p->in1_shift);
    const int32_t out = td_requantize(sx + sy, p->out_mult, p->out_shift) + p->out_offset;
    return (int8_t)td_clamp_s32(out, p->act_min, p->act_max);
}

void td_add_s8_ref(const td_add_params_t *p, const int8_t *in0, const int8_t *in1,
                   int8_t *out0)
{
    TD_BCAST_WALK(int8_t, p, in0, p->in1_const != NULL ? p->in1_const : in1, out0, td_add_one);
}
