/*
 * Nordic nRF51 / nRF52 legacy UART0 (micro:bit v1 in QEMU, nRF52840 DK on hardware): the
 * register offsets are the same on both. Defines: TD_UART_BASE, TD_UART_TX_PIN,
 * TD_UART_RX_PIN (pin numbers; 32 + n for P1.n on the nRF52840), TD_UART_BAUD, TD_QEMU
 * (QEMU models no crystal: skip starting it).
 */
#include "td_cortexm.h"
#include "td_platform.h"

#ifndef TD_UART_BASE
#define TD_UART_BASE 0x40002000u
#endif
#ifndef TD_UART_BAUD
#define TD_UART_BAUD 115200u
#endif
/* BAUDRATE register values from the nRF51/nRF52 reference manuals */
#if TD_UART_BAUD == 9600u
#define TD_NRF_BAUDRATE 0x00275000u
#elif TD_UART_BAUD == 19200u
#define TD_NRF_BAUDRATE 0x004EA000u
#elif TD_UART_BAUD == 38400u
#define TD_NRF_BAUDRATE 0x009D5000u
#elif TD_UART_BAUD == 57600u
#define TD_NRF_BAUDRATE 0x00EBF000u
#elif TD_UART_BAUD == 115200u
#define TD_NRF_BAUDRATE 0x01D7E000u
#elif TD_UART_BAUD == 230400u
#define TD_NRF_BAUDRATE 0x03AFB000u
#elif TD_UART_BAUD == 460800u
#define TD_NRF_BAUDRATE 0x075F7000u
#elif TD_UART_BAUD == 921600u
#define TD_NRF_BAUDRATE 0x0EBED000u
#elif TD_UART_BAUD == 1000000u
#define TD_NRF_BAUDRATE 0x10000000u
#else
#error "TD_UART_BAUD is not a rate the nRF UART supports"
#endif
#if !defined(TD_UART_TX_PIN) || !defined(TD_UART_RX_PIN)
#error "TD_UART_TX_PIN and TD_UART_RX_PIN must be defined (board file uart.tx_pin/rx_pin)"
#endif

#define UART_STARTRX TD_REG32(TD_UART_BASE + 0x000u)
#define UART_STARTTX TD_REG32(TD_UART_BASE + 0x008u)
#define UART_RXDRDY TD_REG32(TD_UART_BASE + 0x108u)
#define UART_TXDRDY TD_REG32(TD_UART_BASE + 0x11Cu)
#define UART_ENABLE TD_REG32(TD_UART_BASE + 0x500u)
#define UART_PSELTXD TD_REG32(TD_UART_BASE + 0x50Cu)
#define UART_PSELRXD TD_REG32(TD_UART_BASE + 0x514u)
#define UART_RXD TD_REG32(TD_UART_BASE + 0x518u)
#define UART_TXD TD_REG32(TD_UART_BASE + 0x51Cu)
#define UART_BAUDRATE TD_REG32(TD_UART_BASE + 0x524u)

#define CLOCK_HFCLKSTART TD_REG32(0x40000000u)
#define CLOCK_HFCLKSTARTED TD_REG32(0x40000100u)
#define GPIO_BASE(pin) ((pin) >= 32u ? 0x50000300u : 0x50000000u) /* nRF52840 P1 / P0 */
#define GPIO_PIN_CNF(pin) TD_REG32(GPIO_BASE(pin) + 0x700u + 4u * ((pin) & 31u))
#define GPIO_OUTSET(pin) TD_REG32(GPIO_BASE(pin) + 0x508u)

void td_platform_init(void)
{
#if !(defined(TD_QEMU) && TD_QEMU)
    /* the UART's baud rate is only accurate on the external crystal */
    CLOCK_HFCLKSTARTED = 0;
    CLOCK_HFCLKSTART = 1;
    while (CLOCK_HFCLKSTARTED == 0u) {
    }
    /* TX pin driven high (idle) as an output, RX an input with its buffer connected */
    GPIO_OUTSET(TD_UART_TX_PIN) = 1u << (TD_UART_TX_PIN & 31u);
    GPIO_PIN_CNF(TD_UART_TX_PIN) = 1u;
    GPIO_PIN_CNF(TD_UART_RX_PIN) = 0u;
#endif
    /* PSEL: pin number (bit 5 = port on the nRF52840), bit 31 = 0 connects */
    UART_PSELTXD = (uint32_t)TD_UART_TX_PIN;
    UART_PSELRXD = (uint32_t)TD_UART_RX_PIN;
    UART_BAUDRATE = TD_NRF_BAUDRATE;
    UART_ENABLE = 4u;
    UART_TXDRDY = 0;
    UART_RXDRDY = 0;
    UART_STARTTX = 1u;
    UART_STARTRX = 1u;
    td_cortexm_cycles_init();
}

void td_uart_write(const uint8_t *buf, uint32_t n)
{
    for (uint32_t i = 0; i < n; ++i) {
        UART_TXDRDY = 0;
        UART_TXD = buf[i];
        while (UART_TXDRDY == 0u) {
        }
    }
}

int td_uart_read(uint8_t *byte)
{
    if (UART_RXDRDY == 0u)
        return 0;
    UART_RXDRDY = 0;
    *byte = (uint8_t)UART_RXD;
    return 1;
}
