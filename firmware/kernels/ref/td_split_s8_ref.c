/*
 * td_split_s8_ref.c - int8 SPLIT / SPLIT_V along any axis (a pure copy, the inverse of
 * CONCATENATION). Variadic: td_split_s8_ref(&p, in0, out0, ..., out<num_outputs-1>). For each
 * of the `outer` slices of the input, output i takes the next chunks[i] contiguous bytes.
 */
#include <stdarg.h>
#include <string.h>

#include "td_kernels.h"

void td_split_s8_ref(const td_split_params_t *p, const int8_t *in0, ...)
{
    int8_t *out[TD_SPLIT_MAX_OUTPUTS];
    va_list ap;
    va_start(ap, in0);
    for (int32_t i = 0; i < p->num_outputs; ++i) {
        out[i] = va_arg(ap, int8_t *);
    }
    va_end(ap);

    const int8_t *src = in0;
    for (int32_t o = 0; o < p->outer; ++o) {
        for (int32_t i = 0; i < p->num_outputs; ++i) {
            const int32_t n = p->chunks[i];
            memcpy(out[i] + (size_t)o * (size_t)n, src, (size_t)n);
            src += n;
        }
    }
}
