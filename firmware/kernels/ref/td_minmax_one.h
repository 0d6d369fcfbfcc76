/*
 * td_minmax_one.h - private to the MAXIMUM and MINIMUM reference kernels (td_maximum_s8_ref.c,
 * td_minimum_s8_ref.c, td_maximum_s16_ref.c, td_minimum_s16_ref.c): the larger (or smaller)
 * raw value of one element pair, written once. TFLM compares the stored values and never
 * requantizes (the host requires one quantization for both inputs and the output).
 *
 * The including file defines TD_MINMAX_NAME (the function's name), TD_MINMAX_T (int8_t or
 * int16_t) and TD_MINMAX_MAX (1: maximum, 0: minimum), once per translation unit.
 */
#if !defined(TD_MINMAX_NAME) || !defined(TD_MINMAX_T) || !defined(TD_MINMAX_MAX)
#error "define TD_MINMAX_NAME, TD_MINMAX_T and TD_MINMAX_MAX first"
#endif

#include "td_kernels.h"

static inline TD_MINMAX_T TD_MINMAX_NAME(const td_binary_params_t *p, int32_t a, int32_t b)
{
    (void)p;
    return (TD_MINMAX_T)(TD_MINMAX_MAX ? (a > b ? a : b) : (a < b ? a : b));
}
