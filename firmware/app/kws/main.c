/*
 * kws: keyword spotting on a stream of 16-bit PCM that arrives in AUDIO frames.
 *
 * The device keeps a ring buffer of recent audio (1 s by default). Each time a frame's
 * window is complete (every TD_FE_STRIDE samples) it computes that frame's features only
 * (td_frontend) into a ring of feature rows; every TD_KWS_INFER_EVERY frames, once a full
 * window of TD_FE_FRAMES frames exists, it copies the rows in time order into the model
 * input, runs the model, dequantizes the output probabilities and feeds the detector
 * (td_kws_detect: moving average over TD_KWS_AVG_WINDOWS windows, threshold, suppression).
 *
 * Replies to AUDIO (request sequence number), before its ACK:
 *   EVENT (unsolicited, seq 0)  label, averaged score, audio time in ms of the window end
 *   OUTPUT                      the model output of the last window completed in this frame
 *   DONE  req=AUDIO             runs = windows completed in this frame; min / max / total
 *                               count (td_cycles_unit) per window: the front end of the
 *                               frames since the previous window + inference + smoothing
 *   PROFILE first=0             two counts summed over those windows: front end, model
 * AUDIO payload: first_sample u32 (stream index; 0 restarts the stream), PCM int16 LE.
 * A gap in the stream is an ERROR STATE naming the expected index. HELLO, PING, STOP as in
 * every application (docs/protocol.md).
 *
 * A resent AUDIO (the same first_sample and length as the last one processed: its replies
 * were lost or damaged on the way) is not computed again: the device sends the same replies
 * again, the EVENTs of that frame included (up to TD_KWS_REPLAY_EVENTS), from what it kept.
 * So a host can ask again until it has one complete, undamaged set of replies per frame.
 */
#include <stdint.h>
#include <string.h>

#include "model.h"
#include "td_frontend.h"
#include "td_kws_detect.h"
#include "td_link.h"
#include "td_link_model.h"
#include "td_platform.h"

/* Overrides of the TD_KWS_* settings below, rendered by tinydeploy/kws/device.py */
#if defined(__has_include)
#if __has_include(<td_kws_config.h>)
#include <td_kws_config.h>
#endif
#endif

#ifndef TD_KWS_RING_SAMPLES
#define TD_KWS_RING_SAMPLES TD_FE_CLIP_SAMPLES
#endif
#ifndef TD_KWS_INFER_EVERY
#define TD_KWS_INFER_EVERY 4u /* frames (strides) between inferences */
#endif
#ifndef TD_KWS_AVG_WINDOWS
#define TD_KWS_AVG_WINDOWS 6u
#endif
#ifndef TD_KWS_THRESHOLD
#define TD_KWS_THRESHOLD 0.93f
#endif
#ifndef TD_KWS_SUPPRESS_MS
#define TD_KWS_SUPPRESS_MS 750u
#endif
#ifndef TD_KWS_FIRST_KEYWORD
#define TD_KWS_FIRST_KEYWORD 2u /* labels 0 and 1 are silence and unknown */
#endif
#ifndef TD_KWS_KEYWORD_END
#define TD_KWS_KEYWORD_END 0u /* keywords end here (0: at the last label) */
#endif

#if TD_KWS_RING_SAMPLES < TD_FE_WINDOW
#error "TD_KWS_RING_SAMPLES must hold at least one window"
#endif

#define FEAT_BYTES (TD_FE_FRAMES * TD_FE_OUT)
#define TD_KWS_REPLAY_EVENTS 4u /* EVENTs one AUDIO frame can raise and replay */

static td_frontend_scratch_t fe_scratch;
static td_kws_detector_t detector;
static int16_t ring[TD_KWS_RING_SAMPLES];
static int8_t rows[TD_FE_FRAMES][TD_FE_OUT]; /* feature rows, a ring indexed by frame */
static uint32_t total;                       /* samples received in this stream */
static uint32_t frames;                      /* frames computed in this stream */
static uint32_t fe_pending;                  /* front-end count since the last window */
static uint8_t model_ok;

/* per-AUDIO-request window statistics */
static uint32_t win_runs, win_min, win_max;
static uint64_t win_total, win_fe, win_model;

/* the last AUDIO frame processed and its EVENTs, for a resend (see the header) */
static uint32_t last_first, last_n;
static uint8_t last_valid;
static uint32_t ev_count;
static uint16_t ev_label[TD_KWS_REPLAY_EVENTS];
static float ev_score[TD_KWS_REPLAY_EVENTS];
static uint32_t ev_ms[TD_KWS_REPLAY_EVENTS];

static void stream_reset(void)
{
    total = 0u;
    frames = 0u;
    fe_pending = 0u;
    last_valid = 0u;
    td_frontend_reset(&fe_scratch); /* a stateful front end (micro-speech) starts afresh */
    td_kws_detect_reset(&detector);
}

static void run_window(void)
{
    uint32_t t, k, t0, dt_model, dt;
    uint8_t *in = (uint8_t *)td_model_input(0);
    const int8_t *out;
    float probs[TD_KWS_MAX_LABELS];
    float scale = td_model_outputs[0].scale;
    int32_t zp = td_model_outputs[0].zero_point;
    uint32_t n_out = td_model_outputs[0].bytes;
    uint16_t label;
    float score;
    uint32_t oldest = frames - TD_FE_FRAMES; /* frame index of the first row */

    t0 = td_cycles_now();
    for (t = 0; t < TD_FE_FRAMES; t++) {
        memcpy(&in[t * TD_FE_OUT], rows[(oldest + t) % TD_FE_FRAMES], TD_FE_OUT);
    }
#ifdef TD_FE_HAS_WINDOW_S8
    td_frontend_window_s8((int8_t *)in, td_model_inputs[0].scale, td_model_inputs[0].zero_point,
                          &fe_scratch);
#endif
    td_model_invoke();
    out = (const int8_t *)td_model_output(0);
    for (k = 0; k < n_out; k++) {
        probs[k] = (float)((int32_t)out[k] - zp) * scale;
    }
    if (td_kws_detect_push(&detector, probs, total / (TD_FE_SAMPLE_RATE / 1000u), &label,
                           &score)) {
        td_link_event(label, score, total / (TD_FE_SAMPLE_RATE / 1000u));
        if (ev_count < TD_KWS_REPLAY_EVENTS) {
            ev_label[ev_count] = label;
            ev_score[ev_count] = score;
            ev_ms[ev_count] = total / (TD_FE_SAMPLE_RATE / 1000u);
        }
        ev_count++;
    }
    dt_model = td_cycles_now() - t0;
    dt = dt_model + fe_pending;
    win_runs++;
    win_min = dt < win_min ? dt : win_min;
    win_max = dt > win_max ? dt : win_max;
    win_total += dt;
    win_fe += fe_pending;
    win_model += dt_model;
    fe_pending = 0u;
}

static void push_sample(int16_t s)
{
    ring[total % TD_KWS_RING_SAMPLES] = s;
    total++;
    if (total >= TD_FE_WINDOW && (total - TD_FE_WINDOW) % TD_FE_STRIDE == 0u) {
        uint32_t t0 = td_cycles_now();
        uint32_t start = (total - TD_FE_WINDOW) % TD_KWS_RING_SAMPLES;
        td_frontend_frame_s8(ring, TD_KWS_RING_SAMPLES, start, rows[frames % TD_FE_FRAMES],
                             td_model_inputs[0].scale, td_model_inputs[0].zero_point,
                             &fe_scratch);
        fe_pending += td_cycles_now() - t0;
        frames++;
        if (frames >= TD_FE_FRAMES && (frames - TD_FE_FRAMES) % TD_KWS_INFER_EVERY == 0u) {
            run_window();
        }
    }
}

/* The replies of the last AUDIO frame (its window statistics are kept until the next one;
 * its last window's output is still in the arena), then its ACK. */
static void send_replies(uint8_t seq)
{
    if (win_runs) {
        uint32_t split[2];
        td_link_send_outputs(seq); /* the last window's model output */
        split[0] = (uint32_t)win_fe;
        split[1] = (uint32_t)win_model;
        td_link_send_profile(seq, split, 2u);
        td_link_send_done(seq, TD_MSG_AUDIO, win_runs, win_min, win_max, win_total);
    }
    td_link_ack(seq, TD_MSG_AUDIO);
}

static void handle_audio(const td_frame_t *f)
{
    td_rd_t r;
    uint32_t first, i, n;
    td_rd_init(&r, f);
    first = td_rd_u32(&r);
    if (r.short_read || ((f->len - r.pos) & 1u)) {
        td_link_error(f->seq, TD_ERR_BAD_ARG, f->type, "AUDIO: first_sample u32 + int16 PCM");
        return;
    }
    if (!model_ok) {
        td_link_error(f->seq, TD_ERR_STATE, f->type,
                      "model input/output does not match the front end");
        return;
    }
    n = (uint32_t)(f->len - r.pos) / 2u;
    if (first != 0u && last_valid && first == last_first && n == last_n &&
        first + n == total) {
        if (ev_count > TD_KWS_REPLAY_EVENTS) {
            td_link_error(f->seq, TD_ERR_STATE, f->type,
                          "AUDIO resent: too many events to replay");
            return;
        }
        for (i = 0; i < ev_count; i++)
            td_link_event(ev_label[i], ev_score[i], ev_ms[i]);
        send_replies(f->seq);
        return;
    }
    if (first == 0u) {
        stream_reset();
    } else if (first != total) {
        char msg[64], *p = msg, *end = msg + sizeof msg - 1;
        p = td_fmt_str(p, end, "AUDIO gap: expected sample ");
        p = td_fmt_u32(p, end, total);
        p = td_fmt_str(p, end, ", got ");
        p = td_fmt_u32(p, end, first);
        *p = '\0';
        td_link_error(f->seq, TD_ERR_STATE, f->type, msg);
        return;
    }
    win_runs = 0u;
    win_min = 0xFFFFFFFFu;
    win_max = 0u;
    win_total = win_fe = win_model = 0u;
    ev_count = 0u;
    for (i = 0; i < n; i++) {
        const uint8_t *b = &f->payload[r.pos + 2u * i];
        push_sample((int16_t)(uint16_t)((uint32_t)b[0] | ((uint32_t)b[1] << 8)));
    }
    last_first = first;
    last_n = n;
    last_valid = 1u;
    send_replies(f->seq);
}

static int handle(const td_frame_t *f)
{
    if (f->type != TD_MSG_AUDIO)
        return TD_LINK_UNHANDLED;   /* HELLO, STOP: td_link_run's */
    handle_audio(f);
    return 0;
}

static void start(void)
{
    model_ok = (uint8_t)(TD_MODEL_NUM_INPUTS >= 1u && TD_MODEL_NUM_OUTPUTS >= 1u &&
                         td_model_inputs[0].dtype == 9u &&
                         td_model_inputs[0].bytes == (uint32_t)FEAT_BYTES &&
                         td_model_outputs[0].dtype == 9u &&
                         td_model_outputs[0].bytes <= TD_KWS_MAX_LABELS &&
                         td_model_outputs[0].bytes > TD_KWS_FIRST_KEYWORD);
    if (!model_ok ||
        td_kws_detect_init(&detector, td_model_outputs[0].bytes, TD_KWS_AVG_WINDOWS,
                           TD_KWS_FIRST_KEYWORD, TD_KWS_THRESHOLD, TD_KWS_SUPPRESS_MS) != 0 ||
        (TD_KWS_KEYWORD_END != 0u &&
         td_kws_detect_set_keywords(&detector, TD_KWS_FIRST_KEYWORD, TD_KWS_KEYWORD_END) != 0)) {
        model_ok = 0u;
        td_link_log(TD_LOG_ERROR, "kws: model I/O does not match the front end");
    } else {
        td_link_log(TD_LOG_INFO, "kws ready");
    }
    stream_reset();
}

static const td_link_app_t app = {"kws", start, handle};

int main(void)
{
    td_link_run(&app);
}
