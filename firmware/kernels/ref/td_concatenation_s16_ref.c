/*
 * td_concatenation_s16_ref.c - int16 CONCATENATION (and PACK) along any axis, a pure copy as
 * TFLite Micro's (inputs share the output's quantization). Variadic like the int8 kernel:
 * td_concatenation_s16_ref(&p, in0, ..., in<num_inputs-1>, out0); chunks are in elements.
 */
#include <stdarg.h>
#include <string.h>

#include "td_kernels.h"

#define TD_CONCAT16_MAX_INPUTS 10

void td_concatenation_s16_ref(const td_concatenation_params_t *p, ...)
{
    const int16_t *in[TD_CONCAT16_MAX_INPUTS];
    va_list ap;
    va_start(ap, p);
    for (int32_t i = 0; i < p->num_inputs; ++i) {
        in[i] = va_arg(ap, const int16_t *);
    }
    int16_t *out = va_arg(ap, int16_t *);
    va_end(ap);

    for (int32_t o = 0; o < p->outer; ++o) {
        for (int32_t i = 0; i < p->num_inputs; ++i) {
            const int32_t n = p->chunks[i];
            memcpy(out, in[i] + (size_t)o * (size_t)n, (size_t)n * sizeof(int16_t));
            out += n;
        }
    }
}
