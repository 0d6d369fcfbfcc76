/*
 * td_quantize_s8_s16_ref.c - QUANTIZE int8_t -> int16_t
 * (TFLite's Requantize, see td_requant_body.h).
 * Safe in place when the element sizes are equal.
 */
#include "td_requant_body.h"

void td_quantize_s8_s16_ref(const td_requant_params_t *p, const int8_t *in0, int16_t *out0)
{
    TD_REQUANT_LOOP(p, in0, out0, int16_t, INT16_MIN, INT16_MAX);
}
