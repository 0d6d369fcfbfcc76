/*
 * td_frontend_micro: the "micro-speech" front end, TensorFlow's audio microfrontend (the
 * features of TFLM's micro_speech example) in integer arithmetic, byte-identical with
 * TensorFlow's audio_microfrontend op.
 *
 * Per frame of TD_FE_WINDOW samples: Q12 Hann window; a block shift that puts the largest
 * windowed sample just under full scale; a real FFT of TD_FE_FFT points in 16-bit fixed point
 * (a complex FFT of half the size: radix-4 stages, one radix-2 stage when needed, each dividing by
 * its radix with rounding, Q15 twiddles, then the real-FFT split); |X|^2 per bin; a mel
 * filterbank with Q12 triangular weights accumulated in 64 bits; a rounding integer square
 * root, shifted back by the block shift; noise reduction (a Q14 running estimate per channel,
 * even and odd channels smoothed differently, at least TD_FE_MIN_SIGNAL / 2^14 of the signal
 * kept); PCAN gain control (gain = a piecewise-quadratic function of the noise estimate);
 * an integer natural log scaled by 2^TD_FE_SCALE_SHIFT, clamped to uint16. The int8 model
 * input is TFLM's mapping clamp((v * 256 + 333) / 666 - 128). docs/frontend.md states it all.
 *
 * Integer only, no libm: runs on a Cortex-M0 (no FPU, no divider; the only divisions are
 * the ring index, once per frame, and the int8 mapping's / 666, once per value). Every table
 * is computed on the host (tinydeploy/frontend/micro_config.py) and rendered into the
 * config header. 16-bit intermediates wrap as two's complement, as the reference's do.
 * No malloc, no static state: the noise estimate lives in the caller's scratch struct, so
 * frames must be computed once each, in time order; td_frontend_reset starts a new stream.
 */
#define TD_FRONTEND_MICRO_DEFINE_TABLES
#include "td_frontend.h"

/* Each preset's sources compile to nothing under another preset's config header. */
#ifdef TD_FE_PRESET_MICRO_SPEECH

#include <string.h>

#define TD_FE_NCFFT (TD_FE_FFT / 2)
#define TD_FE_NOISE_ONE (1u << 14)
#define TD_FE_SNR_BITS 12
#define TD_FE_PCAN_OUT_BITS 6
#define TD_FE_LOG_SCALE_LOG2 16
#define TD_FE_LOG_SEGMENTS_LOG2 7
#define TD_FE_LOG_COEFF 45426u

#if TD_FE_FFT < 8 || TD_FE_FFT > 4096 || (TD_FE_FFT & (TD_FE_FFT - 1)) != 0
#error "TD_FE_FFT must be a power of two in [8, 4096]"
#endif

/* The butterfly stages are inlined with their constant sizes, so every offset is one. */
#if defined(__GNUC__)
#define TD_FE_STAGE static inline __attribute__((always_inline)) void
#else
#define TD_FE_STAGE static void
#endif

/* ---- 16-bit fixed-point arithmetic -------------------------------------------------------- */

static int16_t td_s16(int32_t x)
{
    /* the low 16 bits as two's complement: GCC defines the narrowing conversion so (modulo
       2^16); elsewhere spelt out without implementation-defined behaviour */
#if defined(__GNUC__)
    return (int16_t)x;
#else
    return (int16_t)(((uint32_t)x & 0x8000u) ? -(int32_t)((~(uint32_t)x & 0x7FFFu) + 1u)
                                              : (int32_t)((uint32_t)x & 0x7FFFu));
#endif
}

static int16_t td_sround(int32_t x)
{
    return td_s16((x + (1 << 14)) >> 15);
}

typedef struct {
    int16_t r, i;
} td_cpx_t;

static td_cpx_t td_cmul(td_cpx_t a, const int16_t *tw)
{
    td_cpx_t m;
    m.r = td_sround((int32_t)a.r * tw[0] - (int32_t)a.i * tw[1]);
    m.i = td_sround((int32_t)a.r * tw[1] + (int32_t)a.i * tw[0]);
    return m;
}

static td_cpx_t td_fixdiv(td_cpx_t a, int32_t k)
{
    td_cpx_t d;
    d.r = td_sround((int32_t)a.r * (32767 / k));
    d.i = td_sround((int32_t)a.i * (32767 / k));
    return d;
}

static td_cpx_t td_ld(const int16_t *z, uint32_t k)
{
    td_cpx_t c;
    c.r = z[2u * k];
    c.i = z[2u * k + 1u];
    return c;
}

static void td_st(int16_t *z, uint32_t k, int32_t r, int32_t i)
{
    z[2u * k] = td_s16(r);
    z[2u * k + 1u] = td_s16(i);
}

/* ---- complex FFT of TD_FE_NCFFT points, decimation in time ---------------------------------
 * Stages of radix 4 while 4 divides the remaining length, then one of radix 2. The input is
 * read in digit-reversed order (td_fe_fft_order, computed on the host by peeling off the
 * radices, lowest digit first), then each stage combines groups of p sub-transforms of
 * length m in place. */

TD_FE_STAGE td_bfly2(int16_t *z, uint32_t m, uint32_t fstride)
{
    uint32_t b, k;
    for (b = 0u; b < TD_FE_NCFFT; b += 2u * m) {
        for (k = 0u; k < m; k++) {
            td_cpx_t f0 = td_fixdiv(td_ld(z, b + k), 2);
            td_cpx_t f1 = td_fixdiv(td_ld(z, b + k + m), 2);
            td_cpx_t t = td_cmul(f1, &td_fe_twiddles[2u * k * fstride]);
            td_st(z, b + k + m, (int32_t)f0.r - t.r, (int32_t)f0.i - t.i);
            td_st(z, b + k, (int32_t)f0.r + t.r, (int32_t)f0.i + t.i);
        }
    }
}

TD_FE_STAGE td_bfly4(int16_t *z, uint32_t m, uint32_t fstride)
{
    uint32_t b, k;
    for (b = 0u; b < TD_FE_NCFFT; b += 4u * m) {
        for (k = 0u; k < m; k++) {
            td_cpx_t f0 = td_fixdiv(td_ld(z, b + k), 4);
            td_cpx_t s0 = td_cmul(td_fixdiv(td_ld(z, b + k + m), 4),
                                  &td_fe_twiddles[2u * k * fstride]);
            td_cpx_t s1 = td_cmul(td_fixdiv(td_ld(z, b + k + 2u * m), 4),
                                  &td_fe_twiddles[2u * (2u * k * fstride)]);
            td_cpx_t s2 = td_cmul(td_fixdiv(td_ld(z, b + k + 3u * m), 4),
                                  &td_fe_twiddles[2u * (3u * k * fstride)]);
            td_cpx_t s3, s4, s5;
            s5.r = td_s16((int32_t)f0.r - s1.r);
            s5.i = td_s16((int32_t)f0.i - s1.i);
            f0.r = td_s16((int32_t)f0.r + s1.r);
            f0.i = td_s16((int32_t)f0.i + s1.i);
            s3.r = td_s16((int32_t)s0.r + s2.r);
            s3.i = td_s16((int32_t)s0.i + s2.i);
            s4.r = td_s16((int32_t)s0.r - s2.r);
            s4.i = td_s16((int32_t)s0.i - s2.i);
            td_st(z, b + k + 2u * m, (int32_t)f0.r - s3.r, (int32_t)f0.i - s3.i);
            td_st(z, b + k, (int32_t)f0.r + s3.r, (int32_t)f0.i + s3.i);
            td_st(z, b + k + m, (int32_t)s5.r + s4.i, (int32_t)s5.i - s4.r);
            td_st(z, b + k + 3u * m, (int32_t)s5.r - s4.i, (int32_t)s5.i + s4.r);
        }
    }
}

/* the m of the first radix-4 stage: 2 after a radix-2 stage (TD_FE_NCFFT an odd power of
   two), else 1 */
#define TD_FE_M0 ((TD_FE_NCFFT & 0x555555u) ? 1u : 2u)

static void td_complex_fft(const int16_t *in, int16_t *z)
{
    uint32_t pos;
    for (pos = 0u; pos < TD_FE_NCFFT; pos++) {
        uint32_t src = td_fe_fft_order[pos];
        z[2u * pos] = in[2u * src];
        z[2u * pos + 1u] = in[2u * src + 1u];
    }
    /* innermost stage first: the radix-2 stage (if any) is the last factor, so it is the
       first one applied, on groups of 2 with m = 1; then radix 4 with m = M0, 4 M0, ...
       (TD_FE_NCFFT = M0 4^s, s <= 5) */
    if (TD_FE_M0 == 2u) {
        td_bfly2(z, 1u, TD_FE_NCFFT / 2u);
    }
    if (TD_FE_M0 < TD_FE_NCFFT) {
        td_bfly4(z, TD_FE_M0, TD_FE_NCFFT / (4u * TD_FE_M0));
    }
    if (TD_FE_M0 * 4u < TD_FE_NCFFT) {
        td_bfly4(z, TD_FE_M0 * 4u, TD_FE_NCFFT / (16u * TD_FE_M0));
    }
    if (TD_FE_M0 * 16u < TD_FE_NCFFT) {
        td_bfly4(z, TD_FE_M0 * 16u, TD_FE_NCFFT / (64u * TD_FE_M0));
    }
    if (TD_FE_M0 * 64u < TD_FE_NCFFT) {
        td_bfly4(z, TD_FE_M0 * 64u, TD_FE_NCFFT / (256u * TD_FE_M0));
    }
    if (TD_FE_M0 * 256u < TD_FE_NCFFT) {
        td_bfly4(z, TD_FE_M0 * 256u, TD_FE_NCFFT / (1024u * TD_FE_M0));
    }
}

/* ---- integer square root and logarithm ----------------------------------------------------- */

static int td_msb32(uint32_t x)
{
    /* bit length of x (0 for 0) */
#if defined(__GNUC__)
    return x ? 32 - __builtin_clz(x) : 0;
#else
    int n = 0;
    while (x) {
        n++;
        x >>= 1;
    }
    return n;
#endif
}

static int td_msb64(uint64_t x)
{
    return (x >> 32) ? 32 + td_msb32((uint32_t)(x >> 32)) : td_msb32((uint32_t)x);
}

/* The rounded integer square root of TensorFlow's microfrontend (its Sqrt32 and Sqrt64, one
 * loop here): floor(sqrt(num)) bit by bit from the highest power of 4 that num reaches, plus
 * one when the remainder exceeds it, except at the top of the result's range, which is the
 * half width of the reference's argument: 0xFFFF below 2^32 (Sqrt32 saturates there) and
 * 0xFFFFFFFF above. */
static uint32_t td_sqrt32(uint32_t num)
{
    /* td_sqrt64's loop for num < 2^32, in 32-bit words (the same values: res + bit < 2^32) */
    uint32_t res = 0u, bit;
    int top, it;
    if (num == 0u) {
        return 0u;
    }
    top = (32 - td_msb32(num)) | 1;
    bit = (uint32_t)1 << (31 - top);
    for (it = (31 - top) / 2 + 1; it > 0; it--) {
        if (num >= res + bit) {
            num -= res + bit;
            res = (res >> 1) + bit;
        } else {
            res >>= 1;
        }
        bit >>= 2;
    }
    if (num > res && res != 0xFFFFu) {
        ++res;
    }
    return res;
}

static uint32_t td_sqrt64(uint64_t num)
{
    const uint64_t top_value = 0xFFFFFFFFu;
    uint64_t res = 0u, bit;
    int top, it;
    if ((num >> 32) == 0u) {
        return td_sqrt32((uint32_t)num);
    }
    top = (64 - td_msb64(num)) | 1;
    bit = (uint64_t)1 << (63 - top);
    for (it = (63 - top) / 2 + 1; it > 0; it--) {
        if (num >= res + bit) {
            num -= res + bit;
            res = (res >> 1) + bit;
        } else {
            res >>= 1;
        }
        bit >>= 2;
    }
    if (num > res && res != top_value) {
        ++res;
    }
    return (uint32_t)res;
}

#if TD_FE_LOG
static uint32_t td_log_scaled(uint32_t x)
{
    const uint32_t integer = (uint32_t)td_msb32(x) - 1u;
    const uint32_t half = 1u << (TD_FE_LOG_SCALE_LOG2 - 1);
    const uint32_t unit = (1u << TD_FE_LOG_SCALE_LOG2) >> TD_FE_LOG_SEGMENTS_LOG2;
    int32_t frac = (int32_t)(x - (1u << integer));
    uint32_t seg, fraction, log2, loge;
    int32_t c0, c1, rel;
    if (integer < TD_FE_LOG_SCALE_LOG2) {
        frac = (int32_t)((uint32_t)frac << (TD_FE_LOG_SCALE_LOG2 - integer));
    } else {
        frac >>= integer - TD_FE_LOG_SCALE_LOG2;
    }
    seg = (uint32_t)frac >> (TD_FE_LOG_SCALE_LOG2 - TD_FE_LOG_SEGMENTS_LOG2);
    c0 = td_fe_log_lut[seg];
    c1 = td_fe_log_lut[seg + 1u];
    rel = ((c1 - c0) * (frac - (int32_t)(unit * seg))) >> TD_FE_LOG_SCALE_LOG2;
    fraction = (uint32_t)frac + (uint32_t)c0 + (uint32_t)rel;
    log2 = (integer << TD_FE_LOG_SCALE_LOG2) + fraction;
    loge = (uint32_t)(((uint64_t)TD_FE_LOG_COEFF * log2 + half) >> TD_FE_LOG_SCALE_LOG2);
    return ((loge << TD_FE_SCALE_SHIFT) + half) >> TD_FE_LOG_SCALE_LOG2;
}
#endif

#if TD_FE_PCAN
static int16_t td_pcan_gain(uint32_t x)
{
    const int16_t *lut = td_fe_gain_lut;
    int interval;
    int32_t frac, r;
    if (x <= 2u) {
        return lut[x];
    }
    interval = td_msb32(x);
    lut += 4 * interval - 6;
    frac = (int32_t)(((interval < 11) ? (x << (11 - interval)) : (x >> (interval - 11)))
                     & 0x3FFu);
    r = ((int32_t)lut[2] * frac) >> 5;
    r += lut[1] * 32;
    r *= frac;
    r = (r + (1 << 14)) >> 15;
    r += lut[0];
    return td_s16(r);
}

static uint32_t td_pcan_shrink(uint32_t x)
{
    if (x < (2u << TD_FE_SNR_BITS)) {
        return (x * x) >> (2 + 2 * TD_FE_SNR_BITS - TD_FE_PCAN_OUT_BITS);
    }
    return (x >> (TD_FE_SNR_BITS - TD_FE_PCAN_OUT_BITS)) - (1u << TD_FE_PCAN_OUT_BITS);
}
#endif

/* ---- the frame ------------------------------------------------------------------------------ */

/* in[i] = (x[i] * w[i]) >> 12 as int16, i < n; returns the largest of max_abs and their
 * magnitudes (|-32768| does not fit int16 and is not counted) */
static int16_t td_window_run(const int16_t *x, const int16_t *w, int16_t *in, uint32_t n,
                             int16_t max_abs)
{
    uint32_t i;
    for (i = 0u; i < n; i++) {
        int16_t v = td_s16(((int32_t)x[i] * w[i]) >> 12);
        int16_t a = td_s16(-(int32_t)v);
        in[i] = v;
        if (v >= 0) {
            a = v;
        }
        if (a > max_abs) {
            max_abs = a;
        }
    }
    return max_abs;
}

uint32_t td_frontend_scratch_size(void)
{
    return (uint32_t)sizeof(td_frontend_scratch_t);
}

void td_frontend_reset(td_frontend_scratch_t *scratch)
{
    memset(scratch->noise, 0, sizeof scratch->noise);
}

void td_frontend_frame_u16(const int16_t *ring, uint32_t ring_len, uint32_t start,
                           uint16_t *out, td_frontend_scratch_t *scratch)
{
    int16_t *in = scratch->in;
    int16_t *z = scratch->tmp;
    uint64_t *acc = scratch->acc;
    int16_t max_abs = 0;
    int shift;
    uint32_t i, k, pos = start % ring_len;
    /* the window's samples: ring[pos ..] up to the ring's end, then ring[0 ..] */
    uint32_t first = ring_len - pos < TD_FE_WINDOW ? ring_len - pos : TD_FE_WINDOW;

    max_abs = td_window_run(&ring[pos], td_fe_window, in, first, max_abs);
    max_abs = td_window_run(ring, &td_fe_window[first], &in[first], TD_FE_WINDOW - first,
                            max_abs);
    shift = 15 - td_msb32((uint32_t)max_abs);
    for (i = 0u; i < TD_FE_WINDOW; i++) {
        in[i] = td_s16((int32_t)(((uint32_t)(uint16_t)in[i]) << shift));
    }
    for (; i < TD_FE_FFT; i++) {
        in[i] = 0;
    }

    /* real FFT = complex FFT of the even/odd pairs, then the split; each bin in
       [TD_FE_BIN_START, TD_FE_BIN_END) goes straight into its two filterbank channels */
    td_complex_fft(in, z);
    for (i = 0u; i < TD_FE_CHANNELS; i++) {
        acc[i] = 0u;
    }
    for (k = 1u; k <= TD_FE_NCFFT / 2u; k++) {
        td_cpx_t fpk = td_fixdiv(td_ld(z, k), 2);
        td_cpx_t fpnk, f1k, f2k, tw;
        int32_t bin[2], re[2], im[2];
        uint32_t j;
        fpnk.r = z[2u * (TD_FE_NCFFT - k)];
        fpnk.i = td_s16(-(int32_t)z[2u * (TD_FE_NCFFT - k) + 1u]);
        fpnk = td_fixdiv(fpnk, 2);
        f1k.r = td_s16((int32_t)fpk.r + fpnk.r);
        f1k.i = td_s16((int32_t)fpk.i + fpnk.i);
        f2k.r = td_s16((int32_t)fpk.r - fpnk.r);
        f2k.i = td_s16((int32_t)fpk.i - fpnk.i);
        tw = td_cmul(f2k, &td_fe_super_twiddles[2u * (k - 1u)]);
        bin[0] = (int32_t)k;                        /* for k = NCFFT / 2 both are the same */
        re[0] = td_s16(((int32_t)f1k.r + tw.r) >> 1);
        im[0] = td_s16(((int32_t)f1k.i + tw.i) >> 1);
        bin[1] = (int32_t)(TD_FE_NCFFT - k);         /* bin, and the second value stands */
        re[1] = td_s16(((int32_t)f1k.r - tw.r) >> 1);
        im[1] = td_s16(((int32_t)tw.i - f1k.i) >> 1);
        for (j = (k == TD_FE_NCFFT / 2u) ? 1u : 0u; j < 2u; j++) {
            if (bin[j] >= TD_FE_BIN_START && bin[j] < TD_FE_BIN_END) {
                const uint32_t b = (uint32_t)bin[j] - TD_FE_BIN_START;
                const uint32_t c = td_fe_bin_channel[b];
                /* |X|^2 as int32, widened as the reference widens it (sign-extended) */
                const uint32_t e32 = (uint32_t)(re[j] * re[j]) + (uint32_t)(im[j] * im[j]);
                const uint64_t e = (e32 & 0x80000000u) ? ((uint64_t)e32 | 0xFFFFFFFF00000000u)
                                                       : (uint64_t)e32;
                if (c >= 1u) {
                    acc[c - 1u] += (uint64_t)(int64_t)td_fe_bin_weight[b] * e;
                }
                if (c < TD_FE_CHANNELS) {
                    acc[c] += (uint64_t)(int64_t)td_fe_bin_unweight[b] * e;
                }
            }
        }
    }

    for (i = 0u; i < TD_FE_CHANNELS; i++) {
        const uint32_t sig = td_sqrt64(acc[i]) >> shift;
        const uint32_t smooth = (i & 1u) ? TD_FE_ODD_SMOOTHING : TD_FE_EVEN_SMOOTHING;
        const uint32_t up = sig << TD_FE_SMOOTHING_BITS;
        uint32_t est = (uint32_t)(((uint64_t)up * smooth
                                   + (uint64_t)scratch->noise[i] * (TD_FE_NOISE_ONE - smooth))
                                  >> 14);
        uint32_t floor, v;
        scratch->noise[i] = est;
        if (est > up) {
            est = up;
        }
        floor = (uint32_t)(((uint64_t)sig * TD_FE_MIN_SIGNAL) >> 14);
        v = (up - est) >> TD_FE_SMOOTHING_BITS;
        if (v < floor) {
            v = floor;
        }
#if TD_FE_PCAN
        {
            const uint32_t gain = (uint32_t)(int32_t)td_pcan_gain(scratch->noise[i]);
            v = td_pcan_shrink((uint32_t)(((uint64_t)v * gain) >> TD_FE_SNR_SHIFT));
        }
#endif
#if TD_FE_LOG
#if TD_FE_CORRECTION_BITS < 0
        v >>= -(TD_FE_CORRECTION_BITS);
#else
        v <<= TD_FE_CORRECTION_BITS;
#endif
        v = (v > 1u) ? td_log_scaled(v) : 0u;
#endif
        out[i] = (uint16_t)(v < 0xFFFFu ? v : 0xFFFFu);
    }
}

void td_frontend_frame_s8(const int16_t *ring, uint32_t ring_len, uint32_t start,
                          int8_t *out, float scale, int32_t zero_point,
                          td_frontend_scratch_t *scratch)
{
    /* TFLM micro_speech's fixed mapping; the model input's scale and zero point are checked
       against it on the host when the firmware is built */
    uint16_t feat[TD_FE_CHANNELS];
    uint32_t i;
    (void)scale;
    (void)zero_point;
    td_frontend_frame_u16(ring, ring_len, start, feat, scratch);
    for (i = 0u; i < TD_FE_CHANNELS; i++) {
        int32_t q = ((int32_t)feat[i] * TD_FE_INT8_SCALE + TD_FE_INT8_DIV / 2) / TD_FE_INT8_DIV
                    - 128;
        out[i] = (int8_t)(q < -128 ? -128 : (q > 127 ? 127 : q));
    }
}

/* The float form, for callers of the float API (host tools, the generic test harness): the
   uint16 features times 10 / 256, the float input TFLM's micro_speech models were trained on
   (v * 5 * 2^-7 is exact in float32 for every uint16 v, so every FPU and soft float agree).
   The integer paths above never call these; unused, the linker drops them. */
void td_frontend_frame_f32(const int16_t *ring, uint32_t ring_len, uint32_t start,
                           float *out, td_frontend_scratch_t *scratch)
{
    uint16_t feat[TD_FE_CHANNELS];
    uint32_t i;
    td_frontend_frame_u16(ring, ring_len, start, feat, scratch);
    for (i = 0u; i < TD_FE_CHANNELS; i++) {
        out[i] = (float)feat[i] * (10.0f / 256.0f);
    }
}

void td_frontend_clip_f32(const int16_t *clip, float *out, td_frontend_scratch_t *scratch)
{
    uint32_t f;
    td_frontend_reset(scratch);
    for (f = 0u; f < TD_FE_FRAMES; f++) {
        td_frontend_frame_f32(clip, TD_FE_CLIP_SAMPLES, f * TD_FE_STRIDE, &out[f * TD_FE_OUT],
                              scratch);
    }
}

void td_frontend_clip_s8(const int16_t *clip, int8_t *out, float scale, int32_t zero_point,
                         td_frontend_scratch_t *scratch)
{
    uint32_t f;
    td_frontend_reset(scratch);
    for (f = 0u; f < TD_FE_FRAMES; f++) {
        td_frontend_frame_s8(clip, TD_FE_CLIP_SAMPLES, f * TD_FE_STRIDE, &out[f * TD_FE_OUT],
                             scale, zero_point, scratch);
    }
}

#else
typedef int td_frontend_micro_unused_t; /* this build uses another front-end preset */
#endif /* TD_FE_PRESET_MICRO_SPEECH */
