/*
 * td_softmax_body.h - private to td_softmax_s8_ref.c and td_softmax_s8_s16_ref.c: the part
 * of TFLite Micro's int8-input softmax (gemmlowp path) that does not depend on the output
 * type, so both outputs share one row maximum, one Q12.19 sum and one reciprocal.
 *
 * Per row: m = max(x); sum = sum over c of RoundingDivideByPOT(exp_lut[m - x[c]], 12) (the
 * Q0.31 exp rescaled to Q12.19, wrapping add as gemmlowp); (recip, bits) = GetReciprocal(sum)
 * (the leading-zero normalisation and gemmlowp's three Newton-Raphson steps for 1/(1+x));
 * each probability is RoundingDivideByPOT(SRDHM(recip, exp_lut[m - x[c]]), bits + 31 -
 * out_bits), plus the output zero point, clamped (td_softmax_rows: the whole op).
 * The exp table (all input-scale, beta and diff_min work) is computed on the host.
 */
#ifndef TD_SOFTMAX_BODY_H
#define TD_SOFTMAX_BODY_H

#include <stdint.h>

#include "td_gemmlowp.h"
#include "td_kernels.h"

typedef struct {
    int32_t max;      /* row maximum, the exp table index base */
    int32_t recip;    /* Q0.31 reciprocal of the normalised sum */
    int32_t exponent; /* final rounding shift: num_bits_over_unit + 31 - out_bits */
} td_softmax_row_t;

static inline td_softmax_row_t td_softmax_row(const int32_t *exp_lut, const int8_t *x,
                                              int32_t depth, int32_t out_bits)
{
    td_softmax_row_t row;
    const int32_t m = td_max_s8(x, depth);
    uint32_t sum = 0;
    for (int32_t c = 0; c < depth; ++c) {
        sum += (uint32_t)td_rounding_divide_by_pot(exp_lut[m - x[c]], 12);
    }
    const int32_t headroom_plus_one = td_clz32(sum);
    const int32_t bits_over_unit = 12 - headroom_plus_one;
    const int32_t shifted_minus_one =
        (int32_t)((sum << headroom_plus_one) - ((uint32_t)1 << 31));
    row.max = m;
    row.recip = td_one_over_one_plus_x(shifted_minus_one);
    row.exponent = bits_over_unit + 31 - out_bits;
    return row;
}

/* The probability of x in the row, before the output zero point. TFLM aborts when the
 * exponent exceeds 31 (a row with more than ~2^(out_bits + 1) values at its maximum); every
 * such probability is below 2^-(out_bits + 1), so 0 is the exact limit. */
static inline int32_t td_softmax_prob(const td_softmax_row_t *row, const int32_t *exp_lut,
                                      int8_t x)
{
    const int32_t e = exp_lut[row->max - x];
    return row->exponent > 31 ? 0 : td_rounding_divide_by_pot(
        td_sat_rounding_doubling_high_mul(row->recip, e), row->exponent);
}

/* The whole op for an output of `bits` bits (8: int8, zero point -128; 16: int16, zero
 * point -32768): out is int8_t or int16_t data, `bits` a constant at each call site. */
static inline void td_softmax_rows(const td_softmax_params_t *p, const int8_t *in0, void *out0,
                                   int bits)
{
    int8_t *out8 = (int8_t *)out0;
    int16_t *out16 = (int16_t *)out0;
    for (int32_t r = 0; r < p->rows; ++r) {
        const int8_t *x = in0 + r * p->depth;
        const td_softmax_row_t row = td_softmax_row(p->exp_lut, x, p->depth, bits);
        for (int32_t c = 0; c < p->depth; ++c) {
            const int32_t v = td_softmax_prob(&row, p->exp_lut, x[c]);
            if (bits == 8) {
                out8[r * p->depth + c] = td_sat_s8(v + INT8_MIN);
            } else {
                out16[r * p->depth + c] = td_sat_s16(v + INT16_MIN);
            }
        }
    }
}

#endif /* TD_SOFTMAX_BODY_H */
