/*
 * td_frontend.c: framing, Hann window, real FFT, power spectrum, mel filterbank, log,
 * DCT-II (or identity for log-mel), normalisation, int8 quantization. See td_frontend.h and
 * docs/frontend.md. Every floating-point operation below is a plain IEEE single-precision
 * +, -, * or /, in the order written: keep it that way (no reassociation, no FMA).
 */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("fp-contract=off")
#endif
#if defined(__FAST_MATH__)
#error "td_frontend must not be built with -ffast-math: host and device output would differ"
#endif

#define TD_FRONTEND_DEFINE_TABLES
#include "td_frontend.h"

/* Only the tinydeploy preset's config header makes this file compile to anything, so a
 * project folder holding another preset's sources too still builds. */
#ifdef TD_FE_PRESET_TINYDEPLOY

#include "td_fe_float.h"

#if TD_FE_WINDOW > TD_FE_FFT
#error "TD_FE_WINDOW must not exceed TD_FE_FFT"
#endif
#if TD_FE_BIN_LAST > TD_FE_HALF
#error "TD_FE_BIN_LAST out of range"
#endif

float td_frontend_logf(float x)
{
    return td_fe_logf(x);
}

void td_frontend_frame_f32(const int16_t *ring, uint32_t ring_len, uint32_t start,
                           float *out, td_frontend_scratch_t *scratch)
{
    float *z = scratch->fft;
    float *mel = scratch->mel;
    uint32_t i, k, pos;
    int32_t j;

    /* window: z[n] holds x[n], i.e. z[2m] + i z[2m+1] = x[2m] + i x[2m+1] */
    pos = start % ring_len;
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

    for (i = 0; i < TD_FE_MEL_BANDS; i++) {
        mel[i] = 0.0f;
    }
    /* split the half-size complex spectrum Z into the real signal's spectrum X, k <= N/2:
     * X[k] = (Z[k] + conj Z[M-k]) / 2 + W^k (Z[k] - conj Z[M-k]) / 2i,  W = exp(-2 pi i / N) */
    for (k = TD_FE_BIN_FIRST; k <= TD_FE_BIN_LAST; k++) {
        uint32_t ka = k % TD_FE_HALF, kb = (TD_FE_HALF - k) % TD_FE_HALF;
        float ar = z[2 * ka], ai = z[2 * ka + 1];
        float br = z[2 * kb], bi = z[2 * kb + 1];
        float er = 0.5f * (ar + br), ei = 0.5f * (ai - bi);
        float or_ = 0.5f * (ai + bi), oi = 0.5f * (br - ar);
        float c = (k < TD_FE_HALF) ? td_fe_cos[k] : -1.0f;
        float s = (k < TD_FE_HALF) ? td_fe_sin[k] : 0.0f;
        float xr = er + (c * or_ + s * oi);
        float xi = ei + (c * oi - s * or_);
        float power = xr * xr + xi * xi;
        uint32_t t = k - TD_FE_BIN_FIRST;
        j = td_fe_bin_band[t];
        if (j >= 0) {
            mel[j] = mel[j] + td_fe_w_lower[t] * power;
        }
        if (j + 1 < TD_FE_MEL_BANDS) {
            mel[j + 1] = mel[j + 1] + td_fe_w_upper[t] * power;
        }
    }
    for (i = 0; i < TD_FE_MEL_BANDS; i++) {
        mel[i] = td_frontend_logf(mel[i] + TD_FE_LOG_FLOOR);
    }
    for (i = 0; i < TD_FE_OUT; i++) {
        const float *row = &td_fe_out_matrix[i * TD_FE_MEL_BANDS];
        float acc = 0.0f;
        for (k = 0; k < TD_FE_MEL_BANDS; k++) {
            acc = acc + row[k] * mel[k];
        }
        out[i] = acc + td_fe_out_bias[i];
    }
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
    td_frontend_quantize_s8(f, out, TD_FE_OUT, scale, zero_point);
}

void td_frontend_clip_f32(const int16_t *clip, float *out, td_frontend_scratch_t *scratch)
{
    uint32_t t;
    for (t = 0; t < TD_FE_FRAMES; t++) {
        td_frontend_frame_f32(clip, TD_FE_CLIP_SAMPLES, t * TD_FE_STRIDE,
                              &out[t * TD_FE_OUT], scratch);
    }
}

void td_frontend_clip_s8(const int16_t *clip, int8_t *out, float scale, int32_t zero_point,
                         td_frontend_scratch_t *scratch)
{
    uint32_t t;
    for (t = 0; t < TD_FE_FRAMES; t++) {
        td_frontend_frame_s8(clip, TD_FE_CLIP_SAMPLES, t * TD_FE_STRIDE,
                             &out[t * TD_FE_OUT], scale, zero_point, scratch);
    }
}

void td_frontend_reset(td_frontend_scratch_t *scratch)
{
    (void)scratch; /* stateless: every frame depends on its own window only */
}

#endif /* TD_FE_PRESET_TINYDEPLOY */
