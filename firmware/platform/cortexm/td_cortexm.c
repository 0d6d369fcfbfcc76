/*
 * Cortex-M startup, vector table, stack painting, fault report, cycle counter and exit, shared
 * by the cmsdk, stm32f4 and nrf5 families. C only: the vector table is a const array placed
 * first in flash by the rendered linker script (templates/linker.ld.j2), which also provides the symbols
 * used here. Invariants: the FPU (and MVE) is enabled before any C code that may use it;
 * .data is copied and .bss zeroed before main(); the stack sits at the bottom of RAM so an
 * overflow faults instead of corrupting data.
 */
#include <stdint.h>

#include "td_cortexm.h"
#include "td_fmt.h"
#include "td_platform.h"

extern uint32_t __data_load__[], __data_start__[], __data_end__[];
extern uint32_t __bss_start__[], __bss_end__[];
extern uint32_t __stack_limit__[], __stack_top__[];

int main(void);
void Reset_Handler(void);
void SysTick_Handler(void);
void td_fault_entry(void);

#define SCB_CPUID 0xE000ED00u
#define SCB_ICSR 0xE000ED04u
#define SCB_VTOR 0xE000ED08u
#define SCB_CPACR 0xE000ED88u
#define SCB_HFSR 0xE000ED2Cu
#define SCB_CFSR 0xE000ED28u
#define SCB_BFAR 0xE000ED38u
#define SYST_CSR 0xE000E010u
#define SYST_RVR 0xE000E014u
#define SYST_CVR 0xE000E018u
#define NVIC_ICER0 0xE000E180u
#define NVIC_ICPR0 0xE000E280u
#define DEMCR 0xE000EDFCu
#define DWT_CTRL 0xE0001000u
#define DWT_CYCCNT 0xE0001004u
#define DWT_LAR 0xE0001FB0u

/* The chip's external interrupt count (board_defines: TD_NUM_IRQS, e.g. 48 on the nRF52840,
 * 82 on the STM32F405/407), so that every interrupt the chip can raise has an entry; the
 * linker script aligns the table to its size rounded up to a power of two (VTOR's rule). */
#ifndef TD_NUM_IRQS
#define TD_NUM_IRQS 32
#endif
#if TD_NUM_IRQS < 32 || TD_NUM_IRQS > 240
#error "TD_NUM_IRQS must be 32..240"
#endif
/* the first 32 are td_irq_<n> below; the rest of the chip's entries report a fault */
#define TD_IRQ_REST (TD_NUM_IRQS - 32)
#define TD_X1(v) v,
#define TD_X2(v) TD_X1(v) TD_X1(v)
#define TD_X4(v) TD_X2(v) TD_X2(v)
#define TD_X8(v) TD_X4(v) TD_X4(v)
#define TD_X16(v) TD_X8(v) TD_X8(v)
#define TD_X32(v) TD_X16(v) TD_X16(v)
#define TD_X64(v) TD_X32(v) TD_X32(v)
#define TD_X128(v) TD_X64(v) TD_X64(v)
/* TD_IRQ_REST entries, written as the sum of its binary digits */
#if TD_IRQ_REST & 128
#define TD_IRQS_128(v) TD_X128(v)
#else
#define TD_IRQS_128(v)
#endif
#if TD_IRQ_REST & 64
#define TD_IRQS_64(v) TD_X64(v)
#else
#define TD_IRQS_64(v)
#endif
#if TD_IRQ_REST & 32
#define TD_IRQS_32(v) TD_X32(v)
#else
#define TD_IRQS_32(v)
#endif
#if TD_IRQ_REST & 16
#define TD_IRQS_16(v) TD_X16(v)
#else
#define TD_IRQS_16(v)
#endif
#if TD_IRQ_REST & 8
#define TD_IRQS_8(v) TD_X8(v)
#else
#define TD_IRQS_8(v)
#endif
#if TD_IRQ_REST & 4
#define TD_IRQS_4(v) TD_X4(v)
#else
#define TD_IRQS_4(v)
#endif
#if TD_IRQ_REST & 2
#define TD_IRQS_2(v) TD_X2(v)
#else
#define TD_IRQS_2(v)
#endif
#if TD_IRQ_REST & 1
#define TD_IRQS_1(v) TD_X1(v)
#else
#define TD_IRQS_1(v)
#endif
#define TD_IRQS(v)                                                                              \
    TD_IRQS_128(v) TD_IRQS_64(v) TD_IRQS_32(v) TD_IRQS_16(v) TD_IRQS_8(v) TD_IRQS_4(v)          \
        TD_IRQS_2(v) TD_IRQS_1(v)

typedef void (*td_vector_t)(void);

/* External interrupt n's handler: td_irq_<n>, weak, the fault report unless a driver defines
 * it; so a firmware enables only the interrupts whose drivers it links. */
#define TD_IRQ_DECL(n) void td_irq_##n(void) __attribute__((weak, alias("td_fault_entry")));
#define TD_IRQ_DECL8(a, b, c, d, e, f, g, h)                                                  \
    TD_IRQ_DECL(a) TD_IRQ_DECL(b) TD_IRQ_DECL(c) TD_IRQ_DECL(d) TD_IRQ_DECL(e) TD_IRQ_DECL(f) \
    TD_IRQ_DECL(g) TD_IRQ_DECL(h)
TD_IRQ_DECL8(0, 1, 2, 3, 4, 5, 6, 7)
TD_IRQ_DECL8(8, 9, 10, 11, 12, 13, 14, 15)
TD_IRQ_DECL8(16, 17, 18, 19, 20, 21, 22, 23)
TD_IRQ_DECL8(24, 25, 26, 27, 28, 29, 30, 31)
#define TD_IRQ8_0 td_irq_0, td_irq_1, td_irq_2, td_irq_3, td_irq_4, td_irq_5, td_irq_6, td_irq_7
#define TD_IRQ8_8 td_irq_8, td_irq_9, td_irq_10, td_irq_11, td_irq_12, td_irq_13, td_irq_14, \
    td_irq_15
#define TD_IRQ8_16 td_irq_16, td_irq_17, td_irq_18, td_irq_19, td_irq_20, td_irq_21, td_irq_22, \
    td_irq_23
#define TD_IRQ8_24 td_irq_24, td_irq_25, td_irq_26, td_irq_27, td_irq_28, td_irq_29, td_irq_30, \
    td_irq_31
#define TD_IRQ8(n) TD_IRQ8_##n

/* Entry 0 is the initial stack pointer; unexpected interrupts land in the fault report. */
__attribute__((section(".isr_vector"), used))
const td_vector_t td_vector_table[16 + TD_NUM_IRQS] = {
    (td_vector_t)(void *)__stack_top__,
    Reset_Handler,
    td_fault_entry, /* NMI */
    td_fault_entry, /* HardFault */
    td_fault_entry, /* MemManage */
    td_fault_entry, /* BusFault */
    td_fault_entry, /* UsageFault */
    td_fault_entry, /* SecureFault (v8-M) */
    0, 0, 0,
    td_fault_entry, /* SVCall */
    td_fault_entry, /* DebugMonitor */
    0,
    td_fault_entry, /* PendSV */
    SysTick_Handler,
    /* TD_NUM_IRQS external interrupts: the first 32 are td_irq_<n>, a weak alias of the
     * fault report that a driver replaces by defining it (the nRF52840 PDM microphone:
     * td_irq_29); the chip's others report a fault */
    TD_IRQ8(0), TD_IRQ8(8), TD_IRQ8(16), TD_IRQ8(24),
    TD_IRQS(td_fault_entry)
};

/* A family whose chip needs early start-up code defines this (td_cortexm.h). */
__attribute__((weak)) void td_platform_startup(void) {}

static void td_data_init(void) __attribute__((noinline));
static void td_data_init(void)
{
    /* volatile stores: the compiler would otherwise turn these loops into calls to newlib's
     * memcpy and memset, which the startup alone would then pull into every firmware */
    const uint32_t *src = __data_load__;
    for (volatile uint32_t *dst = __data_start__; dst < __data_end__;)
        *dst++ = *src++;
    for (volatile uint32_t *dst = __bss_start__; dst < __bss_end__;)
        *dst++ = 0;
}

__attribute__((noreturn)) void Reset_Handler(void)
{
    /* Paint the stack below this frame, here and not in a function (which would paint over
     * its own frame); the volatile store keeps the compiler from making it a memset call. */
    {
        uint32_t *sp;
        __asm volatile("mov %0, sp" : "=r"(sp));
        for (volatile uint32_t *w = __stack_limit__; w < sp; ++w)
            *w = TD_STACK_PAINT;
    }
#if defined(__ARM_FP) || defined(__ARM_FEATURE_MVE)
    /* CP10/CP11 full access, before any code that the compiler may give FP or MVE
     * instructions (td_data_init is a separate, non-inlined function for that reason). */
    TD_REG32(SCB_CPACR) |= (0xFu << 20);
    __asm volatile("dsb\n isb" ::: "memory");
#endif
#if !defined(__ARM_ARCH_6M__)
    /* Point VTOR at this image's table: an application linked behind a bootloader (e.g. at
     * 0x10000 on the Arduino Nano 33 BLE) must not keep the bootloader's vectors. ARMv6-M
     * (Cortex-M0) has no VTOR; its images start at the flash origin. */
    TD_REG32(SCB_VTOR) = (uint32_t)(uintptr_t)td_vector_table;
    __asm volatile("dsb\n isb" ::: "memory");
#endif
    /* A bootloader (the Nano 33 BLE's) may leave interrupts enabled or pending (its RTC1):
     * every one off and cleared, so none lands in the fault handler. */
    for (uint32_t i = 0; i < (TD_NUM_IRQS + 31u) / 32u; ++i) {
        TD_REG32(NVIC_ICER0 + 4u * i) = 0xFFFFFFFFu;
        TD_REG32(NVIC_ICPR0 + 4u * i) = 0xFFFFFFFFu;
    }
    /* chip start-up before anything touches RAM variables (no .data/.bss yet) */
    td_platform_startup();
    td_data_init();
    td_platform_exit(main());
    for (;;) {
    }
}

uint32_t td_stack_peak(void)
{
    const uint32_t *w = __stack_limit__;
    while (w < __stack_top__ && *w == TD_STACK_PAINT)
        ++w;
    return (uint32_t)((uintptr_t)__stack_top__ - (uintptr_t)w);
}

uint32_t td_stack_size(void)
{
    return (uint32_t)((uintptr_t)__stack_top__ - (uintptr_t)__stack_limit__);
}

/* ---- semihosting exit and spin ---- */

#if defined(TD_QEMU) && TD_QEMU
uint32_t td_semihost(uint32_t op, volatile void *arg)
{
    register uint32_t r0 __asm("r0") = op;
    register volatile void *r1 __asm("r1") = arg;
    __asm volatile("bkpt 0xAB" : "+r"(r0) : "r"(r1) : "memory");
    return r0;
}
#endif

void td_platform_exit(int status)
{
#if defined(TD_QEMU) && TD_QEMU
    /* QEMU closes the pty when it exits and the host loses whatever it has not read yet
     * (the last reply, a fault report): give it ~0.1 s first. SYS_CLOCK (0x10) counts
     * centiseconds of the emulator's time; the iteration bound covers a clock that stalls. */
    volatile uint32_t block[2] = {0x20026u, (uint32_t)status};
    uint32_t c0 = td_semihost(0x10u, 0);
    for (uint32_t i = 0; c0 != 0xFFFFFFFFu && i < 2000000u; ++i) {
        if (td_semihost(0x10u, 0) - c0 >= 10u)
            break;
    }
    /* SYS_EXIT_EXTENDED (0x20): {ADP_Stopped_ApplicationExit, status}; QEMU exits with it */
    (void)td_semihost(0x20u, block);
#else
    (void)status;
#endif
    __asm volatile("cpsid i" ::: "memory");
    for (;;) {
        __asm volatile("wfi");
    }
}

/* ---- cycle counter ---- */

static volatile uint32_t td_systick_wraps;
static uint32_t td_systick_reload = 0x00FFFFFFu; /* counts per wrap - 1 */
static volatile uint8_t td_systick_ticking;       /* td_cortexm_tick() is due on each wrap */

/* The periodic tick's work: nothing unless a part of the firmware defines it (the virtual
 * microphone). A direct call, so the stack bound follows it. */
void td_cortexm_tick(void) __attribute__((weak));
void td_cortexm_tick(void) {}

void SysTick_Handler(void)
{
    td_systick_wraps++;
    if (td_systick_ticking)
        td_cortexm_tick();
}

void td_cortexm_systick_period(uint32_t ticks, int tick)
{
    TD_REG32(SYST_CSR) = 0u;
    td_systick_wraps = 0;
    td_systick_reload = (ticks - 1u) & 0x00FFFFFFu;
    td_systick_ticking = (uint8_t)(tick != 0);
    TD_REG32(SYST_RVR) = td_systick_reload;
    TD_REG32(SYST_CVR) = 0;
    TD_REG32(SYST_CSR) = 0x7u; /* processor clock, interrupt, enable */
}

#if !(defined(TD_CYCLE_COUNTER_TIMER0) && TD_CYCLE_COUNTER_TIMER0)
/* (a chip without SysTick and DWT, the nRF51, counts in its family file) */
static uint8_t td_use_dwt;

void td_cortexm_cycles_init(void)
{
#if defined(TD_CYCLE_COUNTER_DWT) && TD_CYCLE_COUNTER_DWT && (__ARM_ARCH >= 7)
    TD_REG32(DEMCR) |= (1u << 24); /* TRCENA */
    if (((TD_REG32(SCB_CPUID) >> 4) & 0xFFFu) == 0xC27u)
        TD_REG32(DWT_LAR) = 0xC5ACCE55u; /* Cortex-M7 locks the DWT */
    TD_REG32(DWT_CYCCNT) = 0;
    TD_REG32(DWT_CTRL) |= 1u;
    {
        uint32_t c0 = TD_REG32(DWT_CYCCNT);
        for (volatile int i = 0; i < 64; ++i) {
        }
        if (TD_REG32(DWT_CYCCNT) != c0) {
            td_use_dwt = 1;
            return;
        }
    }
    /* DWT not counting (QEMU implements none): fall back to SysTick */
#endif
    td_cortexm_systick_period(0x01000000u, 0);
}

uint32_t td_cycles_now(void)
{
    uint32_t primask, wraps, val;
    if (td_use_dwt)
        return TD_REG32(DWT_CYCCNT);
    __asm volatile("mrs %0, primask\n cpsid i" : "=r"(primask)::"memory");
    wraps = td_systick_wraps;
    val = TD_REG32(SYST_CVR);
    if (TD_REG32(SCB_ICSR) & (1u << 26)) {
        /* wrapped but the interrupt is not yet served: count the wrap here */
        val = TD_REG32(SYST_CVR);
        wraps++;
    }
    __asm volatile("msr primask, %0" ::"r"(primask) : "memory");
    return wraps * (td_systick_reload + 1u) + (td_systick_reload - val);
}
#endif

const char *td_cycles_unit(void) { return "cycles"; }

/* ---- faults: one LOG frame with the stacked registers, then exit(1) ---- */

__attribute__((naked)) void td_fault_entry(void)
{
    /* r0 = the stack the exception frame was pushed on (bit 2 of EXC_RETURN) */
    __asm volatile(
        "movs r0, #4\n"
        "mov r1, lr\n"
        "tst r0, r1\n"
        "beq 1f\n"
        "mrs r0, psp\n"
        "b 2f\n"
        "1: mrs r0, msp\n"
        "2: ldr r1, =td_fault_report\n"
        "bx r1\n"
        ".ltorg\n");
}

__attribute__((used, noreturn)) void td_fault_report(const uint32_t *frame);
__attribute__((used, noreturn)) void td_fault_report(const uint32_t *frame)
{
    static const char *const names[] = {"thread", "reset", "NMI", "HardFault", "MemManage",
                                        "BusFault", "UsageFault", "SecureFault"};
    char text[160];
    char *p = text, *end = text + sizeof text;
    uint32_t ipsr;
    __asm volatile("mrs %0, ipsr" : "=r"(ipsr));
    ipsr &= 0x1FFu;
    p = td_fmt_str(p, end, "fault ");
    if (ipsr < 8u) {
        p = td_fmt_str(p, end, names[ipsr]);
    } else {
        p = td_fmt_str(p, end, "exception ");
        p = td_fmt_u32(p, end, ipsr);
    }
    p = td_fmt_str(p, end, " pc=");
    p = td_fmt_hex(p, end, frame[6]);
    p = td_fmt_str(p, end, " lr=");
    p = td_fmt_hex(p, end, frame[5]);
    p = td_fmt_str(p, end, " sp=");
    p = td_fmt_hex(p, end, (uint32_t)(uintptr_t)frame);
#if __ARM_ARCH >= 7 && !defined(__ARM_ARCH_6M__)
    p = td_fmt_str(p, end, " cfsr=");
    p = td_fmt_hex(p, end, TD_REG32(SCB_CFSR));
    p = td_fmt_str(p, end, " hfsr=");
    p = td_fmt_hex(p, end, TD_REG32(SCB_HFSR));
    p = td_fmt_str(p, end, " bfar=");
    p = td_fmt_hex(p, end, TD_REG32(SCB_BFAR));
#endif
    (void)p;
    td_platform_report_fault(text);
    td_platform_exit(1);
    for (;;) {
    }
}
