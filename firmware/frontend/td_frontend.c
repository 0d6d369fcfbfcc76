/*
 * td_frontend.c: framing, Hann window, real FFT, power spectrum, mel filterbank, log,
 * DCT-II (or identity for log-mel), normalisation, int8 quantization. See td_frontend.h and
 * docs/frontend.md. Every floating-point operation below is a plain IEEE single-precision
 * +, -, * or /, in the order written: keep it that way (no reassociation, no FMA).
 */
#define TD_FRONTEND_DEFINE_TABLES
#include "td_frontend.h"

/* Only the tinydeploy preset's config header makes this file compile to anything, so a
 * project folder holding another preset's sources too still builds. */
#ifdef TD_FE_PRESET_TINYDEPLOY

#include "td_fe_float.h"

void td_frontend_frame_f32(const int16_t *ring, uint32_t ring_len, uint32_t start,
                           float *out, td_frontend_scratch_t *scratch)
{
    float *mel = scratch->mel;
    uint32_t i;

    td_fe_mel_frame(ring, ring_len, start, scratch);
    for (i = 0; i < TD_FE_MEL_BANDS; i++) {
        mel[i] = td_fe_logf(mel[i] + TD_FE_LOG_FLOOR);
    }
#if TD_FE_KIND_MFCC
    td_fe_dct(td_fe_out_matrix, mel, out, TD_FE_OUT, scratch->fft);
    for (i = 0; i < TD_FE_OUT; i++) {
        out[i] = out[i] + td_fe_out_bias[i];
    }
#else
    /* log-mel: the matrix is diagonal (1 / std), the table holds its diagonal */
    for (i = 0; i < TD_FE_OUT; i++) {
        out[i] = mel[i] * td_fe_out_matrix[i] + td_fe_out_bias[i];
    }
#endif
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
