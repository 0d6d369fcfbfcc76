/*
 * td_softmax_s8_s16_ref.c - int8 in, int16 out SOFTMAX (output scale 1/65536, zero point
 * -32768), bit-exact with TFLite Micro: the int8 kernel's gemmlowp path (td_softmax_body.h:
 * host exp table, Q12.19 sum, reciprocal), with the final shift for a 16-bit output
 * (num_bits_over_unit + 15) and the int16 offset. Used by keyword models such as TFLM's
 * keyword_scrambled. No scratch.
 */
#include "td_kernels.h"
#include "td_softmax_body.h"

void td_softmax_s8_s16_ref(const td_softmax_params_t *p, const int8_t *in0, int16_t *out0)
{
    td_softmax_rows(p, in0, out0, 16);
}
