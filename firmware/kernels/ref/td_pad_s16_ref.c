/*
 * td_pad_s16_ref.c - int16 PAD / PADV2 (constant padding), TFLM's int16 kernel: the int8
 * kernel's fill and row copies (td_pad_body.h) on int16 elements; pad_value is the int16
 * padding value (0 for PAD: 16x8 zero points are 0). Not in place.
 */
#include "td_kernels.h"

#define TD_ELEM_T int16_t
#include "td_pad_body.h"

void td_pad_s16_ref(const td_pad_params_t *p, const int16_t *in0, int16_t *out0)
{
    td_pad_body(p, in0, out0);
}
