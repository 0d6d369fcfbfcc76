/*
 * eembc: the firmware side of the EEMBC benchmark runner (MLPerf Tiny, performance mode).
 * The runner loads the input with `db` commands, asks for `infer N W` and reads the timing
 * (m-lap-us-...) and the dequantized outputs (m-results-[...]); td_eembc.h has the protocol's
 * invariants, docs/eembc.md how to point the runner at a board.
 */
#include <stdint.h>

#include "td_eembc.h"
#include "td_platform.h"

static td_eembc_t app;

int main(void)
{
    td_platform_init();
    td_platform_set_fault_hook(td_eembc_report_fault);
    td_eembc_init(&app);
    for (;;) {
        uint8_t c;
        while (td_uart_read(&c))
            td_eembc_feed(&app, c);
        td_eembc_clock_update(&app);
    }
}
