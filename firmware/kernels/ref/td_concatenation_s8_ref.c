/*
 * td_concatenation_s8_ref.c - int8 CONCATENATION along any axis (pure copy).
 *
 * Variadic: td_concatenation_s8_ref(&p, in0, ..., in<num_inputs-1>, out0). TFLite requires
 * every int8 input to have the output's scale and zero point, so no requantization happens.
 * For each of the `outer` slices, input i contributes chunks[i] contiguous bytes
 * (td_concatenation_body.h).
 */
#include <stdarg.h>

#include "td_kernels.h"

#define TD_ELEM_T int8_t
#include "td_concatenation_body.h"

void td_concatenation_s8_ref(const td_concatenation_params_t *p, ...)
{
    va_list ap;
    va_start(ap, p);
    td_concatenation_body(p, ap);
    va_end(ap);
}
