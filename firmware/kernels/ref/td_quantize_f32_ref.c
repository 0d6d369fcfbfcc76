/*
 * td_quantize_f32_ref.c - float32 -> int8 QUANTIZE as TFLite's AffineQuantize.
 *
 * q = clamp(round(x / scale) + zero_point, -128, 127), the division in single precision
 * and round() rounding halves away from zero. The rounding is done without libm: for
 * |r| < 2^23 the fraction r - trunc(r) is exact in float, larger values are integers already.
 * NaN inputs are unspecified (undefined in TFLite too).
 */
#include <string.h>

#include "td_kernels.h"

static int32_t td_round_half_away_f32(float r)
{
    if (r >= 2147483520.0f) {
        return INT32_MAX;
    }
    if (r <= -2147483648.0f) {
        return INT32_MIN;
    }
    int32_t t = (int32_t)r; /* truncates toward zero */
    const float frac = r - (float)t;
    if (frac >= 0.5f) {
        t += 1;
    } else if (frac <= -0.5f) {
        t -= 1;
    }
    return t;
}

void td_quantize_f32_ref(const td_quantize_f32_params_t *p, const float *in0, int8_t *out0)
{
    float scale;
    memcpy(&scale, &p->scale_bits, sizeof scale);
    for (int32_t i = 0; i < p->size; ++i) {
        float x;
        memcpy(&x, &in0[i], sizeof x);
        const int32_t r = td_round_half_away_f32(x / scale);
        /* saturating add: r may be at the int32 limits */
        const int64_t q = (int64_t)r + p->zero_point;
        out0[i] = (int8_t)(q < -128 ? -128 : (q > 127 ? 127 : q));
    }
}
