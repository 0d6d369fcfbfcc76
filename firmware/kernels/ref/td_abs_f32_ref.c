/*
 * td_abs_f32_ref.c - float32 ABS (fabsf, exact), for float ops between DEQUANTIZE and
 * QUANTIZE on cores with an FPU. Safe in place.
 */
#include <math.h>

#include "td_kernels.h"

void td_abs_f32_ref(const td_unary_f32_params_t *p, const float *in0, float *out0)
{
    for (int32_t i = 0; i < p->size; ++i) {
        out0[i] = fabsf(in0[i]);
    }
}
