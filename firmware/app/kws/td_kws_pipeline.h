/*
 * td_kws_pipeline: what every kws mode shares, from samples to detections.
 *
 * Frames: each front-end stride, td_kws_frame() computes the newest frame's features only
 * (td_frontend_frame_s8) into a ring of TD_FE_FRAMES feature rows. Windows: every
 * TD_KWS_INFER_EVERY frames, once TD_FE_FRAMES frames exist, td_kws_infer() copies the rows
 * in time order into the model input (a preset whose rows depend on the whole window then
 * rewrites them, td_frontend_window_s8), runs the model, dequantizes the output and feeds the
 * detector (td_kws_detect). The serial mode (main.c: AUDIO frames from a host) and the
 * listening mode (td_kws_listen.c: a microphone through td_audio.h) differ only in where
 * the samples come from and how results leave.
 *
 * Memory: the rows ring is the only state besides the detector; the front end's scratch
 * lives in the model's arena when the model keeps nothing there between inferences
 * (TD_MODEL_IDLE_BYTES covers it), else in its own static buffer.
 */
#ifndef TD_KWS_PIPELINE_H
#define TD_KWS_PIPELINE_H

#include <stdint.h>

#include "td_frontend.h"
#include "td_kws_detect.h"

/* Overrides of the TD_KWS_* settings below, rendered by tinydeploy/kws/device.py */
#if defined(__has_include)
#if __has_include(<td_kws_config.h>)
#include <td_kws_config.h>
#endif
#endif

/* the defaults tinydeploy.kws.stream.DetectorConfig ships (tuned on the validation stream,
 * models/kws/README.md) */
#ifndef TD_KWS_INFER_EVERY
#define TD_KWS_INFER_EVERY 4u /* frames (strides) between inferences */
#endif
#ifndef TD_KWS_AVG_WINDOWS
#define TD_KWS_AVG_WINDOWS 6u
#endif
#ifndef TD_KWS_THRESHOLD
#define TD_KWS_THRESHOLD 0.93f
#endif
/* TD_KWS_CLASS_THRESHOLDS, when defined: an initializer of one threshold per model label
 * (a detector.json's class_thresholds) that replaces TD_KWS_THRESHOLD label by label */
#ifndef TD_KWS_SUPPRESS_MS
#define TD_KWS_SUPPRESS_MS 750u
#endif
#ifndef TD_KWS_FIRST_KEYWORD
#define TD_KWS_FIRST_KEYWORD 2u /* labels 0 and 1 are silence and unknown */
#endif
#ifndef TD_KWS_KEYWORD_END
#define TD_KWS_KEYWORD_END 0u /* keywords end here (0: at the last label) */
#endif
#ifndef TD_KWS_LISTEN
#define TD_KWS_LISTEN 0 /* 1: listen to td_audio.h's source; 0: AUDIO frames over serial */
#endif

#define TD_KWS_FEAT_BYTES (TD_FE_FRAMES * TD_FE_OUT)

/* Checks the model against the front end and sets the detector up: 1 when the app can
 * serve, 0 (and an ERROR log) when the model's input or output does not fit. */
int td_kws_init(void);

/* A new stream: the front end's state, the rows and the detector start afresh. */
void td_kws_reset(void);

/* The front end of one frame: TD_FE_WINDOW samples read as ring[(start + i) % ring_len].
 * Returns 1 when an inference is due after this frame. *cycles receives its cost. */
int td_kws_frame(const int16_t *ring, uint32_t ring_len, uint32_t start, uint32_t *cycles);

/* The model on the newest window, then the detector; time_ms is the audio time of the
 * window's end. Returns 1 and sets *label and *score when a keyword fires. */
int td_kws_infer(uint32_t time_ms, uint16_t *label, float *score);

/* Frames computed in this stream. */
uint32_t td_kws_frames(void);

#endif /* TD_KWS_PIPELINE_H */
