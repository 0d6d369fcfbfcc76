/*
 * td_fe_float.h: the float arithmetic the float front-end presets share (tinydeploy,
 * mlperf-kws): a natural logarithm from + - * / only, and an in-place radix-2 complex FFT.
 * Private to firmware/frontend/; included by exactly one preset source per build, after the
 * preset's config header (it reads TD_FE_FFT, TD_FE_FFT_LOG2, td_fe_cos, td_fe_sin).
 * IEEE single precision in the order written, no FMA (the including file forces
 * -ffp-contract=off), so every target gives the same bits.
 */
#ifndef TD_FE_FLOAT_H
#define TD_FE_FLOAT_H

#include <stdint.h>

#define TD_FE_HALF (TD_FE_FFT / 2)

typedef union {
    float f;
    uint32_t u;
} td_fe_bits_t;

static float td_fe_logf(float x)
{
    /* x = m * 2^e with m in [sqrt(1/2), sqrt(2)); ln m = 2 atanh(s), s = (m - 1) / (m + 1),
     * |s| < 0.172, series to s^9 (truncation < 2e-9 relative). */
    td_fe_bits_t b;
    int32_t e;
    float m, s, s2, p;
    b.f = x;
    e = (int32_t)((b.u >> 23) & 0xffu) - 127;
    b.u = (b.u & 0x007fffffu) | 0x3f800000u;
    m = b.f;
    if (m > 0x1.6a09e6p+0f) { /* sqrt(2) */
        m = m * 0.5f;
        e = e + 1;
    }
    s = (m - 1.0f) / (m + 1.0f);
    s2 = s * s;
    p = 0x1.c71c72p-4f;               /* 1/9 */
    p = 0x1.24924ap-3f + s2 * p;      /* 1/7 */
    p = 0x1.99999ap-3f + s2 * p;      /* 1/5 */
    p = 0x1.555556p-2f + s2 * p;      /* 1/3 */
    p = 1.0f + s2 * p;
    return (float)e * 0x1.62e430p-1f + 2.0f * s * p; /* ln 2 */
}

static void td_fe_cfft(float *z)
{
    /* In-place radix-2 decimation-in-time FFT of TD_FE_HALF complex values (interleaved),
     * forward sign: W = exp(-2 pi i j / TD_FE_HALF) = cos[2j * step] - i sin[2j * step]. */
    uint32_t i, j, k, len;
    for (i = 0; i < TD_FE_HALF; i++) {
        uint32_t r = 0, v = i;
        for (k = 1; k < TD_FE_FFT_LOG2; k++) {
            r = (r << 1) | (v & 1u);
            v >>= 1;
        }
        if (r > i) {
            float tr = z[2 * i], ti = z[2 * i + 1];
            z[2 * i] = z[2 * r];
            z[2 * i + 1] = z[2 * r + 1];
            z[2 * r] = tr;
            z[2 * r + 1] = ti;
        }
    }
    for (len = 2; len <= TD_FE_HALF; len <<= 1) {
        uint32_t half = len >> 1;
        uint32_t step = (TD_FE_FFT / len); /* index into the TD_FE_FFT-point tables */
        for (j = 0; j < half; j++) {
            float wr = td_fe_cos[j * step];
            float wi = -td_fe_sin[j * step];
            for (k = j; k < TD_FE_HALF; k += len) {
                float *a = &z[2 * k];
                float *b = &z[2 * (k + half)];
                float tr = wr * b[0] - wi * b[1];
                float ti = wr * b[1] + wi * b[0];
                b[0] = a[0] - tr;
                b[1] = a[1] - ti;
                a[0] = a[0] + tr;
                a[1] = a[1] + ti;
            }
        }
    }
}

/* q = clamp(round_half_away(x / scale) + zero_point, -128, 127) */
static void td_fe_quantize(const float *x, int8_t *q, uint32_t n, float scale,
                           int32_t zero_point)
{
    uint32_t i;
    for (i = 0; i < n; i++) {
        float v = x[i] / scale;
        int32_t r;
        if (v > 1000.0f) {
            v = 1000.0f;
        } else if (v < -1000.0f) {
            v = -1000.0f;
        }
        r = (v >= 0.0f) ? (int32_t)(v + 0.5f) : -(int32_t)(0.5f - v);
        r = r + zero_point;
        q[i] = (int8_t)(r < -128 ? -128 : (r > 127 ? 127 : r));
    }
}

#endif /* TD_FE_FLOAT_H */
