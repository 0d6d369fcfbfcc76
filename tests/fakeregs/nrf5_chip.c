/*
 * Host test program: the nrf5 platform layer against a fake nRF51/nRF52 register block.
 * The model: CLOCK TASKS_HFCLKSTART raises EVENTS_HFCLKSTARTED, a byte written to UART TXD
 * raises EVENTS_TXDRDY, TIMER0 TASKS_CAPTURE[0] copies a counter that advances 1000 per
 * capture once the timer was started. argv[1]: the value of UICR.APPROTECT (hex).
 */
#include <stdio.h>
#include <stdlib.h>

#include "td_cortexm.h"
#include "td_fake_regs.h"
#include "td_platform.h"

#define UART_TXD (TD_UART_BASE + 0x51Cu)
#define UART_TXDRDY (TD_UART_BASE + 0x11Cu)
#define UART_RXDRDY (TD_UART_BASE + 0x108u)
#define UART_RXD (TD_UART_BASE + 0x518u)

static uint32_t timer_count;
static int timer_running;

static void nrf_model(uint32_t addr, uint32_t value, uint32_t before)
{
    (void)before;
    if (addr == 0x40000000u && value == 1u) /* TASKS_HFCLKSTART */
        td_fake_poke(0x40000100u, 1u);
    if (addr == UART_TXD)
        td_fake_poke(UART_TXDRDY, 1u);
    if (addr == 0x40008000u && value == 1u) /* TIMER0 TASKS_START */
        timer_running = 1;
    if (addr == 0x4000800Cu && value == 1u) /* TIMER0 TASKS_CLEAR */
        timer_count = 0;
    if (addr == 0x40008040u && value == 1u) { /* TIMER0 TASKS_CAPTURE[0] */
        if (timer_running)
            timer_count += 1000u;
        td_fake_poke(0x40008540u, timer_count);
    }
}

#if !(defined(TD_CYCLE_COUNTER_TIMER0) && TD_CYCLE_COUNTER_TIMER0)
void td_cortexm_cycles_init(void) { td_fake_mark("cycles_init"); }
uint32_t td_cycles_now(void)
{
    td_fake_mark("cycles_now");
    return 0;
}
#endif
void td_platform_report_fault(const char *text) { (void)text; }

int main(int argc, char **argv)
{
    uint8_t byte = 0;
    const uint8_t out = 'U';
    td_fake_set_model(nrf_model);
    td_fake_poke(0x10001208u, argc > 1 ? (uint32_t)strtoul(argv[1], 0, 16) : 0xFFFFFFFFu);
    td_fake_mark("startup");
#if defined(TD_MCU_NRF52840) && TD_MCU_NRF52840
    td_platform_startup();
#endif
    td_fake_mark("init");
    td_platform_init();
    td_fake_mark("write");
    td_uart_write(&out, 1);
    td_fake_mark("cycles");
    (void)td_cycles_now();
    (void)td_cycles_now();
    td_fake_mark("read");
    td_fake_poke(UART_RXDRDY, 1u);
    td_fake_poke(UART_RXD, 0x41u);
    if (td_uart_read(&byte) != 1 || byte != 0x41u)
        return 1;
    td_fake_mark("end");
    return 0;
}
