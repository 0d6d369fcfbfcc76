/*
 * STM32F4 with the SR/DR USART register set (Netduino Plus 2 / STM32F405 in QEMU and on the
 * chip, Nucleo-F401RE and STM32F4-Discovery on the chip). On hardware the PLL is started from the 16 MHz HSI to TD_CLOCK_HZ, the flash
 * wait states and APB prescalers are set, the GPIO port and USART clocks are enabled and the
 * pins put in their alternate function. QEMU models no RCC PLL, so under TD_QEMU only the
 * USART itself is configured.
 *
 * Defines (board_defines): TD_UART_BASE (selects USART1/2/3/6, their bus, enable bit and
 * alternate function), TD_UART_BAUD, TD_CLOCK_HZ (84 or 168 MHz-class parts: VCO 336 MHz),
 * TD_UART_TX_PIN / TD_UART_RX_PIN as port*16+pin (PA2 = 2, PA9 = 9), TD_QEMU.
 */
#include "td_cortexm.h"
#include "td_platform.h"
#include "td_stm32f4_clock.h"

#if defined(TD_QEMU) && TD_QEMU
#define TD_ON_CHIP 0 /* the emulator's build */
#else
#define TD_ON_CHIP 1
#endif

#define RCC_BASE 0x40023800u
#define RCC_CR (RCC_BASE + 0x00u)      /* bit0 HSION, bit1 HSIRDY, bit24 PLLON, bit25 PLLRDY */
#define RCC_PLLCFGR (RCC_BASE + 0x04u)
#define RCC_CFGR (RCC_BASE + 0x08u)    /* bits 1:0 SW, bits 3:2 SWS (0 HSI, 2 PLL) */
#define RCC_AHB1ENR (RCC_BASE + 0x30u)
#define RCC_APB1ENR (RCC_BASE + 0x40u)
#define RCC_APB2ENR (RCC_BASE + 0x44u)
#define FLASH_ACR 0x40023C00u
#define GPIO_BASE(port) (0x40020000u + 0x400u * (uint32_t)(port))
#define GPIO_MODER(port) (GPIO_BASE(port) + 0x00u)
#define GPIO_OSPEEDR(port) (GPIO_BASE(port) + 0x08u)
#define GPIO_PUPDR(port) (GPIO_BASE(port) + 0x0Cu)
#define GPIO_AFR(port, pin) (GPIO_BASE(port) + 0x20u + 4u * ((pin) >> 3))

#define USART_SR (TD_UART_BASE + 0x00u) /* bit5 RXNE, bit7 TXE, bit3 ORE */
#define USART_DR (TD_UART_BASE + 0x04u)
#define USART_BRR (TD_UART_BASE + 0x08u)
#define USART_CR1 (TD_UART_BASE + 0x0Cu)
#define USART_CR2 (TD_UART_BASE + 0x10u)
#define USART_CR3 (TD_UART_BASE + 0x14u)

#if TD_ON_CHIP
static void clock_init(void)
{
    /* HSI on (it is after a reset, not necessarily after a debugger's load) */
    td_reg_set(RCC_CR, 1u);
    while (!(td_reg_read(RCC_CR) & (1u << 1))) {
    }
    /* The PLL cannot be stopped while it clocks the core (RM0090 6.3.2: PLLON cannot be
     * cleared while the PLL is the system clock): SYSCLK to HSI first, then PLL off. */
    td_reg_write(RCC_CFGR, td_reg_read(RCC_CFGR) & ~0x3u);
    while (((td_reg_read(RCC_CFGR) >> 2) & 0x3u) != 0u) {
    }
    td_reg_clear(RCC_CR, 1u << 24);
    while (td_reg_read(RCC_CR) & (1u << 25)) {
    }
    /* PLL from HSI: VCO = 16 MHz / M * N, SYSCLK = VCO / P */
    td_reg_write(RCC_PLLCFGR, (uint32_t)TD_STM32_PLLM | ((uint32_t)TD_STM32_PLLN << 6) |
                                  ((((uint32_t)TD_STM32_PLLP >> 1) - 1u) << 16) |
                                  (0u << 22) /* HSI */ | ((uint32_t)TD_STM32_PLLQ << 24));
    td_reg_set(RCC_CR, 1u << 24);
    while (!(td_reg_read(RCC_CR) & (1u << 25))) {
    }
    /* wait states before the clock goes up; prefetch, instruction and data caches on */
    td_reg_write(FLASH_ACR, (uint32_t)TD_STM32_FLASH_WS | (1u << 8) | (1u << 9) | (1u << 10));
    while ((td_reg_read(FLASH_ACR) & 0xFu) != (uint32_t)TD_STM32_FLASH_WS) {
    }
    td_reg_write(RCC_CFGR, (td_reg_read(RCC_CFGR) & ~((0x7u << 10) | (0x7u << 13) | (0xFu << 4))) |
                               ((uint32_t)TD_STM32_PPRE1 << 10) | ((uint32_t)TD_STM32_PPRE2 << 13));
    td_reg_write(RCC_CFGR, (td_reg_read(RCC_CFGR) & ~0x3u) | 0x2u); /* SYSCLK = PLL */
    while (((td_reg_read(RCC_CFGR) >> 2) & 0x3u) != 0x2u) {
    }
}

static void pin_af(uint32_t port, uint32_t pin, uint32_t af)
{
    td_reg_write(GPIO_AFR(port, pin), (td_reg_read(GPIO_AFR(port, pin)) &
                                       ~(0xFu << (4u * (pin & 7u)))) |
                                          (af << (4u * (pin & 7u))));
    td_reg_set(GPIO_OSPEEDR(port), 2u << (2u * pin));
    td_reg_write(GPIO_PUPDR(port), (td_reg_read(GPIO_PUPDR(port)) & ~(3u << (2u * pin))) |
                                       (1u << (2u * pin))); /* up */
    /* the alternate function last: the pin switches to the USART already configured */
    td_reg_write(GPIO_MODER(port), (td_reg_read(GPIO_MODER(port)) & ~(3u << (2u * pin))) |
                                       (2u << (2u * pin)));
}
#endif

void td_platform_init(void)
{
#if TD_ON_CHIP
    clock_init();
    td_reg_set(RCC_AHB1ENR, (1u << TD_UART_TX_PORT) | (1u << TD_UART_RX_PORT));
#endif
#if TD_UART_APB == 1
    td_reg_set(RCC_APB1ENR, 1u << TD_UART_RCC_BIT);
#else
    td_reg_set(RCC_APB2ENR, 1u << TD_UART_RCC_BIT);
#endif
    (void)td_reg_read(RCC_APB1ENR); /* a read back delays the first access after the enable */
#if TD_ON_CHIP
    pin_af(TD_UART_TX_PORT, TD_TX_PIN_NO, TD_UART_AF);
    pin_af(TD_UART_RX_PORT, TD_RX_PIN_NO, TD_UART_AF);
#endif
    td_reg_write(USART_CR1, 0u);
    td_reg_write(USART_CR2, 0u);
    td_reg_write(USART_CR3, 0u);
    td_reg_write(USART_BRR, TD_UART_BRR);
    td_reg_write(USART_CR1, (1u << 13) | (1u << 3) | (1u << 2)); /* UE, TE, RE */
    td_cortexm_cycles_init();
}

void td_uart_write(const uint8_t *buf, uint32_t n)
{
    for (uint32_t i = 0; i < n; ++i) {
        while (!(td_reg_read(USART_SR) & (1u << 7))) {
        }
        td_reg_write(USART_DR, buf[i]);
    }
}

int td_uart_read(uint8_t *byte)
{
    /* RXNE, or ORE (an earlier byte was lost; reading SR then DR clears it and returns the
     * latest byte, and the protocol's CRC reports the damaged frame) */
    if (!(td_reg_read(USART_SR) & ((1u << 5) | (1u << 3))))
        return 0;
    *byte = (uint8_t)td_reg_read(USART_DR);
    return 1;
}
