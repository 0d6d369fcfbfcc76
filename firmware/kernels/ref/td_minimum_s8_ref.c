/*
 * td_minimum_s8_ref.c - int8 MINIMUM with broadcasting, as TFLite Micro's reference: the
 * smaller raw int8 value (no requantization, as in TFLM).
 */
#include "td_binary_walk.h"

static inline int8_t td_minimum_one(const td_binary_params_t *p, int32_t a, int32_t b)
{
    (void)p;
    return (int8_t)(a < b ? a : b);
}

void td_minimum_s8_ref(const td_binary_params_t *p, const int8_t *in0, const int8_t *in1,
                       int8_t *out0)
{
    TD_BINARY_WALK(p, in0, in1, out0, td_minimum_one);
}
