/*
 * A fake register block for host tests of chip drivers (start-up, clocks, pins, UART, any
 * peripheral). Compile the driver for the host with -DTD_FAKE_REGS=1: its td_reg_read /
 * td_reg_write (firmware/platform/cortexm/td_cortexm.h) then land here, and every access is
 * printed to stdout in order, one line each:
 *
 *     W <addr> <value>     a write
 *     R <addr> <value>     a read and the value it returned
 *     M <label>            a marker the test program wrote (td_fake_mark)
 *
 * Registers hold what was last written (0 at first, or what td_fake_poke set). A chip model
 * (td_fake_set_model) makes them behave: a write hook updates other registers (a "start" task
 * sets its "started" event, an enable bit sets its ready bit), and may refuse a write the
 * reference manual says the chip ignores. A polling loop that never sees its bit change is
 * reported as "STUCK <addr>" and the program exits with status 3 instead of hanging.
 * tests/fakeregs.py compiles and runs such a program and parses the log.
 */
#ifndef TD_FAKE_REGS_H
#define TD_FAKE_REGS_H

#include <stdint.h>

/* Called after each write is logged, with the value the register held before; the hook may
 * td_fake_poke() this or other registers (poke is not logged). */
typedef void (*td_fake_write_hook_t)(uint32_t addr, uint32_t value, uint32_t before);

uint32_t td_reg_read(uint32_t addr);
void td_reg_write(uint32_t addr, uint32_t value);

void td_fake_set_model(td_fake_write_hook_t on_write);
/* set / get a register without logging (initial state, chip model) */
void td_fake_poke(uint32_t addr, uint32_t value);
uint32_t td_fake_peek(uint32_t addr);
/* a marker line in the log, e.g. between phases of the test */
void td_fake_mark(const char *label);

#endif /* TD_FAKE_REGS_H */
