/*
 * td_maximum_s16_ref.c - int16 MAXIMUM with broadcasting, TFLM's int16 kernel: the
 * larger raw int16 value (td_minmax_one.h), as the int8 kernel; both operands are arena
 * tensors (in0_const and in1_const are NULL). Safe in place.
 */
#include "td_bcast_rows.h"
#include "td_kernels.h"
#include "td_minmax_one.h"

void td_maximum_s16_ref(const td_binary_params_t *p, const int16_t *in0, const int16_t *in1,
                        int16_t *out0)
{
    TD_BCAST_WALK(int16_t, p, in0, in1, out0, td_max_one);
}
