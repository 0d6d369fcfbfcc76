/*
 * td_semihost.h: what the bare-metal front-end harnesses (fe_semihost_main.c,
 * fe_micro_semihost_main.c) need to talk to the host on QEMU: the ARM semihosting calls they
 * use (open, read/write a whole buffer, close, exit with a status) and the SysTick registers
 * they time with. Static inline: the harness main and td_semihost_start.c each include it
 * and use what they need.
 */
#ifndef TD_SEMIHOST_H
#define TD_SEMIHOST_H

#include <stdint.h>

#define SYS_OPEN 0x01
#define SYS_CLOSE 0x02
#define SYS_WRITE 0x05
#define SYS_READ 0x06
#define SYS_EXIT 0x18

/* SysTick at the processor clock, free-running down from 2^24 - 1 (QEMU -icount shift=0
 * makes its ticks instructions * clock / 1 GHz) */
#define TD_SYST_CSR (*(volatile uint32_t *)0xE000E010u)
#define TD_SYST_RVR (*(volatile uint32_t *)0xE000E014u)
#define TD_SYST_CVR (*(volatile uint32_t *)0xE000E018u)

static inline int32_t td_semihost(int32_t op, void *arg)
{
    register int32_t r0 __asm__("r0") = op;
    register void *r1 __asm__("r1") = arg;
    __asm__ volatile("bkpt 0xAB" : "+r"(r0) : "r"(r1) : "memory");
    return r0;
}

static inline void td_exit(int ok)
{
    /* ADP_Stopped_ApplicationExit -> exit 0; ADP_Stopped_RunTimeErrorUnknown -> exit 1 */
    td_semihost(SYS_EXIT, (void *)(uintptr_t)(ok ? 0x20026 : 0x20023));
    for (;;) {
    }
}

/* mode: 1 = "rb", 5 = "wb"; len = strlen(name). A negative result: the file did not open. */
static inline int32_t td_open(const char *name, uint32_t len, int32_t mode)
{
    uint32_t args[3];
    args[0] = (uint32_t)(uintptr_t)name;
    args[1] = (uint32_t)mode;
    args[2] = len;
    return td_semihost(SYS_OPEN, args);
}

/* SYS_READ or SYS_WRITE of all n bytes of buf: 1 when every byte moved, else 0. */
static inline int td_xfer(int32_t op, int32_t fd, void *buf, uint32_t n)
{
    uint32_t args[3];
    args[0] = (uint32_t)fd;
    args[1] = (uint32_t)(uintptr_t)buf;
    args[2] = n;
    return td_semihost(op, args) == 0; /* returns the count NOT transferred */
}

#endif /* TD_SEMIHOST_H */
