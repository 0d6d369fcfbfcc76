/*
 * Host test program: the stm32f4 platform layer against a fake STM32F4 register block.
 * The model follows RM0090/RM0368 "RCC": HSIRDY follows HSION; PLLRDY follows PLLON, but
 * PLLON cannot be cleared while the PLL clocks the core (SWS = PLL: the write is ignored);
 * PLLCFGR is ignored while PLLON is set; SW = PLL is ignored before PLLRDY; SWS follows SW;
 * FLASH_ACR's latency reads back; the USART's TXE is always set.
 * argv[1]: "reset" (HSI running, PLL off) or "debugger" (the PLL already clocks the core,
 * as after a debugger's load without a reset).
 */
#include <stdio.h>
#include <string.h>

#include "td_cortexm.h"
#include "td_fake_regs.h"
#include "td_platform.h"

#define RCC_CR 0x40023800u
#define RCC_PLLCFGR 0x40023804u
#define RCC_CFGR 0x40023808u
#define USART_SR (TD_UART_BASE + 0x00u)
#define USART_DR (TD_UART_BASE + 0x04u)

static void stm32_model(uint32_t addr, uint32_t value, uint32_t before)
{
    if (addr == RCC_CR) {
        uint32_t cfgr = td_fake_peek(RCC_CFGR);
        uint32_t v = value;
        if ((before & (1u << 24)) && !(v & (1u << 24)) && ((cfgr >> 2) & 3u) == 2u) {
            td_fake_mark("ignored: PLLON cleared while the PLL is the system clock");
            v |= 1u << 24;
        }
        v = (v & ~((1u << 1) | (1u << 25))) | ((v & 1u) << 1) | ((v & (1u << 24)) << 1);
        td_fake_poke(RCC_CR, v);
    } else if (addr == RCC_PLLCFGR) {
        if (td_fake_peek(RCC_CR) & (1u << 24)) {
            td_fake_mark("ignored: PLLCFGR written while the PLL is on");
            td_fake_poke(RCC_PLLCFGR, before);
        }
    } else if (addr == RCC_CFGR) {
        uint32_t sw = value & 3u;
        if (sw == 2u && !(td_fake_peek(RCC_CR) & (1u << 25))) {
            td_fake_mark("ignored: SW = PLL before PLLRDY");
            sw = (before >> 2) & 3u;
        }
        td_fake_poke(RCC_CFGR, (value & ~0xFu) | (sw << 2) | sw);
    }
    if (addr == USART_DR)
        td_fake_poke(USART_SR, td_fake_peek(USART_SR) | (1u << 7));
}

void td_cortexm_cycles_init(void) { td_fake_mark("cycles_init"); }
uint32_t td_cycles_now(void) { return 0; }
void td_platform_report_fault(const char *text) { (void)text; }

int main(int argc, char **argv)
{
    const uint8_t out = 'U';
    uint8_t byte = 0;
    td_fake_set_model(stm32_model);
    td_fake_poke(RCC_CR, 0x3u); /* HSION | HSIRDY */
    td_fake_poke(USART_SR, 1u << 7);
    if (argc > 1 && strcmp(argv[1], "debugger") == 0) {
        td_fake_poke(RCC_CR, 0x3u | (1u << 24) | (1u << 25));
        td_fake_poke(RCC_PLLCFGR, 0x24003010u);
        td_fake_poke(RCC_CFGR, 0x2u | (0x2u << 2));
    }
    td_fake_mark("init");
    td_platform_init();
    td_fake_mark("write");
    td_uart_write(&out, 1);
    td_fake_mark("read");
    td_fake_poke(USART_SR, (1u << 7) | (1u << 5));
    td_fake_poke(USART_DR, 0x41u);
    if (td_uart_read(&byte) != 1 || byte != 0x41u)
        return 1;
    td_fake_mark("end");
    return 0;
}
