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
    for (int32_t r = 0; r < p->rows; ++r) {
        const int8_t *x = in0 + r * p->depth;
        int16_t *y = out0 + r * p->depth;
        const td_softmax_row_t row = td_softmax_row(p->exp_lut, x, p->depth, 16);
        for (int32_t c = 0; c < p->depth; ++c) {
            y[c] = td_sat_s16(td_softmax_prob(&row, p->exp_lut, x[c]) + INT16_MIN);
        }
    }
}
