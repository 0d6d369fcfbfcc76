/* Model-aware protocol helpers; see td_link_model.h and docs/protocol.md. */
#include "td_link_model.h"

#include <string.h>

#include "model.h"
#include "td_platform.h"

static void send_desc(uint8_t seq, uint8_t is_output, uint8_t index, const td_tensor_desc_t *d)
{
    const uint8_t rank = d->rank > 6u ? 6u : d->rank;
    td_link_sendf(TD_MSG_TENSOR, seq, "bbbbWfwws", is_output, index, d->dtype, rank,
                  (const uint32_t *)d->dims, (uint32_t)rank, &d->scale,
                  (uint32_t)d->zero_point, (uint32_t)d->bytes, d->name, (uint32_t)64u);
}

void td_link_send_model_info(uint8_t seq, const char *app)
{
    static const uint8_t sha[32] = TD_MODEL_SHA256_BYTES;
    td_link_sendf(TD_MSG_INFO, seq, "bbbbwhxsss", (uint8_t)TD_LINK_VERSION,
                  (uint8_t)TD_MODEL_NUM_INPUTS, (uint8_t)TD_MODEL_NUM_OUTPUTS, 0u,
                  (uint32_t)TD_MODEL_ARENA_BYTES, (uint16_t)TD_MODEL_NUM_OPS, sha,
                  (uint32_t)sizeof sha, TD_BOARD_ID, (uint32_t)64u, td_cycles_unit(),
                  (uint32_t)32u, app, (uint32_t)32u);
    for (uint32_t i = 0; i < TD_MODEL_NUM_INPUTS; ++i)
        send_desc(seq, 0u, (uint8_t)i, &td_model_inputs[i]);
    for (uint32_t i = 0; i < TD_MODEL_NUM_OUTPUTS; ++i)
        send_desc(seq, 1u, (uint8_t)i, &td_model_outputs[i]);
}

/* Bytes written into each input since the firmware started or since the last inference
 * (saturating). An inference may overwrite its inputs (the arena reuses their bytes once they
 * are consumed), and a reset forgets them: in both cases the count is below the input's size
 * and td_link_inputs_loaded refuses the INVOKE, so that a resent INVOKE or one after a reset
 * is never computed on stale or zeroed input. */
static uint32_t loaded_bytes[TD_MODEL_NUM_INPUTS > 0u ? TD_MODEL_NUM_INPUTS : 1u];

int td_link_inputs_loaded(uint8_t seq, uint8_t req)
{
    for (uint32_t i = 0; i < TD_MODEL_NUM_INPUTS; ++i) {
        if (loaded_bytes[i] < td_model_inputs[i].bytes) {
            td_link_error(seq, TD_ERR_STATE, req,
                          "inputs not loaded since the last inference or start-up");
            return 0;
        }
    }
    return 1;
}

void td_link_inputs_consumed(void)
{
    for (uint32_t i = 0; i < TD_MODEL_NUM_INPUTS; ++i)
        loaded_bytes[i] = 0u;
}

void td_link_load_input(const td_frame_t *f)
{
    td_rd_t r;
    uint8_t index;
    uint32_t offset, n;
    td_rd_init(&r, f);
    index = td_rd_u8(&r);
    offset = td_rd_u32(&r);
    if (r.short_read) {
        td_link_error(f->seq, TD_ERR_BAD_ARG, f->type, "LOAD_INPUT needs tensor u8, offset u32");
        return;
    }
    n = (uint32_t)f->len - r.pos;
    if (index >= TD_MODEL_NUM_INPUTS) {
        td_link_error(f->seq, TD_ERR_BAD_ARG, f->type, "no such input tensor");
        return;
    }
    if (offset > td_model_inputs[index].bytes || n > td_model_inputs[index].bytes - offset) {
        td_link_error(f->seq, TD_ERR_BAD_ARG, f->type, "bytes past the end of the input");
        return;
    }
    memcpy((uint8_t *)td_model_input(index) + offset, f->payload + r.pos, n);
    loaded_bytes[index] = loaded_bytes[index] > UINT32_MAX - n ? UINT32_MAX
                                                                : loaded_bytes[index] + n;
    td_link_ack(f->seq, f->type);
}

void td_link_send_outputs(uint8_t seq)
{
    for (uint32_t i = 0; i < TD_MODEL_NUM_OUTPUTS; ++i) {
        const uint8_t *data = (const uint8_t *)td_model_output(i);
        uint32_t total = td_model_outputs[i].bytes;
        for (uint32_t off = 0; off < total; off += TD_LINK_CHUNK) {
            uint32_t n = total - off < TD_LINK_CHUNK ? total - off : TD_LINK_CHUNK;
            td_link_sendf(TD_MSG_OUTPUT, seq, "bwx", (uint8_t)i, off, data + off, n);
        }
    }
}

void td_link_send_profile(uint8_t seq, const uint32_t *counts, uint32_t n)
{
    const char *unit = td_cycles_unit();
    for (uint32_t first = 0; first < n; first += TD_LINK_PROFILE_PER_FRAME) {
        uint32_t k = n - first < TD_LINK_PROFILE_PER_FRAME ? n - first : TD_LINK_PROFILE_PER_FRAME;
        td_link_sendf(TD_MSG_PROFILE, seq, "shhW", unit, (uint32_t)32u, (uint16_t)first,
                      (uint16_t)n, counts + first, k);
    }
}

void td_link_send_done(uint8_t seq, uint8_t req, uint32_t runs, uint32_t min, uint32_t max,
                       uint64_t total)
{
    /* protocol 2: then the stack's high-water mark and reserve */
    td_link_sendf(TD_MSG_DONE, seq, "bwwwqsww", req, runs, min, max, total, td_cycles_unit(),
                  (uint32_t)32u, (uint32_t)td_stack_peak(), (uint32_t)td_stack_size());
}

/* td_link_step's handler for a td_link_app_t (ctx) */
static int serve_frame(td_link_t *link, const td_frame_t *f, void *ctx)
{
    const td_link_app_t *app = (const td_link_app_t *)ctx;
    (void)link;
    if (app->handle(f) != TD_LINK_UNHANDLED)
        return 0;
    switch (f->type) {
    case TD_MSG_HELLO:
        td_link_send_model_info(f->seq, app->name);
        return 0;
    case TD_MSG_STOP:
        td_link_ack(f->seq, f->type);
        td_platform_exit(0);
        return 0;
    default:
        return TD_LINK_UNHANDLED;
    }
}

int td_link_serve(td_link_t *link, const td_link_app_t *app)
{
    return td_link_step(link, serve_frame, (void *)(uintptr_t)app);
}

void td_link_run(const td_link_app_t *app)
{
    static td_link_t link;
    td_platform_init();
    td_link_init(&link);
    app->start();
    for (;;)
        td_link_serve(&link, app);
}
