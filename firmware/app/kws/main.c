/*
 * kws, serial mode: keyword spotting on a stream of 16-bit PCM that arrives in AUDIO frames
 * (boards without a microphone, and tests). The listening mode (a microphone, continuous) is
 * td_kws_listen.c; a build has one or the other (TD_KWS_LISTEN).
 *
 * The device keeps a ring buffer of the most recent audio (one analysis window by default).
 * Each time a frame's window is complete (every TD_FE_STRIDE samples) it runs the shared
 * pipeline (td_kws_pipeline.h): that frame's features, and every TD_KWS_INFER_EVERY frames
 * the model and the detector.
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

#include "td_kws_pipeline.h"

#if !TD_KWS_LISTEN

#include "model.h"
#include "td_link.h"
#include "td_link_model.h"
#include "td_platform.h"

#ifndef TD_KWS_RING_SAMPLES
#define TD_KWS_RING_SAMPLES TD_FE_WINDOW
#endif

#if TD_KWS_RING_SAMPLES < TD_FE_WINDOW
#error "TD_KWS_RING_SAMPLES must hold at least one window"
#endif

#define TD_KWS_REPLAY_EVENTS 4u /* EVENTs one AUDIO frame can raise and replay */

static int16_t ring[TD_KWS_RING_SAMPLES];
static uint32_t total;                       /* samples received in this stream */
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
    fe_pending = 0u;
    last_valid = 0u;
    td_kws_reset();
}

static void run_window(void)
{
    uint32_t t0 = td_cycles_now(), dt_model, dt;
    uint32_t ms = total / (TD_FE_SAMPLE_RATE / 1000u);
    uint16_t label;
    float score;

    if (td_kws_infer(ms, &label, &score)) {
        td_link_event(label, score, ms);
        if (ev_count < TD_KWS_REPLAY_EVENTS) {
            ev_label[ev_count] = label;
            ev_score[ev_count] = score;
            ev_ms[ev_count] = ms;
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
        uint32_t dt;
        uint32_t start = (total - TD_FE_WINDOW) % TD_KWS_RING_SAMPLES;
        int due = td_kws_frame(ring, TD_KWS_RING_SAMPLES, start, &dt);
        fe_pending += dt;
        if (due) {
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
    model_ok = (uint8_t)td_kws_init();
    if (model_ok)
        td_link_log(TD_LOG_INFO, "kws ready");
    stream_reset();
}

static const td_link_app_t app = {"kws", start, handle};

int main(void)
{
    td_link_run(&app);
}

#endif /* !TD_KWS_LISTEN */
