/*
 * td_split_s16_ref.c - int16 SPLIT / SPLIT_V along any axis, TFLM's int16 kernel: the int8
 * kernel's copy (td_split_body.h) on int16 elements. Variadic:
 * td_split_s16_ref(&p, in0, out0, ..., out<num_outputs-1>); chunks are in elements.
 */
#include <stdarg.h>

#include "td_kernels.h"
#include "td_split_body.h"

void td_split_s16_ref(const td_split_params_t *p, const int16_t *in0, ...)
{
    va_list ap;
    va_start(ap, in0);
    td_split_body(p, in0, sizeof *in0, ap);
    va_end(ap);
}
