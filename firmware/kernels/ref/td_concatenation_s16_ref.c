/*
 * td_concatenation_s16_ref.c - int16 CONCATENATION (and PACK) along any axis, a pure copy as
 * TFLite Micro's (inputs share the output's quantization): the int8 kernel's copy
 * (td_concatenation_body.h) on int16 elements. Variadic like the int8 kernel:
 * td_concatenation_s16_ref(&p, in0, ..., in<num_inputs-1>, out0); chunks are in elements.
 */
#include <stdarg.h>

#include "td_kernels.h"

#define TD_ELEM_T int16_t
#include "td_concatenation_body.h"

void td_concatenation_s16_ref(const td_concatenation_params_t *p, ...)
{
    va_list ap;
    va_start(ap, p);
    td_concatenation_body(p, ap);
    va_end(ap);
}
