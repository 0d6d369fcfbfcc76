/* Shared Cortex-M support used by the family files (not part of the public platform API). */
#ifndef TD_CORTEXM_H
#define TD_CORTEXM_H

#include <stdint.h>

#define TD_REG32(addr) (*(volatile uint32_t *)(uintptr_t)(addr))

/* Register accessors of the family drivers (start-up, clocks, pins, UART). On the chip they
 * are plain volatile loads and stores. Compiled with TD_FAKE_REGS (host tests only), they are
 * functions of a fake register block that records every access in order
 * (tests/fakeregs/td_fake_regs.h), so that a test can check the sequence against the
 * reference manual. */
#if defined(TD_FAKE_REGS)
uint32_t td_reg_read(uint32_t addr);
void td_reg_write(uint32_t addr, uint32_t value);
#else
static inline uint32_t td_reg_read(uint32_t addr)
{
    return *(volatile uint32_t *)(uintptr_t)addr;
}
static inline void td_reg_write(uint32_t addr, uint32_t value)
{
    *(volatile uint32_t *)(uintptr_t)addr = value;
}
#endif
/* read-modify-write helpers: one read, then one write */
#define td_reg_set(addr, bits) td_reg_write((addr), td_reg_read(addr) | (uint32_t)(bits))
#define td_reg_clear(addr, bits) td_reg_write((addr), td_reg_read(addr) & ~(uint32_t)(bits))

/* Chip start-up that must run before .data/.bss are initialised and before anything else
 * (debug-port unlock, caches); a family defines it when its chip needs one. Called from
 * Reset_Handler; the weak default does nothing. */
void td_platform_startup(void);

/* Starts the cycle counter: DWT CYCCNT when the board asks for it (TD_CYCLE_COUNTER_DWT) and it
 * counts (QEMU implements no DWT: it falls back), else SysTick at the processor clock with a
 * 24-bit reload, extended to 32 bits by its interrupt. A family whose chip has neither
 * (the nRF51: TD_CYCLE_COUNTER_TIMER0) defines this and td_cycles_now() itself. */
void td_cortexm_cycles_init(void);

/* SysTick as a periodic tick as well: an interrupt every `ticks` SysTick counts (processor
 * clock; at most 2^24) that, with `tick` non-zero, also calls td_cortexm_tick() (the virtual
 * microphone's block clock under QEMU defines it; the default does nothing). td_cycles_now()
 * stays a free-running count of the same clock. Call it once, after td_platform_init();
 * td_cortexm_tick runs in interrupt context. */
void td_cortexm_systick_period(uint32_t ticks, int tick);
void td_cortexm_tick(void);

#if defined(TD_QEMU) && TD_QEMU
/* One Arm semihosting call (op in r0, arg block in r1; returns r0): QEMU builds only, the
 * `bkpt 0xAB` faults without a debugger or emulator. */
uint32_t td_semihost(uint32_t op, volatile void *arg);
#endif

#endif /* TD_CORTEXM_H */
