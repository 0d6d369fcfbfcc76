/*
 * td_log_softmax_s8_ref.c - int8 LOG_SOFTMAX along the last dimension (output scale 16/256,
 * zero point 127), bit-exact with TFLite Micro's gemmlowp fixed-point reference.
 *
 * Per row: m = max(x); sum = wrapping Q12.19 sum of exp_lut[m - x[c]] (the host's
 * exp(beta * scale * diff) rescaled to Q12, 0 below diff_min); log_sum = ln(sum) in Q5.26
 * (td_log_q12_to_q5 below: gemmlowp's log_x_for_x_greater_than_or_equal_to_1 with its
 * octave normalisation, a rational approximation and one reciprocal); then every diff above
 * max(diff_min - 1, rescaled(log_sum + INT32_MIN)) gives
 * clamp(RoundingDivideByPOT(q5_lut[m - x[c]] - log_sum, 22) + 127), the others -128.
 * No scratch; safe in place (each output is written after its input is read).
 */
#include "td_kernels.h"
#include "td_gemmlowp.h"

static int32_t td_lsm_sat64(int64_t v)
{
    return v > INT32_MAX ? INT32_MAX : (v < INT32_MIN ? INT32_MIN : (int32_t)v);
}

static int32_t td_lsm_add(int32_t a, int32_t b)
{
    return (int32_t)((uint32_t)a + (uint32_t)b);
}

static int32_t td_lsm_mul(int32_t a, int32_t b)
{
    return td_sat_rounding_doubling_high_mul(a, b);
}

/* ln(x) for a Q12.19 x >= 1, as Q5.26 (log_x_for_x_greater_than_or_equal_to_1<5, 12>). */
static int32_t td_log_q12_to_q5(int32_t z_a)
{
    const int32_t log_2 = 1488522236, sqrt_sqrt_half = 1805811301, sqrt_half = 1518500250;
    const int32_t alpha_n = 117049297, alpha_d = 127690142, alpha_i = 1057819769,
                  alpha_f = 638450708;
    const int32_t shifted_quarter = 536870912 >> 6; /* Rescale<6>(1/4), exact */
    const int32_t in_bits = 12, accum_frac = 31 - 6;

    const int32_t hr_a = td_clz32((uint32_t)z_a);
    const int32_t r_a_tmp = td_sat_rounding_mul_pot(z_a, hr_a - 1);
    const int32_t r_a = td_sat_rounding_mul_pot(td_lsm_mul(r_a_tmp, sqrt_half), 1);
    const int32_t za_pow = td_lsm_sat64((int64_t)td_sat_rounding_mul_pot(in_bits - hr_a, accum_frac)
                                        + shifted_quarter);
    const int32_t z_b = td_lsm_mul(z_a, sqrt_half);
    const int32_t hr_b = td_clz32((uint32_t)z_b) - 1;
    const int32_t r_b = td_sat_rounding_mul_pot(z_a, hr_b);
    const int32_t zb_pow = td_lsm_sat64((int64_t)td_sat_rounding_mul_pot(in_bits - hr_b, accum_frac)
                                        - shifted_quarter);
    const int32_t r = r_a < r_b ? r_a : r_b;
    const int32_t z_pow = za_pow > zb_pow ? za_pow : zb_pow;

    const int64_t ps = (int64_t)r + sqrt_sqrt_half;
    const int32_t p = (int32_t)((ps + (ps >= 0 ? 1 : -1)) / 2);
    int32_t q = (int32_t)((uint32_t)r - (uint32_t)sqrt_sqrt_half);
    q = td_lsm_add(q, q);
    const int32_t common_sq = td_lsm_mul(q, q);
    const int32_t num = td_lsm_add(td_lsm_mul(q, r),
                                   td_lsm_mul(td_lsm_mul(q, common_sq), alpha_n));
    const int32_t den = td_lsm_add(
        td_lsm_mul(p, td_lsm_add(td_lsm_add(alpha_i, q), td_lsm_mul(alpha_d, common_sq))),
        td_lsm_mul(alpha_f, q));
    const int32_t recip = td_one_over_one_plus_x(den);
    const int32_t num_scaled = td_rounding_divide_by_pot(num, 6);
    const int32_t sum = td_lsm_add(td_lsm_mul(z_pow, log_2), td_lsm_mul(num_scaled, recip));
    return td_sat_rounding_mul_pot(sum, 1);
}

void td_log_softmax_s8_ref(const td_log_softmax_params_t *p, const int8_t *in0,
                           int8_t *out0)
{
    for (int32_t r = 0; r < p->rows; ++r) {
        const int8_t *x = in0 + r * p->depth;
        int8_t *y = out0 + r * p->depth;
        const int32_t m = td_max_s8(x, p->depth);
        int32_t sum = 0;
        for (int32_t c = 0; c < p->depth; ++c) {
            sum = td_lsm_add(sum, p->exp_lut[m - x[c]]);
        }
        const int32_t log_sum = td_log_q12_to_q5(sum);
        const int32_t rescaled = td_requantize(td_lsm_add(log_sum, INT32_MIN), p->rev_mult,
                                               p->rev_shift);
        const int32_t adjusted = (p->diff_min - 1) > rescaled ? (p->diff_min - 1) : rescaled;
        for (int32_t c = 0; c < p->depth; ++c) {
            const int32_t d = m - x[c];
            if (-d > adjusted) {
                const int32_t v = td_rounding_divide_by_pot(
                    (int32_t)((uint32_t)p->q5_lut[d] - (uint32_t)log_sum), 22) + 127;
                y[c] = td_sat_s8(v);
            } else {
                y[c] = INT8_MIN;
            }
        }
    }
}
