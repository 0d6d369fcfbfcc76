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

#define SYS_OPEN 0x01
#define SYS_CLOSE 0x02
#define SYS_WRITE 0x05
#define SYS_READ 0x06
#define SYS_EXIT 0x18

static int32_t td_semihost(int32_t op, void *arg)
{
    register int32_t r0 __asm__("r0") = op;
    register void *r1 __asm__("r1") = arg;
    __asm__ volatile("bkpt 0xAB" : "+r"(r0) : "r"(r1) : "memory");
    return r0;
}

static void td_exit(int ok)
{
    /* ADP_Stopped_ApplicationExit -> exit 0; ADP_Stopped_RunTimeErrorUnknown -> exit 1 */
    td_semihost(SYS_EXIT, (void *)(uintptr_t)(ok ? 0x20026 : 0x20023));
    for (;;) {
    }
}

static int32_t td_open(const char *name, uint32_t len, int32_t mode)
{
    uint32_t args[3];
    args[0] = (uint32_t)(uintptr_t)name;
    args[1] = (uint32_t)mode;
    args[2] = len;
    return td_semihost(SYS_OPEN, args);
}

static int td_xfer(int32_t op, int32_t fd, void *buf, uint32_t n)
{
    uint32_t args[3];
    args[0] = (uint32_t)fd;
    args[1] = (uint32_t)(uintptr_t)buf;
    args[2] = n;
    return td_semihost(op, args) == 0; /* returns the count NOT transferred */
}

static int16_t clip[TD_FE_CLIP_SAMPLES];
static float feat_f[TD_FE_FRAMES * TD_FE_OUT];
static int8_t feat_q[TD_FE_FRAMES * TD_FE_OUT];
static td_frontend_scratch_t scratch;
static uint32_t ticks[1];

/* SysTick at the processor clock, free-running down from 2^24 - 1 (QEMU -icount shift=0
 * makes its ticks instructions * clock / 1 GHz) */
#define TD_SYST_CSR (*(volatile uint32_t *)0xE000E010u)
#define TD_SYST_RVR (*(volatile uint32_t *)0xE000E014u)
#define TD_SYST_CVR (*(volatile uint32_t *)0xE000E018u)

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

/* ---- minimal start-up: vector table, .data/.bss init, FPU enable ---- */
extern uint32_t _sidata, _sdata, _edata, _sbss, _ebss, _estack;

void td_reset_handler(void);
static void td_fault_handler(void)
{
    td_exit(0);
}

__attribute__((section(".vectors"), used)) static void (*const td_vectors[16])(void) = {
    (void (*)(void))(uintptr_t)&_estack, td_reset_handler, td_fault_handler, td_fault_handler,
    td_fault_handler, td_fault_handler, td_fault_handler, 0, 0, 0, 0, td_fault_handler,
    td_fault_handler, 0, td_fault_handler, td_fault_handler,
};

void td_reset_handler(void)
{
    uint32_t *src = &_sidata, *dst = &_sdata;
    while (dst < &_edata) {
        *dst++ = *src++;
    }
    for (dst = &_sbss; dst < &_ebss; dst++) {
        *dst = 0;
    }
#if defined(__ARM_FP)
    *(volatile uint32_t *)0xE000ED88u |= (0xFu << 20); /* CPACR: CP10, CP11 full access */
    __asm__ volatile("dsb\n\tisb");
#endif
    td_exit(main() == 0);
}
