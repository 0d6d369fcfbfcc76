/*
 * td_split_s8_ref.c - int8 SPLIT / SPLIT_V along any axis (a pure copy, the inverse of
 * CONCATENATION). Variadic: td_split_s8_ref(&p, in0, out0, ..., out<num_outputs-1>). For each
 * of the `outer` slices of the input, output i takes the next chunks[i] contiguous bytes
 * (td_split_body.h).
 */
#include <stdarg.h>

#include "td_kernels.h"
#include "td_split_body.h"

void td_split_s8_ref(const td_split_params_t *p, const int8_t *in0, ...)
{
    va_list ap;
    va_start(ap, in0);
    td_split_body(p, in0, sizeof *in0, ap);
    va_end(ap);
}
