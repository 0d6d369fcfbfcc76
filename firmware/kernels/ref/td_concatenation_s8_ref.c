/*
 * td_concatenation_s8_ref.c - int8 CONCATENATION along any axis (pure copy).
 *
 * Variadic: td_concatenation_s8_ref(&p, in0, ..., in<num_inputs-1>, out0). TFLite requires
 * every int8 input to have the output's scale and zero point, so no requantization happens.
 * For each of the `outer` slices, input i contributes chunks[i] contiguous bytes.
 */
#include <stdarg.h>
#include <string.h>

#include "td_kernels.h"

#define TD_CONCAT_MAX_INPUTS 10

void td_concatenation_s8_ref(const td_concatenation_params_t *p, ...)
{
    const int8_t *in[TD_CONCAT_MAX_INPUTS];
    va_list ap;
    va_start(ap, p);
    for (int32_t i = 0; i < p->num_inputs; ++i) {
        in[i] = va_arg(ap, const int8_t *);
    }
    int8_t *out = va_arg(ap, int8_t *);
    va_end(ap);

    for (int32_t o = 0; o < p->outer; ++o) {
        for (int32_t i = 0; i < p->num_inputs; ++i) {
            const int32_t n = p->chunks[i];
            memcpy(out, in[i] + (size_t)o * (size_t)n, (size_t)n);
            out += n;
        }
    }
}
