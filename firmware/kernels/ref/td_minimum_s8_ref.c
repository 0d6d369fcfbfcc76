/*
 * td_minimum_s8_ref.c - int8 MINIMUM with broadcasting, as TFLite Micro's reference: the
 * smaller raw int8 value (td_minmax_one.h; TFLM compares the stored values and never
 * requantizes; the converter gives both inputs and the output one quantization).
 */
#include "td_binary_walk.h"
#include "td_minmax_one.h"

void td_minimum_s8_ref(const td_binary_params_t *p, const int8_t *in0, const int8_t *in1,
                       int8_t *out0)
{
    TD_BINARY_WALK(p, in0, in1, out0, td_min_one);
}
