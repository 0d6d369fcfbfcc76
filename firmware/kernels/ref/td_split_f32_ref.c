/*
 * td_split_f32_ref.c - float32 SPLIT / SPLIT_V along any axis, TFLM's float kernel: the int8
 * kernel's copy (td_split_body.h) on float32 elements, for the float ops a converter leaves
 * between a DEQUANTIZE and a QUANTIZE. A pure copy: bit-exact by construction. Variadic:
 * td_split_f32_ref(&p, in0, out0, ..., out<num_outputs-1>); chunks are in elements.
 */
#include <stdarg.h>

#include "td_kernels.h"
#include "td_split_body.h"

void td_split_f32_ref(const td_split_params_t *p, const float *in0, ...)
{
    va_list ap;
    va_start(ap, in0);
    td_split_body(p, in0, sizeof *in0, ap);
    va_end(ap);
}
