/*
 * bench: timed inferences on a deterministic input. At start it runs TD_BENCH_RUNS
 * inferences and reports, unsolicited (sequence 0), the mean count per op (PROFILE) and
 * min / max / total per inference (DONE); then it serves HELLO, BENCH <runs> and STOP.
 * Totals come from unprofiled runs, the per-op means from as many profiled runs, so the
 * profiling overhead never inflates the per-inference figure.
 */
#include <stdint.h>

#include "model.h"
#include "td_link.h"
#include "td_link_model.h"
#include "td_platform.h"

#ifndef TD_BENCH_RUNS
#define TD_BENCH_RUNS 10u
#endif

static uint32_t per_op[TD_MODEL_NUM_OPS > 0u ? TD_MODEL_NUM_OPS : 1u];
static uint64_t per_op_sum[TD_MODEL_NUM_OPS > 0u ? TD_MODEL_NUM_OPS : 1u];

/* the same pseudo-random bytes on every run and every board (32-bit LCG) */
static void fill_inputs(void)
{
    uint32_t state = 0x7D5EEDu;
    for (uint32_t i = 0; i < TD_MODEL_NUM_INPUTS; ++i) {
        uint8_t *p = (uint8_t *)td_model_input(i);
        for (uint32_t k = 0; k < td_model_inputs[i].bytes; ++k) {
            state = state * 1664525u + 1013904223u;
            p[k] = (uint8_t)(state >> 24);
        }
    }
}

/* sum / n (n > 0, quotient below 2^32) by shift and subtract: a 64-bit '/' would link
 * libgcc's __aeabi_uldivmod and __udivmoddi4, 750 bytes of flash for one division per op */
static uint32_t mean_u64(uint64_t sum, uint32_t n)
{
    uint64_t r = 0;
    uint32_t q = 0;
    for (int i = 0; i < 64; ++i) {
        r = (r << 1) | (uint32_t)(sum >> 63);
        sum <<= 1;
        q <<= 1;
        if (r >= n) {
            r -= n;
            q |= 1u;
        }
    }
    return q;
}

static void bench(uint8_t seq, uint32_t runs)
{
    uint32_t lo = 0xFFFFFFFFu, hi = 0;
    uint64_t total = 0;
    for (uint32_t k = 0; k < TD_MODEL_NUM_OPS; ++k)
        per_op_sum[k] = 0;
    for (uint32_t r = 0; r < runs; ++r) {
        uint32_t t0, dt;
        fill_inputs();
        t0 = td_cycles_now();
        td_model_invoke();
        dt = td_cycles_now() - t0;
        lo = dt < lo ? dt : lo;
        hi = dt > hi ? dt : hi;
        total += dt;
        fill_inputs();
        td_model_invoke_profiled(per_op);
        for (uint32_t k = 0; k < TD_MODEL_NUM_OPS; ++k)
            per_op_sum[k] += per_op[k];
    }
    for (uint32_t k = 0; k < TD_MODEL_NUM_OPS; ++k)
        per_op[k] = runs ? mean_u64(per_op_sum[k], runs) : 0u;
    td_link_send_profile(seq, per_op, TD_MODEL_NUM_OPS);
    td_link_send_done(seq, TD_MSG_BENCH, runs, runs ? lo : 0u, hi, total);
}

static int handle(const td_frame_t *f)
{
    switch (f->type) {
    case TD_MSG_BENCH: {
        td_rd_t r;
        uint32_t runs;
        td_rd_init(&r, f);
        runs = td_rd_u32(&r);
        if (r.short_read || r.pos != f->len || runs == 0u) {
            td_link_error(f->seq, TD_ERR_BAD_ARG, f->type, "BENCH takes runs u32 > 0");
            return 0;
        }
        bench(f->seq, runs);
        return 0;
    }
    default:
        return TD_LINK_UNHANDLED;
    }
}

static void start(void)
{
    td_link_log(TD_LOG_INFO, "bench ready");
    bench(0u, TD_BENCH_RUNS);
}

static const td_link_app_t app = {"bench", start, handle};

int main(void)
{
    td_link_run(&app);
}
