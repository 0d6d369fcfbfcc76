/*
 * Bare-metal harness that runs the front end on an emulated Cortex-M (QEMU mps2 machines) and
 * exchanges data through semihosting files, independent of any UART or serial protocol:
 *   in:  "fe_in.bin"  = int32 n, float scale, int32 zero_point, n * TD_FE_CLIP_SAMPLES int16
 *   out: "fe_out.bin" = per clip: TD_FE_FRAMES * TD_FE_OUT float32, then as many int8
 * Exits through semihosting: status 0 on success, 1 on any file error.
 * Used by tests/test_frontend_target.py to check host and device bytes are identical.
 */
#include <stdint.h>

#include "td_frontend.h"
#include "td_semihost.h"

static int16_t clip[TD_FE_CLIP_SAMPLES];
static float feat_f[TD_FE_FRAMES * TD_FE_OUT];
static int8_t feat_q[TD_FE_FRAMES * TD_FE_OUT];
static td_frontend_scratch_t scratch;
static uint32_t ticks[1];

int main(void)
{
    int32_t header[3];
    int32_t fin, fout, i;
    float scale;
    int32_t ftick;
    TD_SYST_RVR = 0x00FFFFFFu;
    TD_SYST_CVR = 0u;
    TD_SYST_CSR = 5u; /* enable, processor clock, no interrupt */
    ftick = td_open("fe_ticks.bin", 12, 5);
    fin = td_open("fe_in.bin", 9, 1);   /* "rb" */
    fout = td_open("fe_out.bin", 10, 5); /* "wb" */
    if (fin < 0 || fout < 0 || !td_xfer(SYS_READ, fin, header, sizeof header)) {
        td_exit(0);
    }
    {
        union { int32_t i; float f; } u;
        u.i = header[1];
        scale = u.f;
    }
    for (i = 0; i < header[0]; i++) {
        if (!td_xfer(SYS_READ, fin, clip, sizeof clip)) {
            td_exit(0);
        }
        td_frontend_clip_f32(clip, feat_f, &scratch);
        {
            uint32_t t0 = TD_SYST_CVR;
            td_frontend_clip_s8(clip, feat_q, scale, header[2], &scratch);
            ticks[0] = (t0 - TD_SYST_CVR) & 0x00FFFFFFu; /* counts down */
        }
        if (ftick >= 0 && !td_xfer(SYS_WRITE, ftick, ticks, sizeof ticks)) {
            td_exit(0);
        }
        if (!td_xfer(SYS_WRITE, fout, feat_f, sizeof feat_f) ||
            !td_xfer(SYS_WRITE, fout, feat_q, sizeof feat_q)) {
            td_exit(0);
        }
    }
    td_semihost(SYS_CLOSE, &fout);
    if (ftick >= 0) {
        td_semihost(SYS_CLOSE, &ftick);
    }
    td_exit(1);
    return 0;
}
