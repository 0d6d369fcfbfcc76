/*
 * td_sub_s8_ref.c - int8 SUB with broadcasting, bit-exact with TFLite Micro's reference.
 *
 * As ADD (td_addsub_one.h): both inputs are offset, scaled by 2^left_shift (20), rescaled to
 * twice the larger input scale, then subtracted, rescaled to the output, offset and clamped
 * to the fused activation range. Multipliers and strides come from
 * tinydeploy/kernels/binary.py.
 */
#include "td_binary_walk.h"

#define TD_ADDSUB_NAME td_sub_one
#define TD_ADDSUB_T int8_t
#define TD_ADDSUB_PARAMS td_binary_params_t
#define TD_ADDSUB_OP -
#include "td_addsub_one.h"

void td_sub_s8_ref(const td_binary_params_t *p, const int8_t *in0, const int8_t *in1,
                   int8_t *out0)
{
    TD_BINARY_WALK(p, in0, in1, out0, td_sub_one);
}
