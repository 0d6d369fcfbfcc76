/*
 * validate: the firmware side of `tinydeploy validate`. The host sends input tensors
 * (LOAD_INPUT), asks for an inference (INVOKE) and receives the outputs (OUTPUT), the per-op
 * counts (PROFILE, when asked) and the total (DONE); it compares the outputs with the
 * oracle. Everything is request/response over the one protocol (docs/protocol.md).
 */
#include <stdint.h>

#include "model.h"
#include "td_link.h"
#include "td_link_model.h"
#include "td_platform.h"

static uint32_t per_op[TD_MODEL_NUM_OPS > 0u ? TD_MODEL_NUM_OPS : 1u];

static int handle(const td_frame_t *f)
{
    switch (f->type) {
    case TD_MSG_LOAD_INPUT:
        td_link_load_input(f);
        return 0;
    case TD_MSG_INVOKE: {
        uint8_t profile;
        uint32_t t0, dt;
        if (f->len != 1u) {
            td_link_error(f->seq, TD_ERR_BAD_ARG, f->type, "INVOKE takes one flags byte");
            return 0;
        }
        if (!td_link_inputs_loaded(f->seq, f->type))
            return 0;
        profile = (uint8_t)(f->payload[0] & 1u);
        t0 = td_cycles_now();
        td_model_invoke_profiled(profile ? per_op : 0);
        dt = td_cycles_now() - t0;
        td_link_inputs_consumed();
        td_link_send_outputs(f->seq);
        if (profile)
            td_link_send_profile(f->seq, per_op, TD_MODEL_NUM_OPS);
        td_link_send_done(f->seq, TD_MSG_INVOKE, 1u, dt, dt, dt);
        return 0;
    }
    default:
        return TD_LINK_UNHANDLED;
    }
}

static void start(void)
{
    td_link_log(TD_LOG_INFO, "validate ready");
}

static const td_link_app_t app = {"validate", start, handle};

int main(void)
{
    td_link_run(&app);
}
