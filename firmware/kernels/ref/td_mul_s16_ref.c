/*
 * td_mul_s16_ref.c - int16 MUL with broadcasting (zero points 0), bit-exact with TFLite
 * Micro: a * b rescaled once by scale0 * scale1 / out_scale and clamped, as the int8 kernel
 * (td_mul_one.h); both operands in the arena. Safe in place.
 */
#include "td_bcast_rows.h"
#include "td_kernels.h"

#define TD_MUL_NAME td_mul16_one
#define TD_MUL_T int16_t
#include "td_mul_one.h"

void td_mul_s16_ref(const td_mul_params_t *p, const int16_t *in0, const int16_t *in1,
                    int16_t *out0)
{
    /* both operands in the arena (in1_const is NULL) */
    TD_BCAST_WALK(int16_t, p, in0, in1, out0, td_mul16_one);
}
