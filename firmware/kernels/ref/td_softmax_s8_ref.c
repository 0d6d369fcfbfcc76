/*
 * td_softmax_s8_ref.c - reference int8 softmax (int8 output, scale 1/256, zero point -128),
 * bit-exact with TFLite Micro's gemmlowp fixed-point path: the shared row work of
 * td_softmax_body.h with an 8-bit output (shift num_bits_over_unit + 23) and offset -128.
 * No scratch memory.
 */
#include "td_kernels.h"
#include "td_softmax_body.h"

void td_softmax_s8_ref(const td_softmax_params_t *p, const int8_t *in0, int8_t *out0)
{
    td_softmax_rows(p, in0, out0, 8);
}
