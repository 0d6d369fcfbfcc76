/*
 * td_lut_s8_ref.c - any int8 -> int8 elementwise function as a 256-entry table.
 *
 * Used for RELU, RELU6, LEAKY_RELU, HARD_SWISH, LOGISTIC, TANH and int8 QUANTIZE: their
 * output depends on one int8 input only, so the host evaluates TFLite's integer arithmetic
 * for all 256 inputs (tinydeploy/kernels/activations.py) and the device looks them up.
 * Safe in place (out0 == in0): each element is read before it is written.
 */
#include "td_kernels.h"

void td_lut_s8_ref(const td_lut_params_t *p, const int8_t *in0, int8_t *out0)
{
    const int8_t *lut = p->lut;
    for (int32_t i = 0; i < p->size; ++i) {
        out0[i] = lut[(int32_t)in0[i] + 128];
    }
}
