/* td_kws_pipeline.c: see td_kws_pipeline.h. */
#include "td_kws_pipeline.h"

#include <string.h>

#include "model.h"
#include "td_link.h"
#include "td_platform.h"

/* The front end's scratch borrows the idle arena when the host allowed it for this preset
 * (TD_KWS_FE_IN_ARENA, with its size) and the model leaves enough of it idle. */
#if defined(TD_KWS_FE_IN_ARENA) && TD_KWS_FE_IN_ARENA && \
    TD_KWS_FE_SCRATCH_BYTES <= TD_MODEL_IDLE_BYTES
#define TD_KWS_FE_BORROWS_ARENA 1
typedef char td_kws_fe_size_checked[(sizeof(td_frontend_scratch_t) == TD_KWS_FE_SCRATCH_BYTES)
                                        ? 1 : -1];
#else
#define TD_KWS_FE_BORROWS_ARENA 0
#endif

#ifndef TD_MODEL_IDLE_BYTES
#define TD_MODEL_IDLE_BYTES 0u
#endif

static td_kws_detector_t detector;
static uint32_t frames;                      /* frames computed in this stream */

#ifdef TD_MODEL_STREAMING
/* A streamed model (docs/streaming.md) keeps the rows it still needs in its own state: each
 * frame's row goes straight to the step input (arena bytes nothing else touches between
 * steps), and every TD_MODEL_HOP_FRAMES frames td_model_step() computes what they change.
 * Steps fall where the full window's inferences would with an inference every hop
 * (TD_FE_FRAMES frames, then every hop): a stream starts with PAD rows that only warm-up
 * steps see. No rows ring. */
#ifdef TD_FE_HAS_WINDOW_S8
#error "a front end that rewrites the whole window (mlperf-kws) cannot feed a streamed model"
#endif
#if TD_KWS_INFER_EVERY != TD_MODEL_HOP_FRAMES
#error "a streamed model runs a step every hop: TD_KWS_INFER_EVERY must be TD_MODEL_HOP_FRAMES"
#endif
#define PAD ((TD_MODEL_HOP_FRAMES - TD_FE_FRAMES % TD_MODEL_HOP_FRAMES) % TD_MODEL_HOP_FRAMES)
#define ROW(f) ((int8_t *)td_model_step_input() + (((f) + PAD) % TD_MODEL_HOP_FRAMES) * TD_FE_OUT)
#define INPUT_BYTES TD_MODEL_STEP_INPUT_BYTES
#else
static int8_t rows[TD_FE_FRAMES][TD_FE_OUT]; /* feature rows, a ring indexed by frame */
#define ROW(f) (rows[(f) % TD_FE_FRAMES])
#define INPUT_BYTES TD_KWS_FEAT_BYTES
#endif

/* The front end's working memory: idle arena bytes when the model leaves enough of them
 * between inferences (the front end never runs during one), else a buffer of its own. A
 * stateful preset keeps state in it from frame to frame, so it never borrows the arena. */
#if TD_KWS_FE_BORROWS_ARENA
#define FE_SCRATCH ((td_frontend_scratch_t *)td_model_idle_scratch())
#else
static td_frontend_scratch_t fe_scratch;
#define FE_SCRATCH (&fe_scratch)
#endif

int td_kws_init(void)
{
    int ok = TD_MODEL_NUM_INPUTS >= 1u && TD_MODEL_NUM_OUTPUTS >= 1u &&
             td_model_inputs[0].dtype == 9u &&
             td_model_inputs[0].bytes == (uint32_t)INPUT_BYTES &&
             td_model_outputs[0].dtype == 9u &&
             td_model_outputs[0].bytes <= TD_KWS_MAX_LABELS &&
             td_model_outputs[0].bytes > TD_KWS_FIRST_KEYWORD;
    if (!ok ||
        td_kws_detect_init(&detector, td_model_outputs[0].bytes, TD_KWS_AVG_WINDOWS,
                           TD_KWS_FIRST_KEYWORD, TD_KWS_THRESHOLD, TD_KWS_SUPPRESS_MS) != 0 ||
        (TD_KWS_KEYWORD_END != 0u &&
         td_kws_detect_set_keywords(&detector, TD_KWS_FIRST_KEYWORD, TD_KWS_KEYWORD_END) != 0)) {
        td_link_log(TD_LOG_ERROR, "kws: model I/O does not match the front end");
        return 0;
    }
#ifdef TD_KWS_CLASS_THRESHOLDS
    {
        static const float thresholds[] = TD_KWS_CLASS_THRESHOLDS;
        uint32_t k;
        if (sizeof thresholds / sizeof thresholds[0] != td_model_outputs[0].bytes) {
            td_link_log(TD_LOG_ERROR, "kws: one threshold per label expected");
            return 0;
        }
        for (k = 0; k < td_model_outputs[0].bytes; k++) {
            if (td_kws_detect_set_threshold(&detector, k, thresholds[k]) != 0) {
                td_link_log(TD_LOG_ERROR, "kws: a class threshold outside (0, 1]");
                return 0;
            }
        }
    }
#endif
    td_kws_reset();
    return 1;
}

void td_kws_reset(void)
{
    frames = 0u;
#ifdef TD_MODEL_STREAMING
    td_model_reset(); /* the state of an earlier stream is forgotten: warm-up again */
    {
        uint32_t k;
        for (k = 0; k < PAD; k++) /* rows before the stream: seen by warm-up steps only */
            memset((int8_t *)td_model_step_input() + k * TD_FE_OUT,
                   td_model_inputs[0].zero_point, TD_FE_OUT);
    }
#endif
    td_frontend_reset(FE_SCRATCH); /* a stateful front end (micro-speech) starts afresh */
    td_kws_detect_reset(&detector);
}

int td_kws_frame(const int16_t *ring, uint32_t ring_len, uint32_t start, uint32_t *cycles)
{
    uint32_t t0 = td_cycles_now();
    td_frontend_frame_s8(ring, ring_len, start, ROW(frames), td_model_inputs[0].scale,
                         td_model_inputs[0].zero_point, FE_SCRATCH);
    *cycles = td_cycles_now() - t0;
    frames++;
#ifdef TD_MODEL_STREAMING
    return (frames + PAD) % TD_MODEL_HOP_FRAMES == 0u; /* a step, warm-up ones included */
#else
    return frames >= TD_FE_FRAMES && (frames - TD_FE_FRAMES) % TD_KWS_INFER_EVERY == 0u;
#endif
}

int td_kws_infer(uint32_t time_ms, uint16_t *label, float *score)
{
    uint32_t k;
    const int8_t *out;
    float probs[TD_KWS_MAX_LABELS];
    float scale = td_model_outputs[0].scale;
    int32_t zp = td_model_outputs[0].zero_point;
    uint32_t n_out = td_model_outputs[0].bytes;

#ifdef TD_MODEL_STREAMING
    td_model_step();
    if (frames < TD_FE_FRAMES)
        return 0; /* warm-up: the window is not full yet */
#else
    uint8_t *in = (uint8_t *)td_model_input(0);
    uint32_t t, oldest = frames - TD_FE_FRAMES; /* frame index of the first row */
    for (t = 0; t < TD_FE_FRAMES; t++) {
        memcpy(&in[t * TD_FE_OUT], rows[(oldest + t) % TD_FE_FRAMES], TD_FE_OUT);
    }
#ifdef TD_FE_HAS_WINDOW_S8
    td_frontend_window_s8((int8_t *)in, td_model_inputs[0].scale, td_model_inputs[0].zero_point,
                          FE_SCRATCH);
#endif
    td_model_invoke();
#endif
    out = (const int8_t *)td_model_output(0);
    for (k = 0; k < n_out; k++) {
        probs[k] = (float)((int32_t)out[k] - zp) * scale;
    }
    return td_kws_detect_push(&detector, probs, time_ms, label, score);
}

uint32_t td_kws_frames(void) { return frames; }
