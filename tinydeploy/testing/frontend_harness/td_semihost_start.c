/*
 * td_semihost_start.c: the minimal start-up of the bare-metal front-end harnesses (vector
 * table, .data/.bss initialisation, FPU enable, then main; any fault exits with status 1
 * through semihosting). Linked with fe_semihost_main.c or fe_micro_semihost_main.c; their
 * linker scripts define _sidata, _sdata, _edata, _sbss, _ebss, _estack and keep .vectors.
 */
#include <stdint.h>

#include "td_semihost.h"

int main(void);

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
