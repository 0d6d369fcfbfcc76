/*
 * td_mul_s8_ref.c - int8 MUL with broadcasting, bit-exact with TFLite Micro's reference.
 *
 * (a - zp0) * (b - zp1) is rescaled once by the host-computed multiplier of
 * scale0 * scale1 / out_scale, offset by the output zero point and clamped to the fused
 * activation range (td_mul_one.h). Broadcast strides come from the host
 * (tinydeploy/kernels/elementwise.py).
 */
#include <stddef.h>

#include "td_bcast_rows.h"
#include "td_kernels.h"

#define TD_MUL_NAME td_mul_one
#define TD_MUL_T int8_t
#include "td_mul_one.h"

void td_mul_s8_ref(const td_mul_params_t *p, const int8_t *in0, const int8_t *in1,
                   int8_t *out0)
{
    TD_BCAST_WALK(int8_t, p, in0, p->in1_const != NULL ? p->in1_const : in1, out0, td_mul_one);
}
