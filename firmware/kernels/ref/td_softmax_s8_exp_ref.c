/*
 * td_softmax_s8_exp_ref.c - int8 softmax (int8 output, scale 1/256, zero point -128) that
 * computes each exp on the device, as TFLite Micro's gemmlowp path does, instead of reading
 * the host's 256-entry table (td_softmax_s8_ref: 1,024 B of flash). Bit-exact with it and
 * with TFLM: the same per-element steps, in the same order.
 *
 * Per row: m = max(x); for each x[c] with d = x[c] - m >= diff_min, the Q5.26 scaled
 * difference is SRDHM(d * 2^left_shift, multiplier) (MultiplyByQuantizedMultiplierGreater-
 * ThanOne; no wrap since |d| <= the input radius) and its exp is gemmlowp's
 * exp_on_negative_values<5> (Q0.31). Pass 0 sums RoundingDivideByPOT(exp, 12) (Q12.19,
 * wrapping add), then GetReciprocal (td_one_over_one_plus_x, once per row); pass 1 outputs
 * RoundingDivideByPOT(SRDHM(recip, exp), num_bits_over_unit + 23) - 128, and -128 where
 * d < diff_min. The exps are computed twice
 * (one call site, so the code is stored once); no table, no scratch. Not in place.
 */
#include "td_gemmlowp.h"
#include "td_kernels.h"

/* gemmlowp SaturatingRoundingDoublingHighMul for a, b not both INT32_MIN (every caller
 * here has one operand positive): TFLite's nudge (2^30, or 1 - 2^30 for a negative product)
 * and truncating division by 2^31 equal one arithmetic shift of ab + 2^30 (for ab < 0,
 * truncation adds 2^31 - 1 before flooring), so this is one 64-bit multiply-accumulate
 * instead of the signed branches of td_sat_rounding_doubling_high_mul. */
static inline int32_t td_sx_mul(int32_t a, int32_t b)
{
    return (int32_t)(((int64_t)a * b + ((int64_t)1 << 30)) >> 31);
}

/* gemmlowp exp_on_negative_values for a Q5.26 value a <= 0, result Q0.31. */
static int32_t td_exp_q5_26(int32_t a)
{
    /* exp(-2^k) in Q0.31 for k = -2 .. 4: one factor per set bit of the remainder */
    static const int32_t barrel[7] = {1672461947, 1302514674, 790015084, 290630308,
                                      39332535, 720401, 242};
    const int32_t quarter = 1 << 24;
    /* a mod 1/4, minus 1/4: in [-1/4, 0) */
    const int32_t amq = (int32_t)(((uint32_t)a & (uint32_t)(quarter - 1)) - (uint32_t)quarter);
    /* rescaled to Q0.31 (x 2^5, cannot saturate), plus 1/8: the Taylor point, in
     * [-1/8, 1/8); so every product below has a positive operand or two small ones */
    const int32_t x = (int32_t)((uint32_t)amq * 32u + (1u << 28));
    const int32_t x2 = td_sx_mul(x, x);
    const int32_t x3 = td_sx_mul(x2, x);
    const int32_t x4 = td_sx_mul(x2, x2);
    const int32_t x4_over_4 = td_rounding_divide_by_pot(x4, 2);
    const int32_t t = td_sx_mul((int32_t)((uint32_t)x4_over_4 + (uint32_t)x3),
                                715827883);   /* 1/3 */
    const int32_t poly = td_rounding_divide_by_pot((int32_t)((uint32_t)t + (uint32_t)x2), 1);
    const int32_t c = 1895147668;   /* exp(-1/8) */
    int32_t result = (int32_t)((uint32_t)c + (uint32_t)td_sx_mul(
        c, (int32_t)((uint32_t)x + (uint32_t)poly)));
    const uint32_t remainder = (uint32_t)amq - (uint32_t)a;
    for (int32_t k = 0; k < 7; ++k) {
        if (remainder & (1u << (24 + k))) {
            result = td_sx_mul(result, barrel[k]);
        }
    }
    return a == 0 ? INT32_MAX : result;
}

void td_softmax_s8_exp_ref(const td_softmax_exp_params_t *p, const int8_t *in0, int8_t *out0)
{
    for (int32_t r = 0; r < p->rows; ++r) {
        const int8_t *x = in0 + r * p->depth;
        int8_t *y = out0 + r * p->depth;
        const int32_t m = td_max_s8(x, p->depth);
        uint32_t sum = 0;
        int32_t recip = 0;
        int32_t exponent = 0;
        for (int32_t pass = 0; pass < 2; ++pass) {
            for (int32_t c = 0; c < p->depth; ++c) {
                const int32_t d = x[c] - m;
                int32_t e = 0;
                if (d >= p->diff_min) {
                    /* d * 2^left_shift fits (|d| <= the input radius); multiplier > 0 */
                    e = td_exp_q5_26(td_sx_mul((int32_t)((uint32_t)d << p->left_shift),
                                               p->multiplier));
                }
                if (pass == 0) {
                    sum += (uint32_t)td_rounding_divide_by_pot(e, 12);
                } else {
                    /* exponent > 31 (TFLM aborts): every probability is below 2^-9;
                     * recip > 0 */
                    const int32_t v = exponent > 31 ? 0 : td_rounding_divide_by_pot(
                        td_sx_mul(recip, e), exponent);
                    y[c] = td_sat_s8(v + INT8_MIN);
                }
            }
            if (pass == 0) {
                /* GetReciprocal of the Q12.19 sum (>= the maximum's exp, so non-zero) */
                const int32_t headroom_plus_one = td_clz32(sum);
                recip = td_one_over_one_plus_x(
                    (int32_t)((sum << headroom_plus_one) - ((uint32_t)1 << 31)));
                exponent = 12 - headroom_plus_one + 31 - 8;
            }
        }
    }
}
