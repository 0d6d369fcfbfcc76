/*
 * td_frontend: the keyword-spotting audio front end (int16 PCM -> MFCC or log-mel -> int8).
 *
 * One C implementation serves the device and the host (where tinydeploy loads it as a shared
 * library to make training features), so the features a model was trained on are the bytes
 * the device computes. The sizes and every table come from td_frontend_config.h, rendered by
 * tinydeploy/frontend/config.py; docs/frontend.md states the exact math.
 *
 * Arithmetic is IEEE-754 single precision with a fixed operation order and no fused
 * multiply-add (this file forces -ffp-contract=off under GCC; -ffast-math is refused), so
 * x86-64 hosts, Cortex-M4F/M7/M33/M55 FPUs and soft-float Cortex-M0 give byte-identical
 * output. No malloc, no static state: every function is reentrant, scratch comes from the
 * caller.
 */
#ifndef TD_FRONTEND_H
#define TD_FRONTEND_H

#include <stdint.h>

/* The config: td_frontend_config_model.h when the build generated one for its model (see
 * tinydeploy/kws/device.py), else td_frontend_config.h (the committed model's config).
 * Angle brackets: the -I path decides which file is found. */
#if defined(__has_include)
#if __has_include(<td_frontend_config_model.h>)
#include <td_frontend_config_model.h>
#define TD_FRONTEND_CONFIG_FROM_MODEL 1
#endif
#endif
#ifndef TD_FRONTEND_CONFIG_FROM_MODEL
#include <td_frontend_config.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* td_frontend_scratch_t, the working memory (and, for a stateful preset, the state carried
 * from frame to frame) of one stream, is defined by the preset's config header: the caller owns
 * it; a zeroed struct, or td_frontend_reset(), starts a new stream. */

/* Start a new stream: forget whatever state earlier frames left in scratch. */
void td_frontend_reset(td_frontend_scratch_t *scratch);

/*
 * Features of one frame (TD_FE_WINDOW samples) as float (the tinydeploy and mlperf-kws
 * presets; a preset that is integer throughout does not define it).
 *   ring, ring_len: the samples, read as ring[(start + i) % ring_len] for i < TD_FE_WINDOW
 *                   (a linear buffer is a ring with ring_len >= start + TD_FE_WINDOW);
 *                   int16 PCM, full scale = 32768.
 *   out:            TD_FE_OUT floats (normalised MFCCs or log-mel energies).
 */
void td_frontend_frame_f32(const int16_t *ring, uint32_t ring_len, uint32_t start,
                           float *out, td_frontend_scratch_t *scratch);

/* q = clamp(round_half_away(x / scale) + zero_point, -128, 127), n values; scale > 0. */
void td_frontend_quantize_s8(const float *x, int8_t *q, uint32_t n, float scale,
                             int32_t zero_point);

/* One frame straight to int8, the model input's quantization (for the float presets:
 * td_frontend_frame_f32 then td_frontend_quantize_s8). Every preset implements it. Call it
 * once per frame in time order (start advancing by TD_FE_STRIDE): a stateful preset carries
 * state in scratch from one frame to the next. */
void td_frontend_frame_s8(const int16_t *ring, uint32_t ring_len, uint32_t start,
                          int8_t *out, float scale, int32_t zero_point,
                          td_frontend_scratch_t *scratch);

#ifdef TD_FE_HAS_WINDOW_S8
/* For a preset whose rows depend on the whole window (mlperf-kws: the peak normalisation),
 * called after the TD_FE_FRAMES rows of the last frames computed were copied to in[] in time
 * order (oldest first) and before the model runs: brings them to what the window as a clip
 * would give. Presets without it define no TD_FE_HAS_WINDOW_S8. */
void td_frontend_window_s8(int8_t *in, float scale, int32_t zero_point,
                           td_frontend_scratch_t *scratch);
#endif

/* A whole clip (TD_FE_CLIP_SAMPLES samples) to TD_FE_FRAMES x TD_FE_OUT values, row-major,
 * from a reset state (every preset implements td_frontend_clip_s8). */
void td_frontend_clip_f32(const int16_t *clip, float *out, td_frontend_scratch_t *scratch);
void td_frontend_clip_s8(const int16_t *clip, int8_t *out, float scale, int32_t zero_point,
                         td_frontend_scratch_t *scratch);

/* Natural logarithm for x > 0 (normal numbers), from + - * / only: identical everywhere. */
float td_frontend_logf(float x);

#ifdef __cplusplus
}
#endif

#endif /* TD_FRONTEND_H */
