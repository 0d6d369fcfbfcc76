/* Shared Cortex-M support used by the family files (not part of the public platform API). */
#ifndef TD_CORTEXM_H
#define TD_CORTEXM_H

#include <stdint.h>

#define TD_REG32(addr) (*(volatile uint32_t *)(uintptr_t)(addr))

/* Starts the cycle counter: DWT CYCCNT when the board asks for it (TD_CYCLE_COUNTER_DWT) and it
 * counts (QEMU implements no DWT: it falls back), else SysTick at the processor clock with a
 * 24-bit reload, extended to 32 bits by its interrupt. */
void td_cortexm_cycles_init(void);

#endif /* TD_CORTEXM_H */
