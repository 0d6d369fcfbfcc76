/*
 * kws, listening mode: keyword spotting on the board's own microphone, continuously
 * (docs/audio.md). Built instead of the serial mode (main.c) when TD_KWS_LISTEN is 1.
 *
 * Samples arrive in blocks of one front-end stride through td_audio.h (the PDM microphone on
 * the chip, the virtual microphone under QEMU) into a ring of TD_KWS_AUDIO_BLOCKS blocks that
 * this file owns, sized on the host to what the schedule needs (tinydeploy/kws/realtime.py):
 * the blocks the next frame still needs while an inference runs (one window less a stride),
 * the two the source fills and arms, and the blocks that arrive while the longest piece of
 * work (a frame and an inference) runs. The front end reads the window straight from the
 * ring; no sample is copied.
 *
 * Main loop: take the next block, compute the frame it completes (td_kws_pipeline.h), every
 * TD_KWS_INFER_EVERY frames the model and the detector; then hand the block the next frame
 * no longer needs back to the source. With no block waiting the core sleeps (WFI) until the
 * source's next interrupt; the time asleep is measured, and busy = elapsed - asleep is the
 * duty cycle. Between blocks the serial link is served (HELLO, PING, STOP).
 *
 * Sent unsolicited (sequence 0): EVENT when a keyword fires (label, averaged score, audio
 * time in ms of the window's end, as the serial mode and the host twin count it); STATUS
 * every TD_KWS_STATUS_BLOCKS blocks and once more, with flag bit 0 set, when the source has
 * ended (docs/protocol.md). A block that comes after a gap (samples the source dropped
 * because this loop fell behind: overruns) starts a new stream: the front end, the rows and
 * the detector start afresh, and audio time goes on counting the lost samples.
 */
#include <stdint.h>

#include "td_kws_pipeline.h"

#if TD_KWS_LISTEN

#include "model.h"
#include "td_audio.h"
#include "td_link.h"
#include "td_link_model.h"
#include "td_platform.h"

#define BLOCK TD_FE_STRIDE
#define WINDOW_BLOCKS ((TD_FE_WINDOW + TD_FE_STRIDE - 1u) / TD_FE_STRIDE)

#ifndef TD_KWS_AUDIO_BLOCKS
#define TD_KWS_AUDIO_BLOCKS (WINDOW_BLOCKS + 2u)
#endif
#if TD_KWS_AUDIO_BLOCKS < WINDOW_BLOCKS + 2u
#error "TD_KWS_AUDIO_BLOCKS must hold a window's blocks and the source's two"
#endif
#ifndef TD_KWS_STATUS_BLOCKS
#define TD_KWS_STATUS_BLOCKS 50u /* one STATUS a second at 20 ms blocks */
#endif

static int16_t audio[TD_KWS_AUDIO_BLOCKS * BLOCK];
static td_link_t link;
static uint8_t model_ok;

static uint32_t base;     /* block number of the first block of this stream (after a gap) */
static uint32_t expect;   /* the block number that continues the stream */
static uint8_t started;   /* a block was taken since start */

/* figures for STATUS */
static uint32_t windows, frames_all, detections;
static uint64_t busy, elapsed, fe_total, model_total;
static uint32_t last_now;

static void account(uint64_t *into)
{
    uint32_t now = td_cycles_now();
    uint32_t d = now - last_now;
    last_now = now;
    elapsed += d;
    if (into)
        *into += d;
}

static void send_status(uint8_t final_flag, uint32_t heard_blocks)
{
    uint32_t audio_ms = (uint32_t)((uint64_t)heard_blocks * BLOCK / (TD_FE_SAMPLE_RATE / 1000u));
    account(&busy);
    /* flags, audio_ms, windows, frames, detections, overruns (samples), busy, elapsed,
     * front end, model: counts of td_cycles_unit() */
    td_link_sendf(TD_MSG_STATUS, 0u, "bwwwwwqqqqs", final_flag, audio_ms, windows, frames_all,
                  detections, td_audio_overruns(), busy, elapsed, fe_total, model_total,
                  td_cycles_unit(), (uint32_t)32u);
}

/* One taken block: the frame it completes, the inference when due, and the blocks no
 * longer needed go back to the source. */
static void on_block(const int16_t *samples, uint32_t b)
{
    uint32_t slot = (uint32_t)(samples - audio) / BLOCK;
    uint32_t j, dt;
    if (!started || b != expect) {
        /* the first block, or one after a gap: a new stream begins here */
        td_audio_release(b);
        td_kws_reset();
        base = b;
        started = 1u;
    }
    expect = b + 1u;
    j = b - base; /* this block's index in the stream */
    if (j + 1u >= WINDOW_BLOCKS) {
        uint32_t f = j + 1u - WINDOW_BLOCKS; /* the frame this block completes */
        uint32_t first_slot = (slot + TD_KWS_AUDIO_BLOCKS - (WINDOW_BLOCKS - 1u)) %
                              TD_KWS_AUDIO_BLOCKS;
        int due = td_kws_frame(audio, TD_KWS_AUDIO_BLOCKS * BLOCK, first_slot * BLOCK, &dt);
        frames_all++;
        fe_total += dt;
        /* the next frame starts one block later: the inference needs no audio, so the
         * block goes back before it runs and the source has one slot more meanwhile */
        td_audio_release(base + f + 1u);
        if (due) {
            uint32_t end = (base + f) * BLOCK + TD_FE_WINDOW; /* stream sample of its end */
            uint32_t t0 = td_cycles_now();
            uint16_t label;
            float score;
            uint32_t ms = end / (TD_FE_SAMPLE_RATE / 1000u);
            windows++;
            if (td_kws_infer(ms, &label, &score)) {
                detections++;
                td_link_event(label, score, ms);
            }
            model_total += td_cycles_now() - t0;
        }
    }
    if ((b + 1u) % TD_KWS_STATUS_BLOCKS == 0u)
        send_status(0u, b + 1u);
}

static int handle(const td_frame_t *f)
{
    (void)f;
    return TD_LINK_UNHANDLED; /* HELLO, PING, STOP: td_link_serve's */
}

static void start(void)
{
    model_ok = (uint8_t)td_kws_init();
}

static const td_link_app_t app = {"kws", start, handle};

int main(void)
{
    td_audio_config_t cfg = {audio, TD_KWS_AUDIO_BLOCKS, BLOCK};
    const int16_t *s;
    uint32_t b, heard = 0u;
    uint8_t ended = 0u;
    td_platform_init();
    td_link_init(&link);
    app.start();
    if (!model_ok) {
        for (;;)
            td_link_serve(&link, &app);
    }
    if (td_audio_start(&cfg) != 0) {
        td_link_log(TD_LOG_ERROR, "kws: the audio source did not start");
        for (;;)
            td_link_serve(&link, &app);
    }
    td_link_log(TD_LOG_INFO, "kws listening");
    last_now = td_cycles_now();
    for (;;) {
        td_link_serve(&link, &app);
        s = td_audio_take(&b);
        if (s) {
            on_block(s, b);
            heard = b + 1u;
            account(&busy);
        } else if (td_audio_ended()) {
            if (!ended) {
                ended = 1u;
                send_status(1u, heard);
            }
        } else {
            account(&busy);
            td_audio_wait();
            account(0); /* asleep */
        }
    }
}

#endif /* TD_KWS_LISTEN */
