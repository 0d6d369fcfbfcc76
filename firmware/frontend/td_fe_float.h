/*
 * td_fe_float.h: the float arithmetic the float front-end presets share (tinydeploy,
 * mlperf-kws): a natural logarithm from + - * / only, the windowed real FFT of one frame, the
 * split into the bins the filterbank uses, the mel accumulation (of the power, or of
 * TD_FE_BIN_VALUE of it) and the final matrix product. Private to firmware/frontend/; included
 * by exactly one preset source per build, after the preset's config header (it reads the
 * macros and tables of tinydeploy/frontend/fftplan.py: TD_FE_FFT, TD_FE_RADIX0, TD_FE_SLOTS,
 * TD_FE_FULL_SLOTS, TD_FE_BIN_FIRST/LAST, TD_FE_SEG_FIRST, TD_FE_SEGS, td_fe_gather,
 * td_fe_window, td_fe_twiddle, td_fe_bins, td_fe_seg_len; and TD_FE_WINDOW, TD_FE_MEL_BANDS).
 * It also defines the three API functions the float presets implement alike,
 * td_frontend_logf, td_frontend_quantize_s8 and td_frontend_frame_s8 (the preset's
 * td_frontend_frame_f32, quantized).
 * IEEE single precision in the order written, no FMA (this header turns contraction off
 * under GCC for the whole including file, and refuses -ffast-math), so every target gives
 * the same bits.
 *
 * The FFT (docs/frontend.md): the real transform of TD_FE_FFT points is a complex one of
 * M = TD_FE_FFT / 2 points, decimation in time: a first stage of radix TD_FE_RADIX0 that reads
 * the samples from the ring (digit-reversed order, times the window, only the inputs inside
 * the frame: the zero padding is never read nor added), then radix-8 stages in place with the
 * twiddles of one table; the spectrum comes out in natural order.
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
#define TD_FE_SPAN0 (TD_FE_HALF / TD_FE_RADIX0) /* first-stage groups, and their input span */
#define TD_FE_H (0x1.6a09e6p-1f)                /* 1 / sqrt(2), float32 */

/* the small DFTs and the first stage are inlined with constant sizes, their loops unrolled,
 * so their arrays live in registers */
#if defined(__GNUC__)
#define TD_FE_INLINE static inline __attribute__((always_inline))
#define TD_FE_UNROLL _Pragma("GCC unroll 8")
#define TD_FE_UNROLL2 _Pragma("GCC unroll 2")
#else
#define TD_FE_INLINE static inline
#define TD_FE_UNROLL
#define TD_FE_UNROLL2
#endif

/* what the stages and the split rely on */
#if TD_FE_WINDOW > TD_FE_FFT
#error "TD_FE_WINDOW must not exceed TD_FE_FFT"
#endif
#if TD_FE_BIN_FIRST < 1 || TD_FE_BIN_LAST >= TD_FE_HALF
#error "TD_FE_BIN_FIRST..TD_FE_BIN_LAST must lie in [1, TD_FE_FFT / 2)"
#endif
#if TD_FE_RADIX0 != 2 && TD_FE_RADIX0 != 4 && TD_FE_RADIX0 != 8
#error "TD_FE_RADIX0 must be 2, 4 or 8"
#endif

typedef union {
    float f;
    uint32_t u;
} td_fe_bits_t;

TD_FE_INLINE float td_fe_logf(float x)
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

/* ---- small DFTs on registers (forward sign), re[] and im[] of n inputs; inputs at index
 * >= nz are zero and never read (nz is a constant wherever these are inlined) ---------- */

/* 4 points from d[0..3]: D0 = (d0 + d2) + (d1 + d3), D1 = (d0 - d2) - i (d1 - d3),
 * D2 = (d0 + d2) - (d1 + d3), D3 = (d0 - d2) + i (d1 - d3). */
TD_FE_INLINE void td_fe_dft4(float *re, float *im, int nz)
{
    float e0r, e0i, e1r, e1i, e2r, e2i, e3r, e3i;
    if (nz > 2) {
        e0r = re[0] + re[2];
        e0i = im[0] + im[2];
        e1r = re[0] - re[2];
        e1i = im[0] - im[2];
    } else {
        e0r = re[0];
        e0i = im[0];
        e1r = re[0];
        e1i = im[0];
    }
    if (nz > 3) {
        e2r = re[1] + re[3];
        e2i = im[1] + im[3];
        e3r = re[1] - re[3];
        e3i = im[1] - im[3];
    } else if (nz > 1) {
        e2r = re[1];
        e2i = im[1];
        e3r = re[1];
        e3i = im[1];
    } else {
        e2r = 0.0f;
        e2i = 0.0f;
        e3r = 0.0f;
        e3i = 0.0f;
    }
    re[0] = e0r + e2r;
    im[0] = e0i + e2i;
    re[2] = e0r - e2r;
    im[2] = e0i - e2i;
    re[1] = e1r + e3i;
    im[1] = e1i - e3r;
    re[3] = e1r - e3i;
    im[3] = e1i + e3r;
}

/* 8 points, in place: b[n] = a[n] + a[n+4] and c[n] = (a[n] - a[n+4]) W8^n (n < 4), the
 * even outputs are the 4-point DFT of b, the odd ones that of c. */
TD_FE_INLINE void td_fe_dft8(float *re, float *im, int nz)
{
    float br[4], bi[4], cr[4], ci[4], x, y;
    int n;
    TD_FE_UNROLL
    for (n = 0; n < 4; n++) {
        if (n + 4 < nz) {
            br[n] = re[n] + re[n + 4];
            bi[n] = im[n] + im[n + 4];
            cr[n] = re[n] - re[n + 4];
            ci[n] = im[n] - im[n + 4];
        } else if (n < nz) {
            br[n] = re[n];
            bi[n] = im[n];
            cr[n] = re[n];
            ci[n] = im[n];
        } else {
            br[n] = 0.0f;
            bi[n] = 0.0f;
            cr[n] = 0.0f;
            ci[n] = 0.0f;
        }
    }
    /* c1 (1 - i) / sqrt 2, c2 (-i), c3 (-1 - i) / sqrt 2 */
    x = cr[1];
    y = ci[1];
    cr[1] = (x + y) * TD_FE_H;
    ci[1] = (y - x) * TD_FE_H;
    x = cr[2];
    cr[2] = ci[2];
    ci[2] = -x;
    x = cr[3];
    y = ci[3];
    cr[3] = (y - x) * TD_FE_H;
    ci[3] = -(x + y) * TD_FE_H;
    td_fe_dft4(br, bi, nz < 4 ? nz : 4);
    td_fe_dft4(cr, ci, nz < 4 ? nz : 4);
    TD_FE_UNROLL
    for (n = 0; n < 4; n++) {
        re[2 * n] = br[n];
        im[2 * n] = bi[n];
        re[2 * n + 1] = cr[n];
        im[2 * n + 1] = ci[n];
    }
}

TD_FE_INLINE void td_fe_dft(float *re, float *im, int radix, int nz)
{
    if (radix == 8) {
        td_fe_dft8(re, im, nz);
    } else if (radix == 4) {
        td_fe_dft4(re, im, nz);
    } else if (nz > 1) {
        float r = re[1], i = im[1];
        re[1] = re[0] - r;
        im[1] = im[0] - i;
        re[0] = re[0] + r;
        im[0] = im[0] + i;
    } else {
        re[1] = re[0];
        im[1] = im[0];
    }
}

/* ---- the first stage: samples in, windowed, digit-reversed, one small DFT per group ---- */

/* The first stage's slot j of every group reads the frame's samples 2 S j + x, x < 2 S
 * (S = TD_FE_SPAN0), at p[j][x]: p[j] points at the slot's first sample in the ring (its
 * wrapped place when the slot starts past the ring's end). The one slot the ring's end falls
 * inside (cut; TD_FE_SLOTS when none) checks each sample: x < e, before the end, at
 * p[cut][x], else at ring[x - e]. wrap (a constant) is 0 when the frame does not reach the
 * end: then nothing is checked. */
TD_FE_INLINE float td_fe_sample(const int16_t *ring, const int16_t *const *p, uint32_t cut,
                                uint32_t e, uint32_t j, uint32_t x, int wrap)
{
    if (wrap && j == cut) {
        return (float)(x < e ? p[j][x] : ring[x - e]);
    }
    return (float)p[j][x];
}

TD_FE_INLINE void td_fe_stage0(const int16_t *ring, uint32_t ring_len, uint32_t s0, int wrap,
                               float *z)
{
    const float *w = td_fe_window;
    const int16_t *p[TD_FE_SLOTS];
    uint32_t g, j, cut = TD_FE_SLOTS, e = 0u;
    TD_FE_UNROLL
    for (j = 0; j < TD_FE_SLOTS; j++) {
        uint32_t first = s0 + 2u * TD_FE_SPAN0 * j; /* ring index of the slot's first sample */
        if (wrap && first >= ring_len) {
            first = first - ring_len;
        } else if (wrap && ring_len - first < 2u * TD_FE_SPAN0) {
            cut = j;
            e = ring_len - first;
        }
        p[j] = &ring[first];
    }
    for (g = 0; g < TD_FE_SPAN0; g++) {
        float re[TD_FE_RADIX0], im[TD_FE_RADIX0];
        uint32_t x = 2u * td_fe_gather[g], r; /* the group's offset in every slot */
        TD_FE_UNROLL
        for (j = 0; j < TD_FE_SLOTS; j++) {
            uint32_t off = x + 2u * TD_FE_SPAN0 * j; /* in the frame */
            if (j < TD_FE_FULL_SLOTS) {
                re[j] = td_fe_sample(ring, p, cut, e, j, x, wrap) * w[2 * j];
                im[j] = td_fe_sample(ring, p, cut, e, j, x + 1u, wrap) * w[2 * j + 1];
            } else {
                re[j] = off < TD_FE_WINDOW ?
                    td_fe_sample(ring, p, cut, e, j, x, wrap) * w[2 * j] : 0.0f;
                im[j] = off + 1u < TD_FE_WINDOW ?
                    td_fe_sample(ring, p, cut, e, j, x + 1u, wrap) * w[2 * j + 1] : 0.0f;
            }
        }
        td_fe_dft(re, im, TD_FE_RADIX0, TD_FE_SLOTS);
        TD_FE_UNROLL
        for (r = 0; r < TD_FE_RADIX0; r++) {
            z[2 * r] = re[r];
            z[2 * r + 1] = im[r];
        }
        z += 2 * TD_FE_RADIX0;
        w += 2 * TD_FE_SLOTS;
    }
}

/* The blocks butterflies of column k of a radix-8 stage of span L (p: z + 2k, t: its twiddle
 * row; unit, a constant: k = 0, whose twiddles are all 1, multiplies nothing). */
TD_FE_INLINE void td_fe_column8(float *p, const float *t, uint32_t span, uint32_t blocks,
                                int unit)
{
    uint32_t b, n;
    for (b = 0; b < blocks; b++) {
        float re[8], im[8];
        re[0] = p[0];
        im[0] = p[1];
        TD_FE_UNROLL
        for (n = 1; n < 8; n++) {
            float x = p[2u * span * n], y = p[2u * span * n + 1u];
            if (unit) {
                re[n] = x;
                im[n] = y;
            } else {
                float c = t[2 * n - 2], s = t[2 * n - 1];
                re[n] = x * c + y * s;
                im[n] = y * c - x * s;
            }
        }
        td_fe_dft8(re, im, 8);
        TD_FE_UNROLL
        for (n = 0; n < 8; n++) {
            p[2u * span * n] = re[n];
            p[2u * span * n + 1u] = im[n];
        }
        p += 16u * span;
    }
}

/* One radix-8 stage of span L (in place): for each k < L, the inputs k + n L (n < 8) of each
 * block of 8 L values times W_8L^(n k), then an 8-point DFT. Twiddles: row k (M / 8L) of
 * td_fe_twiddle, cos and sin of 2 pi n k (M / 8L) / M; times W = cos - i sin. Inlined with a
 * constant span, so every offset is one. */
TD_FE_INLINE void td_fe_stage8(float *z, uint32_t span)
{
    uint32_t blocks = TD_FE_HALF / (8u * span), k;
    td_fe_column8(z, td_fe_twiddle, span, blocks, 1);
    for (k = 1; k < span; k++) {
        td_fe_column8(&z[2u * k], &td_fe_twiddle[14u * k * blocks], span, blocks, 0);
    }
}

/* z[0 .. TD_FE_FFT) = Z, the M-point complex FFT of z[m] = x[2m] + i x[2m+1], x the
 * TD_FE_WINDOW samples of the ring from index start (wrapping at ring_len) times the window,
 * zero-padded to TD_FE_FFT. */
static void td_fe_window_fft(const int16_t *ring, uint32_t ring_len, uint32_t start, float *z)
{
    uint32_t s0 = start % ring_len;
    if (s0 + TD_FE_WINDOW <= ring_len) {
        td_fe_stage0(ring, ring_len, s0, 0, z);
    } else {
        td_fe_stage0(ring, ring_len, s0, 1, z);
    }
    /* M = TD_FE_RADIX0 * 8^s, s <= 3 (TD_FE_FFT <= 4096) */
    if (TD_FE_RADIX0 < TD_FE_HALF) {
        td_fe_stage8(z, TD_FE_RADIX0);
    }
    if (TD_FE_RADIX0 * 8 < TD_FE_HALF) {
        td_fe_stage8(z, TD_FE_RADIX0 * 8);
    }
    if (TD_FE_RADIX0 * 64 < TD_FE_HALF) {
        td_fe_stage8(z, TD_FE_RADIX0 * 64);
    }
    if (TD_FE_RADIX0 * 512 < TD_FE_HALF) {
        td_fe_stage8(z, TD_FE_RADIX0 * 512);
    }
}

/* What a bin adds to its mel bands, from its power |X[k]|^2 (times 4, see below): the power
 * itself, unless the including preset defines TD_FE_BIN_VALUE first (mlperf-kws: the
 * magnitude, sqrtf). */
#ifndef TD_FE_BIN_VALUE
#define TD_FE_BIN_VALUE(power) (power)
#endif

/* scratch->mel = the mel band energies of the frame at start: td_fe_window_fft into
 * scratch->fft, then each bin k = TD_FE_BIN_FIRST..TD_FE_BIN_LAST in order,
 *   2 X[k] = (Z[k] + conj Z[M-k]) + W^k (Z[k] - conj Z[M-k]) / i,  W = exp(-2 pi i / N),
 * v = TD_FE_BIN_VALUE(|2 X[k]|^2), added to its two bands times td_fe_bins' weights (which
 * carry the 1/4, or 1/2 for a magnitude, exactly: powers of two). The bins of segment s feed
 * bands TD_FE_SEG_FIRST + s (falling edge) and the next (rising edge), both in registers. */
static void td_fe_mel_frame(const int16_t *ring, uint32_t ring_len, uint32_t start,
                            td_frontend_scratch_t *scratch)
{
    float *z = scratch->fft;
    float *mel = scratch->mel;
    const float *za = &z[2 * TD_FE_BIN_FIRST];
    const float *zb = &z[2 * (TD_FE_HALF - TD_FE_BIN_FIRST)];
    const float *t = td_fe_bins;
    float lo = 0.0f, hi = 0.0f;
    int32_t j = TD_FE_SEG_FIRST;
    uint32_t i, s;

    td_fe_window_fft(ring, ring_len, start, z);
    /* the bands no segment reaches (none in most configs) */
    for (j = 0; j < TD_FE_SEG_FIRST; j++) {
        mel[j] = 0.0f;
    }
    for (j = TD_FE_SEG_FIRST + TD_FE_SEGS + 1; j < TD_FE_MEL_BANDS; j++) {
        mel[j] = 0.0f;
    }
    j = TD_FE_SEG_FIRST;
    for (s = 0; s < TD_FE_SEGS; s++) {
        TD_FE_UNROLL2
        for (i = td_fe_seg_len[s]; i > 0u; i--) {
            float ar = za[0], ai = za[1], br = zb[0], bi = zb[1];
            float er = ar + br, ei = ai - bi, or_ = ai + bi, oi = br - ar;
            float xr = er + (t[0] * or_ + t[1] * oi);
            float xi = ei + (t[0] * oi - t[1] * or_);
            float v = TD_FE_BIN_VALUE(xr * xr + xi * xi);
            lo = lo + t[2] * v;
            hi = hi + t[3] * v;
            za += 2;
            zb -= 2;
            t += 4;
        }
        if (j >= 0) {
            mel[j] = lo;
        }
        lo = hi;
        hi = 0.0f;
        j = j + 1;
    }
    if (j < TD_FE_MEL_BANDS) {
        mel[j] = lo;
    }
}

/* out[i] = sum over k of m[i][k] * x[k], k in [0, B = TD_FE_MEL_BANDS), for a DCT-II matrix
 * m: row i is even (i even) or odd (i odd) about the middle, m[i][B-1-k] = (-1)^i m[i][k]
 * (and 0 in the middle column of an odd row when B is odd), so the table holds its first
 * H = ceil(B/2) columns and out[i] = sum over k < B/2 of m[i][k] * (x[k] + x[B-1-k]) for
 * even i, of m[i][k] * (x[k] - x[B-1-k]) for odd i, in order of k, plus m[i][H-1] * x[H-1]
 * last for even i when B is odd. tmp: B floats of working memory. */
#define TD_FE_DCT_COLS ((TD_FE_MEL_BANDS + 1) / 2)
TD_FE_INLINE void td_fe_dct(const float *m, const float *x, float *out, uint32_t rows,
                           float *tmp)
{
    uint32_t i, k;
    float *sum = tmp, *dif = tmp + TD_FE_DCT_COLS;
    for (k = 0; k < TD_FE_MEL_BANDS / 2; k++) {
        sum[k] = x[k] + x[TD_FE_MEL_BANDS - 1 - k];
        dif[k] = x[k] - x[TD_FE_MEL_BANDS - 1 - k];
    }
    for (i = 0; i < rows; i++) {
        const float *row = &m[i * TD_FE_DCT_COLS];
        const float *v = (i & 1u) ? dif : sum;
        float acc = 0.0f;
        TD_FE_UNROLL
        for (k = 0; k < TD_FE_MEL_BANDS / 2; k++) {
            acc = acc + row[k] * v[k];
        }
#if TD_FE_MEL_BANDS % 2 != 0
        if ((i & 1u) == 0u) {
            acc = acc + row[TD_FE_DCT_COLS - 1] * x[TD_FE_DCT_COLS - 1];
        }
#endif
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
