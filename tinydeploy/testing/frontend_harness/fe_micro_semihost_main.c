/*
 * Bare-metal harness that runs the micro-speech front end (td_frontend_micro.c) over one
 * stream of audio on an emulated Cortex-M, exchanging data through semihosting files:
 *   in:  "fe_in.bin"  = int32 n_samples, then n_samples int16 (read a stride at a time)
 *   out: "fe_out.bin" = per frame: TD_FE_OUT uint16 (td_frontend_frame_u16), then TD_FE_OUT
 *        int8 (td_frontend_frame_s8, on a second, independent state)
 *        followed by uint32 SysTick ticks of the last u16 frame (0 without a counter)
 * The samples live in a ring of TD_FE_WINDOW, so a stream of any length fits 16 KB of RAM.
 * Exits through semihosting: status 0 on success, 1 on any file error.
 * Used by tests/test_frontend_micro_target.py (host and device bytes identical).
 */
#include <stdint.h>

#include "td_frontend.h"
#include "td_semihost.h"

static int16_t ring[TD_FE_WINDOW];
static int16_t chunk[TD_FE_STRIDE];
static td_frontend_scratch_t st_u16, st_s8;

static struct {
    uint16_t u16[TD_FE_OUT];
    int8_t s8[TD_FE_OUT];
    uint32_t ticks;
} rec;

int main(void)
{
    int32_t fin, fout, n;
    uint32_t have = 0u, frame, frames, i;
    fin = td_open("fe_in.bin", 9, 1);   /* "rb" */
    fout = td_open("fe_out.bin", 10, 5); /* "wb" */
    if (fin < 0 || fout < 0 || !td_xfer(SYS_READ, fin, &n, sizeof n) || n < 0) {
        td_exit(0);
    }
    frames = ((uint32_t)n < TD_FE_WINDOW) ? 0u
                                          : 1u + ((uint32_t)n - TD_FE_WINDOW) / TD_FE_STRIDE;
    td_frontend_reset(&st_u16);
    td_frontend_reset(&st_s8);
    TD_SYST_RVR = 0x00FFFFFFu;
    TD_SYST_CVR = 0u;
    TD_SYST_CSR = 5u; /* processor clock, no interrupt, enabled */
    for (frame = 0u; frame < frames; frame++) {
        const uint32_t until = frame * TD_FE_STRIDE + TD_FE_WINDOW;
        const uint32_t start = (frame * TD_FE_STRIDE) % TD_FE_WINDOW;
        uint32_t t0, t1;
        while (have < until) {
            uint32_t k = (until - have < TD_FE_STRIDE) ? until - have : TD_FE_STRIDE;
            if (!td_xfer(SYS_READ, fin, chunk, k * 2u)) {
                td_exit(0);
            }
            for (i = 0u; i < k; i++) {
                ring[(have + i) % TD_FE_WINDOW] = chunk[i];
            }
            have += k;
        }
        t0 = TD_SYST_CVR;
        td_frontend_frame_u16(ring, TD_FE_WINDOW, start, rec.u16, &st_u16);
        t1 = TD_SYST_CVR;
        td_frontend_frame_s8(ring, TD_FE_WINDOW, start, rec.s8, 0.0f, 0, &st_s8);
        rec.ticks = (t0 - t1) & 0x00FFFFFFu; /* SysTick counts down */
        if (!td_xfer(SYS_WRITE, fout, &rec, sizeof rec)) {
            td_exit(0);
        }
    }
    td_semihost(SYS_CLOSE, &fout);
    td_exit(1);
    return 0;
}
