/*
 * td_elu_f32_ref.c - float32 ELU, as TFLite Micro's reference: x < 0 ? expm1f(x) : x.
 * For float ops the converter leaves between DEQUANTIZE and QUANTIZE; selected only for
 * cores with an FPU. Bit-exact with the oracle where the C library's expm1f agrees with the
 * host's (checked on the emulated Cortex-M4F by the target tier). Safe in place.
 */
#include <math.h>

#include "td_kernels.h"

void td_elu_f32_ref(const td_unary_f32_params_t *p, const float *in0, float *out0)
{
    for (int32_t i = 0; i < p->size; ++i) {
        const float v = in0[i];
        out0[i] = v < 0.0f ? expm1f(v) : v;
    }
}
