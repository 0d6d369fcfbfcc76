/*
 * Arm CMSDK APB UART boards (MPS2 AN386/AN500, MPS3 AN547; real and in QEMU).
 * Defines: TD_UART_BASE, TD_UART_BAUD, TD_CLOCK_HZ, TD_UART_CLOCK_HZ (the UART's APB clock,
 * default TD_CLOCK_HZ; on MPS3 FPGA images it is 25 MHz whatever the core clock),
 * TD_CYCLE_COUNTER_DWT, TD_QEMU. QEMU ignores the baud divider.
 */
#include "td_cortexm.h"
#include "td_platform.h"

#ifndef TD_UART_BASE
#error "TD_UART_BASE must be defined (from the board file's uart.base)"
#endif
#ifndef TD_UART_BAUD
#define TD_UART_BAUD 115200u
#endif
#ifndef TD_CLOCK_HZ
#error "TD_CLOCK_HZ must be defined (from the board file's clock_hz)"
#endif

#ifndef TD_UART_CLOCK_HZ
#define TD_UART_CLOCK_HZ TD_CLOCK_HZ
#endif

#define UART_DATA TD_REG32(TD_UART_BASE + 0x00u)
#define UART_STATE TD_REG32(TD_UART_BASE + 0x04u) /* bit0 TX full, bit1 RX full */
#define UART_CTRL TD_REG32(TD_UART_BASE + 0x08u)  /* bit0 TX enable, bit1 RX enable */
#define UART_BAUDDIV TD_REG32(TD_UART_BASE + 0x10u)

void td_platform_init(void)
{
    uint32_t div = (uint32_t)TD_UART_CLOCK_HZ / (uint32_t)TD_UART_BAUD;
    UART_BAUDDIV = div < 16u ? 16u : div; /* the CMSDK UART needs a divider of at least 16 */
    UART_CTRL = 0x3u;
    td_cortexm_cycles_init();
}

void td_uart_write(const uint8_t *buf, uint32_t n)
{
    for (uint32_t i = 0; i < n; ++i) {
        while (UART_STATE & 1u) {
        }
        UART_DATA = buf[i];
    }
}

int td_uart_read(uint8_t *byte)
{
    if (!(UART_STATE & 2u))
        return 0;
    *byte = (uint8_t)UART_DATA;
    return 1;
}
