/*
 * td_add_s16_ref.c - int16 ADD with broadcasting, bit-exact with TFLite Micro: the int8
 * kernel's scheme (td_addsub_one.h: offset, shift left by left_shift = 15, rescale both
 * inputs to twice the larger scale, sum, rescale to the output, offset, clamp) on int16
 * data; params from tinydeploy/kernels/int16.py; both operands are arena tensors. Safe in
 * place.
 */
#include "td_bcast_rows.h"
#include "td_kernels.h"

#define TD_ADDSUB_NAME td_add16_one
#define TD_ADDSUB_T int16_t
#define TD_ADDSUB_PARAMS td_add_params_t
#define TD_ADDSUB_OP +
#include "td_addsub_one.h"

void td_add_s16_ref(const td_add_params_t *p, const int16_t *in0, const int16_t *in1,
                    int16_t *out0)
{
    /* both operands in the arena (in1_const is NULL) */
    TD_BCAST_WALK(int16_t, p, in0, in1, out0, td_add16_one);
}
