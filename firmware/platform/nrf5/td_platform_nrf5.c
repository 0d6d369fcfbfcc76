/*
 * Nordic nRF51 / nRF52 legacy UART0 (micro:bit v1 in QEMU and on the chip, nRF52840 DK and
 * Arduino Nano 33 BLE on the chip): the register offsets are the same on both.
 *
 * Defines (board_defines): TD_UART_BASE, TD_UART_TX_PIN, TD_UART_RX_PIN (pin numbers; 32 + n
 * for P1.n on the nRF52840), TD_UART_BAUD, TD_MCU_NRF52840 (the chip's start-up: debug-port
 * unlock, instruction cache), TD_CYCLE_COUNTER_TIMER0 (the nRF51 has no SysTick and no DWT:
 * TIMER0 counts the 16 MHz clock), TD_QEMU (the emulator's build: QEMU models no crystal and
 * no GPIO configuration, so neither is touched).
 *
 * Order on the chip (nRF51 RM 3.0 "CLOCK", "UART"; nRF52840 PS 1.7 "CLOCK", "UART", "GPIO"):
 * the high-frequency crystal is started and running before the UART (its baud rate is only
 * accurate on the crystal); both pins are configured, then selected (PSEL), before ENABLE.
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

#if defined(TD_QEMU) && TD_QEMU
#define TD_ON_CHIP 0 /* the emulator's build */
#else
#define TD_ON_CHIP 1
#endif

#define UART_STARTRX (TD_UART_BASE + 0x000u)
#define UART_STOPRX (TD_UART_BASE + 0x004u)
#define UART_STARTTX (TD_UART_BASE + 0x008u)
#define UART_STOPTX (TD_UART_BASE + 0x00Cu)
#define UART_RXDRDY (TD_UART_BASE + 0x108u)
#define UART_TXDRDY (TD_UART_BASE + 0x11Cu)
#define UART_ENABLE (TD_UART_BASE + 0x500u)
#define UART_PSELTXD (TD_UART_BASE + 0x50Cu)
#define UART_PSELRXD (TD_UART_BASE + 0x514u)
#define UART_RXD (TD_UART_BASE + 0x518u)
#define UART_TXD (TD_UART_BASE + 0x51Cu)
#define UART_BAUDRATE (TD_UART_BASE + 0x524u)

#define CLOCK_HFCLKSTART 0x40000000u
#define CLOCK_HFCLKSTARTED 0x40000100u
#define GPIO_BASE(pin) ((pin) >= 32u ? 0x50000300u : 0x50000000u) /* nRF52840 P1 / P0 */
#define GPIO_PIN_CNF(pin) (GPIO_BASE(pin) + 0x700u + 4u * ((pin) & 31u))
#define GPIO_OUTSET(pin) (GPIO_BASE(pin) + 0x508u)
/* PIN_CNF: DIR bit0 (1 = output), INPUT bit1 (0 = buffer connected), PULL bits 3:2 (3 = up) */
#define PIN_CNF_OUTPUT 0x1u
#define PIN_CNF_INPUT_PULLUP (3u << 2)

#if defined(TD_MCU_NRF52840) && TD_MCU_NRF52840
#define UICR_APPROTECT 0x10001208u    /* PALL bits 7:0; 0x5A = HwDisabled */
#define APPROTECT_DISABLE 0x40000558u /* 0x5A = SwDisable */
#define NVMC_ICACHECNF 0x4001E540u    /* bit0 CACHEEN */

void td_platform_startup(void)
{
    /* Revision 3 and later re-lock the debug port at every reset unless the firmware opens it
     * again: when UICR.APPROTECT says "disabled" (0x5A, what `nrfjprog --recover` leaves),
     * APPROTECT.DISABLE must be written with the same key, or the next programming fails. */
    if ((td_reg_read(UICR_APPROTECT) & 0xFFu) == 0x5Au)
        td_reg_write(APPROTECT_DISABLE, 0x5Au);
    /* the instruction cache is off after reset: with it the 64 MHz core waits less on flash */
    td_reg_write(NVMC_ICACHECNF, td_reg_read(NVMC_ICACHECNF) | 1u);
}
#endif

#if defined(TD_CYCLE_COUNTER_TIMER0) && TD_CYCLE_COUNTER_TIMER0
#define TIMER0_START 0x40008000u
#define TIMER0_CLEAR 0x4000800Cu
#define TIMER0_CAPTURE0 0x40008040u
#define TIMER0_MODE 0x40008504u
#define TIMER0_BITMODE 0x40008508u
#define TIMER0_PRESCALER 0x40008510u
#define TIMER0_CC0 0x40008540u

void td_cortexm_cycles_init(void)
{
    /* timer mode, 32 bits, prescaler 0: counts HFCLK (16 MHz, the nRF51's core clock) */
    td_reg_write(TIMER0_MODE, 0u);
    td_reg_write(TIMER0_BITMODE, 3u);
    td_reg_write(TIMER0_PRESCALER, 0u);
    td_reg_write(TIMER0_CLEAR, 1u);
    td_reg_write(TIMER0_START, 1u);
}

uint32_t td_cycles_now(void)
{
    td_reg_write(TIMER0_CAPTURE0, 1u);
    return td_reg_read(TIMER0_CC0);
}
#endif

void td_platform_init(void)
{
#if TD_ON_CHIP
    /* a bootloader may leave the UART (as UARTE, ENABLE = 8) receiving: stop it and disable
     * it before it is set up again */
    td_reg_write(UART_STOPRX, 1u);
    td_reg_write(UART_STOPTX, 1u);
    td_reg_write(UART_ENABLE, 0u);
    /* the UART's baud rate is only accurate on the external crystal */
    td_reg_write(CLOCK_HFCLKSTARTED, 0u);
    td_reg_write(CLOCK_HFCLKSTART, 1u);
    while (td_reg_read(CLOCK_HFCLKSTARTED) == 0u) {
    }
    /* TX driven high (idle) as an output; RX an input with its buffer connected and the
     * pull-up on, so that an unconnected line reads idle rather than garbage frames */
    td_reg_write(GPIO_OUTSET(TD_UART_TX_PIN), 1u << (TD_UART_TX_PIN & 31u));
    td_reg_write(GPIO_PIN_CNF(TD_UART_TX_PIN), PIN_CNF_OUTPUT);
    td_reg_write(GPIO_PIN_CNF(TD_UART_RX_PIN), PIN_CNF_INPUT_PULLUP);
#endif
    /* PSEL: pin number (bit 5 = port on the nRF52840), bit 31 = 0 connects */
    td_reg_write(UART_PSELTXD, (uint32_t)TD_UART_TX_PIN);
    td_reg_write(UART_PSELRXD, (uint32_t)TD_UART_RX_PIN);
    td_reg_write(UART_BAUDRATE, TD_NRF_BAUDRATE);
    td_reg_write(UART_ENABLE, 4u);
    td_reg_write(UART_TXDRDY, 0u);
    td_reg_write(UART_RXDRDY, 0u);
    td_reg_write(UART_STARTTX, 1u);
    td_reg_write(UART_STARTRX, 1u);
    td_cortexm_cycles_init();
}

void td_uart_write(const uint8_t *buf, uint32_t n)
{
    for (uint32_t i = 0; i < n; ++i) {
        td_reg_write(UART_TXDRDY, 0u);
        td_reg_write(UART_TXD, buf[i]);
        while (td_reg_read(UART_TXDRDY) == 0u) {
        }
    }
}

int td_uart_read(uint8_t *byte)
{
    if (td_reg_read(UART_RXDRDY) == 0u)
        return 0;
    td_reg_write(UART_RXDRDY, 0u);
    *byte = (uint8_t)td_reg_read(UART_RXD);
    return 1;
}
