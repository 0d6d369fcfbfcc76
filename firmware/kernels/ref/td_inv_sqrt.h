/*
 * td_inv_sqrt.h - private to td_l2norm_s8_ref.c: TFLite's GetInvSqrtQuantizedMultiplierExp
 * (1/sqrt(x) as a Q31 multiplier and a left-positive shift) by five Newton-Raphson steps in
 * Q3.28, the same steps as the Python twin get_inv_sqrt_quantized_multiplier_exp in
 * tinydeploy/quantize/fixedpoint.py (checked against the interpreter through RSQRT and
 * L2_NORMALIZATION golden tests), on the primitives of td_gemmlowp.h.
 */
#ifndef TD_INV_SQRT_H
#define TD_INV_SQRT_H

#include <stdint.h>

#include "td_gemmlowp.h"
#include "td_requant.h"

/* *mult, *shift such that 1/sqrt(x) ~ mult * 2^(shift - 31); x <= 1 gives INT32_MAX, 0. */
static inline void td_inv_sqrt_multiplier(int32_t x, int32_t *mult, int32_t *shift)
{
    if (x <= 1) {
        *mult = INT32_MAX;
        *shift = 0;
        return;
    }
    int32_t s = 11;
    while (x >= (1 << 29)) {
        x /= 4;
        ++s;
    }
    const int32_t pairs = (td_clz32((uint32_t)x) - 1) / 2 - 1;
    s -= pairs;
    x = (int32_t)((uint32_t)x << (2 * pairs));
    const int32_t half_input = td_sat_rounding_mul_pot(x >> 1, -1);
    const int32_t half_three = (1 << 28) + (1 << 27);
    int32_t v = 1 << 28;
    for (int i = 0; i < 5; ++i) {
        const int32_t x3 = td_sat_rounding_mul_pot(
            td_sat_rounding_doubling_high_mul(td_sat_rounding_doubling_high_mul(v, v), v), 6);
        const int32_t d = (int32_t)((uint32_t)td_sat_rounding_doubling_high_mul(half_three, v)
                                    - (uint32_t)td_sat_rounding_doubling_high_mul(half_input,
                                                                                  x3));
        v = td_sat_rounding_mul_pot(d, 3);
    }
    v = td_sat_rounding_doubling_high_mul(v, 1518500250);
    if (s < 0) {
        v = (int32_t)((uint32_t)v << -s);
        s = 0;
    }
    *mult = v;
    *shift = -s;
}

#endif /* TD_INV_SQRT_H */
