/*
 * td_dsp_test_rt.c - a bare-metal runtime for kernel test and benchmark programs on QEMU's
 * mps2-an386 (Cortex-M4F): vector table, reset (copy .data, clear .bss, enable the FPU),
 * SysTick as an instruction counter, and semihosting output and exit. Used by
 * tests/golden/test_dsp_target.py and benchmarks/bench_kernels.py, which generate main().
 *
 * Under `qemu-system-arm -icount shift=0` one instruction takes 1 ns of virtual time and the
 * SysTick counts the 25 MHz processor clock, so one tick is exactly 40 instructions.
 */
#include <stdint.h>

#include "td_dsp_test_rt.h"

extern uint32_t _sidata, _sdata, _edata, _sbss, _ebss, _estack;
int main(void);

#define TD_SYST_CSR (*(volatile uint32_t *)0xE000E010u)
#define TD_SYST_RVR (*(volatile uint32_t *)0xE000E014u)
#define TD_SYST_CVR (*(volatile uint32_t *)0xE000E018u)
#define TD_CPACR (*(volatile uint32_t *)0xE000ED88u)

static int32_t td_semihost(int32_t op, const void *arg)
{
    register int32_t r0 __asm__("r0") = op;
    register const void *r1 __asm__("r1") = arg;
    __asm__ volatile("bkpt 0xAB" : "+r"(r0) : "r"(r1) : "memory");
    return r0;
}

void td_rt_puts(const char *s)
{
    td_semihost(0x04, s); /* SYS_WRITE0 */
}

void td_rt_exit(int status)
{
    /* SYS_EXIT_EXTENDED: ADP_Stopped_ApplicationExit with the status */
    const uint32_t block[2] = { 0x20026u, (uint32_t)status };
    td_semihost(0x20, block);
    for (;;) {
    }
}

uint32_t td_rt_ticks(void)
{
    return TD_SYST_CVR;
}

uint32_t td_rt_elapsed(uint32_t start, uint32_t end)
{
    return (start - end) & 0xFFFFFFu; /* SysTick counts down, 24 bits */
}

void td_rt_reset(void)
{
    uint32_t *src = &_sidata, *dst = &_sdata;
    while (dst < &_edata) {
        *dst++ = *src++;
    }
    for (dst = &_sbss; dst < &_ebss; ++dst) {
        *dst = 0;
    }
    TD_CPACR |= 0xFu << 20; /* CP10, CP11 full access */
    __asm__ volatile("dsb\n\tisb" ::: "memory");
    TD_SYST_RVR = 0xFFFFFFu;
    TD_SYST_CVR = 0;
    TD_SYST_CSR = 5u; /* enable, processor clock, no interrupt */
    td_rt_exit(main());
}

static void td_rt_fault(void)
{
    td_rt_puts("FAULT\n");
    td_rt_exit(99);
}

__attribute__((section(".vectors"), used)) void (*const td_rt_vectors[16])(void) = {
    (void (*)(void))(uintptr_t)&_estack, td_rt_reset, td_rt_fault, td_rt_fault, td_rt_fault,
    td_rt_fault, td_rt_fault, 0, 0, 0, 0, td_rt_fault, td_rt_fault, 0, td_rt_fault,
    td_rt_fault,
};

/* hex output helpers */
static const char td_hex[] = "0123456789abcdef";

void td_rt_put_hex(const void *data, uint32_t n)
{
    static char line[129];
    const uint8_t *p = (const uint8_t *)data;
    while (n > 0) {
        uint32_t k = n < 64u ? n : 64u;
        for (uint32_t i = 0; i < k; ++i) {
            line[2 * i] = td_hex[p[i] >> 4];
            line[2 * i + 1] = td_hex[p[i] & 15u];
        }
        line[2 * k] = 0;
        td_rt_puts(line);
        p += k;
        n -= k;
    }
    td_rt_puts("\n");
}

void td_rt_put_u32(uint32_t v)
{
    char buf[12];
    int i = 11;
    buf[i] = 0;
    do {
        buf[--i] = (char)('0' + v % 10u);
        v /= 10u;
    } while (v != 0);
    td_rt_puts(buf + i);
}
