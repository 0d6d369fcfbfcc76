/*
 * td_frontend_mlperf.c: the mlperf-kws front-end preset, MLPerf Tiny's keyword-spotting
 * MFCCs (see tinydeploy/frontend/mlperf.py for the exact pipeline and its source):
 * peak normalisation, periodic Hann window, real FFT, magnitude, mel filterbank, log(x + floor),
 * DCT-II / sqrt(2 * bands), int8 quantization. Implements the API of td_frontend.h.
 *
 * Peak normalisation is applied to the mel energies (the STFT is linear: |FFT(x / p)| =
 * |FFT(x)| / |p|), 40 divisions per frame instead of one per sample. A clip divides by its own
 * largest sample; a stream divides each frame by the largest sample of the last TD_FE_PEAKS
 * frames (scratch->peak, one value per frame), and td_frontend_window_s8 brings a window's
 * rows to the window's largest sample before inference. A largest sample of 0 divides by 1.
 *
 * IEEE single precision in the order written, no FMA; sqrtf is correctly rounded on every
 * target (IEEE 754 requires it), so host and device give the same bits.
 */
#define TD_FRONTEND_DEFINE_TABLES
#include "td_frontend.h"

/* Only the mlperf-kws preset's config header makes this file compile to anything. */
#ifdef TD_FE_PRESET_MLPERF_KWS

#include <math.h>

/* magnitude, not power, into the mel bands */
#define TD_FE_BIN_VALUE(power) sqrtf(power)
#include "td_fe_float.h"

void td_frontend_reset(td_frontend_scratch_t *scratch)
{
    uint32_t i;
    for (i = 0; i < TD_FE_PEAKS; i++) {
        scratch->peak[i] = 0;
    }
    scratch->frames = 0u;
}

/* sqrt(2 / B) * B = sqrt(2 B): how much coefficient 0 grows per unit of ln(1 / divisor) */
#define TD_FE_C0_PER_LOG ((float)TD_FE_C0_GAIN)

/* The divisor for a largest sample m: |m| (a negative m divides by m, whose magnitude is |m|),
 * 1 for m == 0; 32768 without peak normalisation. */
static float td_fe_divisor(int32_t m)
{
#if TD_FE_PEAK_NORMALISE
    if (m == 0) {
        return 1.0f;
    }
    return (float)(m < 0 ? -m : m);
#else
    (void)m;
    return 32768.0f;
#endif
}

static void td_fe_mlperf_frame(const int16_t *ring, uint32_t ring_len, uint32_t start,
                               float divisor, float *out, td_frontend_scratch_t *scratch)
{
    float *mel = scratch->mel;
    uint32_t i;

    td_fe_mel_frame(ring, ring_len, start, scratch);
    for (i = 0; i < TD_FE_MEL_BANDS; i++) {
        mel[i] = td_fe_logf(mel[i] / divisor + TD_FE_LOG_FLOOR);
    }
    td_fe_dct(td_fe_dct_half, mel, out, TD_FE_OUT, scratch->fft);
}

void td_frontend_frame_f32(const int16_t *ring, uint32_t ring_len, uint32_t start,
                           float *out, td_frontend_scratch_t *scratch)
{
    /* the samples this frame adds to the stream: the whole window after a reset, else the
     * last stride (frames arrive in time order) */
    uint32_t fresh = scratch->frames == 0u ? (uint32_t)TD_FE_WINDOW : (uint32_t)TD_FE_STRIDE;
    uint32_t i, n, pos = (start + (uint32_t)TD_FE_WINDOW - fresh) % ring_len;
    int32_t m = -32768;
    for (i = 0; i < fresh; i++) {
        m = ring[pos] > m ? ring[pos] : m;
        pos = pos + 1;
        if (pos == ring_len) {
            pos = 0;
        }
    }
    scratch->peak[scratch->frames % TD_FE_PEAKS] = (int16_t)m;
    scratch->frames = scratch->frames + 1u;
    n = scratch->frames < TD_FE_PEAKS ? scratch->frames : (uint32_t)TD_FE_PEAKS;
    for (i = 0; i < n; i++) {
        m = scratch->peak[i] > m ? scratch->peak[i] : m;
    }
    td_fe_mlperf_frame(ring, ring_len, start, td_fe_divisor(m), out, scratch);
    scratch->c0[(scratch->frames - 1u) % TD_FE_PEAKS] = out[0];
    scratch->div[(scratch->frames - 1u) % TD_FE_PEAKS] = td_fe_divisor(m);
}

void td_frontend_window_s8(int8_t *in, float scale, int32_t zero_point,
                           td_frontend_scratch_t *scratch)
{
    /* Each row t was divided by the largest sample seen up to its frame (d_t); the window is
     * divided by the largest over all its frames (D >= d_t). With the log floor negligible
     * only coefficient 0 depends on the divisor: c0(D) = c0(d_t) - sqrt(2 B) ln(D / d_t).
     * Digital silence (every band at the floor) does not depend on it at all. */
    uint32_t t, first = scratch->frames - (uint32_t)TD_FE_FRAMES;
    float d = 0.0f;
    for (t = 0; t < TD_FE_FRAMES; t++) {
        float v = scratch->div[(first + t) % TD_FE_PEAKS];
        d = v > d ? v : d;
    }
    for (t = 0; t < TD_FE_FRAMES; t++) {
        uint32_t i = (first + t) % TD_FE_PEAKS;
        float c0 = scratch->c0[i];
        if (scratch->div[i] != d && c0 > TD_FE_C0_SILENCE) {
            c0 = c0 - TD_FE_C0_PER_LOG * td_fe_logf(d / scratch->div[i]);
            if (c0 < TD_FE_C0_SILENCE) {
                c0 = TD_FE_C0_SILENCE;
            }
        }
        td_fe_quantize(&c0, &in[t * TD_FE_OUT], 1u, scale, zero_point);
    }
}

static float td_fe_clip_divisor(const int16_t *clip)
{
    uint32_t i;
    int32_t m = -32768;
    for (i = 0; i < TD_FE_CLIP_SAMPLES; i++) {
        m = clip[i] > m ? clip[i] : m;
    }
    return td_fe_divisor(m);
}

void td_frontend_clip_f32(const int16_t *clip, float *out, td_frontend_scratch_t *scratch)
{
    uint32_t t;
    float d = td_fe_clip_divisor(clip);
    for (t = 0; t < TD_FE_FRAMES; t++) {
        td_fe_mlperf_frame(clip, TD_FE_CLIP_SAMPLES, t * TD_FE_STRIDE, d,
                           &out[t * TD_FE_OUT], scratch);
    }
}

void td_frontend_clip_s8(const int16_t *clip, int8_t *out, float scale, int32_t zero_point,
                         td_frontend_scratch_t *scratch)
{
    uint32_t t;
    float d = td_fe_clip_divisor(clip);
    float f[TD_FE_OUT];
    for (t = 0; t < TD_FE_FRAMES; t++) {
        td_fe_mlperf_frame(clip, TD_FE_CLIP_SAMPLES, t * TD_FE_STRIDE, d, f, scratch);
        td_fe_quantize(f, &out[t * TD_FE_OUT], TD_FE_OUT, scale, zero_point);
    }
}

#endif /* TD_FE_PRESET_MLPERF_KWS */
