/*
 * td_minmax_one.h - private to the MAXIMUM and MINIMUM reference kernels (td_maximum_s8_ref.c,
 * td_minimum_s8_ref.c, td_maximum_s16_ref.c, td_minimum_s16_ref.c): the larger or smaller
 * raw value of one element pair, the element functions of their broadcast walks
 * (TD_BCAST_WALK, which stores the result in the element type), written once for both
 * element types. TFLM compares the stored values and never requantizes (the host requires one
 * quantization for both inputs and the output), so the result is always one of the inputs.
 */
#ifndef TD_MINMAX_ONE_H
#define TD_MINMAX_ONE_H

#include <stdint.h>

#include "td_kernels.h"

static inline int32_t td_max_one(const td_binary_params_t *p, int32_t a, int32_t b)
{
    (void)p;
    return a > b ? a : b;
}

static inline int32_t td_min_one(const td_binary_params_t *p, int32_t a, int32_t b)
{
    (void)p;
    return a < b ? a : b;
}

#endif /* TD_MINMAX_ONE_H */
