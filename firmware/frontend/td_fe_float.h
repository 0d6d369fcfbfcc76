/*
 * td_fe_float.h: the float arithmetic the float front-end presets share (tinydeploy,
 * mlperf-kws): a natural logarithm from + - * / only, an in-place radix-2 complex FFT, the
 * windowed transform of one frame, the real spectrum's bin power, the mel accumulation (of
 * the power, or of TD_FE_BIN_VALUE of it) and the final matrix product. Private to firmware/frontend/; included by exactly one preset
 * source per build, after the preset's config header (it reads TD_FE_FFT, TD_FE_FFT_LOG2,
 * TD_FE_WINDOW, TD_FE_MEL_BANDS, td_fe_window, td_fe_cos, td_fe_bin_band, td_fe_w_lower,
 * td_fe_w_upper).
 * It also defines the three API functions the float presets implement alike,
 * td_frontend_logf, td_frontend_quantize_s8 and td_frontend_frame_s8 (the preset's
 * td_frontend_frame_f32, quantized).
 * IEEE single precision in the order written, no FMA (this header turns contraction off
 * under GCC for the whole including file, and refuses -ffast-math), so every target gives
 * the same bits.
 */
#ifndef TD_FE_FLOAT_H
#define TD_FE_FLOAT_H

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("fp-contract=off")
#endif
#if defined(__FAST_MATH__)
#error "td_frontend must not be built with -ffast-math: host and device output would differ"
#endif

#include <stdint.h>

#define TD_FE_HALF (TD_FE_FFT / 2)

/* what td_fe_window_fft and td_fe_bin_power rely on */
#if TD_FE_WINDOW > TD_FE_FFT
#error "TD_FE_WINDOW must not exceed TD_FE_FFT"
#endif
#if TD_FE_BIN_LAST > TD_FE_HALF
#error "TD_FE_BIN_LAST out of range"
#endif

typedef union {
    float f;
    uint32_t u;
} td_fe_bits_t;

/* sin(2 pi k / TD_FE_FFT) for k < TD_FE_HALF, read from the cosine table (one table, not
 * two): sin(2 pi k / N) = cos(2 pi |N/4 - k| / N), and sin 0 = 0. For every FFT size the
 * config allows the float32 entries are equal bit for bit to rounding sin itself
 * (tinydeploy/frontend/config.py checks it when it renders the table). */
static float td_fe_sin(uint32_t k)
{
    uint32_t q = TD_FE_FFT / 4;
    if (k == 0) {
        return 0.0f;
    }
    return td_fe_cos[k <= q ? q - k : k - q];
}

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
            float wi = -td_fe_sin(j * step);
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

/* z[0..TD_FE_FFT) = the TD_FE_WINDOW samples of the ring buffer from index start (wrapping
 * at ring_len) times the window, zero-padded, then transformed in place by td_fe_cfft.
 * z[n] holds x[n], i.e. z[2m] + i z[2m+1] = x[2m] + i x[2m+1]. Reads td_fe_window. */
static void td_fe_window_fft(const int16_t *ring, uint32_t ring_len, uint32_t start, float *z)
{
    uint32_t i, pos = start % ring_len;
    for (i = 0; i < TD_FE_WINDOW; i++) {
        z[i] = (float)ring[pos] * td_fe_window[i];
        pos = pos + 1;
        if (pos == ring_len) {
            pos = 0;
        }
    }
    for (; i < TD_FE_FFT; i++) {
        z[i] = 0.0f;
    }
    td_fe_cfft(z);
}

/* |X[k]|^2 of the real signal, k <= N/2, from the half-size complex spectrum Z in z:
 * X[k] = (Z[k] + conj Z[M-k]) / 2 + W^k (Z[k] - conj Z[M-k]) / 2i,  W = exp(-2 pi i / N) */
static float td_fe_bin_power(const float *z, uint32_t k)
{
    uint32_t ka = k % TD_FE_HALF, kb = (TD_FE_HALF - k) % TD_FE_HALF;
    float ar = z[2 * ka], ai = z[2 * ka + 1];
    float br = z[2 * kb], bi = z[2 * kb + 1];
    float er = 0.5f * (ar + br), ei = 0.5f * (ai - bi);
    float or_ = 0.5f * (ai + bi), oi = 0.5f * (br - ar);
    float c = (k < TD_FE_HALF) ? td_fe_cos[k] : -1.0f;
    float s = (k < TD_FE_HALF) ? td_fe_sin(k) : 0.0f;
    float xr = er + (c * or_ + s * oi);
    float xi = ei + (c * oi - s * or_);
    return xr * xr + xi * xi;
}

/* Adds v, the value of bin TD_FE_BIN_FIRST + t, to its two triangular mel bands
 * (td_fe_bin_band, td_fe_w_lower, td_fe_w_upper; band -1 and band TD_FE_MEL_BANDS are the
 * absent outer halves). */
static void td_fe_mel_add(float *mel, uint32_t t, float v)
{
    int32_t j = td_fe_bin_band[t];
    if (j >= 0) {
        mel[j] = mel[j] + td_fe_w_lower[t] * v;
    }
    if (j + 1 < TD_FE_MEL_BANDS) {
        mel[j + 1] = mel[j + 1] + td_fe_w_upper[t] * v;
    }
}

/* What a bin adds to its mel bands, from its power |X[k]|^2: the power itself, unless the
 * including preset defines TD_FE_BIN_VALUE first (mlperf-kws: the magnitude, sqrtf). */
#ifndef TD_FE_BIN_VALUE
#define TD_FE_BIN_VALUE(power) (power)
#endif

/* scratch->mel = the mel band energies of the frame at start (td_fe_window_fft into
 * scratch->fft, then every bin TD_FE_BIN_FIRST..TD_FE_BIN_LAST into its bands, in order). */
static void td_fe_mel_frame(const int16_t *ring, uint32_t ring_len, uint32_t start,
                            td_frontend_scratch_t *scratch)
{
    float *z = scratch->fft;
    float *mel = scratch->mel;
    uint32_t i, k;

    td_fe_window_fft(ring, ring_len, start, z);
    for (i = 0; i < TD_FE_MEL_BANDS; i++) {
        mel[i] = 0.0f;
    }
    for (k = TD_FE_BIN_FIRST; k <= TD_FE_BIN_LAST; k++) {
        td_fe_mel_add(mel, k - TD_FE_BIN_FIRST, TD_FE_BIN_VALUE(td_fe_bin_power(z, k)));
    }
}

/* out[i] = sum over k of m[i][k] * x[k], k in [0, TD_FE_MEL_BANDS), in order of k. */
static void td_fe_matvec(const float *m, const float *x, float *out, uint32_t rows)
{
    uint32_t i, k;
    for (i = 0; i < rows; i++) {
        const float *row = &m[i * TD_FE_MEL_BANDS];
        float acc = 0.0f;
        for (k = 0; k < TD_FE_MEL_BANDS; k++) {
            acc = acc + row[k] * x[k];
        }
        out[i] = acc;
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

float td_frontend_logf(float x)
{
    return td_fe_logf(x);
}

void td_frontend_quantize_s8(const float *x, int8_t *q, uint32_t n, float scale,
                             int32_t zero_point)
{
    td_fe_quantize(x, q, n, scale, zero_point);
}

void td_frontend_frame_s8(const int16_t *ring, uint32_t ring_len, uint32_t start,
                          int8_t *out, float scale, int32_t zero_point,
                          td_frontend_scratch_t *scratch)
{
    float f[TD_FE_OUT];
    td_frontend_frame_f32(ring, ring_len, start, f, scratch);
    td_fe_quantize(f, out, TD_FE_OUT, scale, zero_point);
}

#endif /* TD_FE_FLOAT_H */
