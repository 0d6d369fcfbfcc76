/*
 * td_platform: the few things firmware needs from a chip family (docs/interfaces.md,
 * "Platform API"). One implementation per family in firmware/platform/<family>/; Cortex-M
 * families share startup, faults, cycle counter and exit in platform/cortexm/.
 *
 * Board values arrive as -D defines generated from the board file by
 * tinydeploy.build.toolchain.platform_defines() (listed in docs/interfaces.md).
 */
#ifndef TD_PLATFORM_H
#define TD_PLATFORM_H

#include <stdint.h>

/* Clocks, UART and cycle counter; call first in main(). */
void td_platform_init(void);
/* Blocking write of n bytes to the serial port. */
void td_uart_write(const uint8_t *buf, uint32_t n);
/* Non-blocking read: 1 if a byte was stored in *byte, 0 if none was waiting. */
int td_uart_read(uint8_t *byte);
/* Free-running counter, wraps at 2^32; unit given by td_cycles_unit(). */
uint32_t td_cycles_now(void);
/* "cycles" (DWT, or SysTick at the processor clock), "instructions" or "ns" (host). */
const char *td_cycles_unit(void);
/* Ends the program: semihosting exit under QEMU (status becomes QEMU's exit status), process
 * exit on the host, interrupts off and a spin loop on a real board. */
void td_platform_exit(int status);

/* Stack use. The Cortex-M startup paints the whole stack region with TD_STACK_PAINT before
 * any other code runs; td_stack_peak() is then the high-water mark: the bytes from the top of
 * the stack down to the lowest word that no longer holds the pattern (a word that happens to
 * be written with the pattern itself can only make it read low by that word).
 * td_stack_size() is the reserve (the linker script's __stack_size__). Both are 0 where the
 * platform does not own the stack (the host build). */
#define TD_STACK_PAINT 0x5AFE57ACu
uint32_t td_stack_peak(void);
uint32_t td_stack_size(void);

/* Fault reports. The platform describes a fault (a Cortex-M fault handler, a fatal signal on
 * the host) as one NUL-terminated line of text and hands it to the hook the application
 * installed, then exits; the platform knows no protocol. The link layer installs a hook that
 * sends a LOG frame (td_link_init), the eembc app one that writes an `e-[...]` line. With no
 * hook installed the report is dropped. The hook runs in fault context: it must not return
 * to the faulting code, allocate or wait for input. */
typedef void (*td_fault_hook_t)(const char *text);
void td_platform_set_fault_hook(td_fault_hook_t hook);
/* Called by the platform layer only: passes ``text`` to the installed hook, if any. */
void td_platform_report_fault(const char *text);

#ifndef TD_BOARD_ID
#define TD_BOARD_ID "unknown"
#endif

#endif /* TD_PLATFORM_H */
