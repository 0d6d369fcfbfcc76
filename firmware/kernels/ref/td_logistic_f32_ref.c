/*
 * td_logistic_f32_ref.c - float32 LOGISTIC, as TFLite Micro's reference: 1 above
 * 16.619047164916992188, expf(x) below -9, 1 / (1 + expf(-x)) between. For float ops between
 * DEQUANTIZE and QUANTIZE on cores with an FPU. Safe in place.
 */
#include <math.h>

#include "td_kernels.h"

void td_logistic_f32_ref(const td_unary_f32_params_t *p, const float *in0, float *out0)
{
    const float upper = 16.619047164916992188f;
    const float lower = -9.0f;
    for (int32_t i = 0; i < p->size; ++i) {
        const float v = in0[i];
        if (v > upper) {
            out0[i] = 1.0f;
        } else if (v < lower) {
            out0[i] = expf(v);
        } else {
            out0[i] = 1.0f / (1.0f + expf(-v));
        }
    }
}
