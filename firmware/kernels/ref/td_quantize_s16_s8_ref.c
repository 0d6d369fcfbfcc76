/*
 * td_quantize_s16_s8_ref.c - QUANTIZE int16_t -> int8_t
 * (TFLite's Requantize, see td_requant_body.h).
 * Safe in place when the element sizes are equal.
 */
#include "td_requant_body.h"

void td_quantize_s16_s8_ref(const td_requant_params_t *p, const int16_t *in0, int8_t *out0)
{
    TD_REQUANT_LOOP(p, in0, out0, int8_t, INT8_MIN, INT8_MAX);
}
