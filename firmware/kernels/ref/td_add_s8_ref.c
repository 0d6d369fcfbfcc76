/*
 * td_add_s8_ref.c - int8 ADD with broadcasting, bit-exact with TFLite Micro's reference.
 *
 * Each input is offset by its zero point, scaled by 2^left_shift (20), rescaled by its own
 * multiplier to a common scale (twice the larger input scale), summed, rescaled to the
 * output scale, offset and clamped to the fused activation range (td_addsub_one.h). All
 * multipliers, shifts, offsets and broadcast strides were computed on the host
 * (tinydeploy/kernels/elementwise.py).
 */
#include <stddef.h>

#include "td_bcast_rows.h"
#include "td_kernels.h"

#define TD_ADDSUB_NAME td_add_one
#define TD_ADDSUB_T int8_t
#define TD_ADDSUB_PARAMS td_add_params_t
#define TD_ADDSUB_OP +
#include "td_addsub_one.h"

void td_add_s8_ref(const td_add_params_t *p, const int8_t *in0, const int8_t *in1,
                   int8_t *out0)
{
    TD_BCAST_WALK(int8_t, p, in0, p->in1_const != NULL ? p->in1_const : in1, out0, td_add_one);
}
