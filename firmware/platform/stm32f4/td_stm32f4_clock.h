/*
 * STM32F4 clock tree and USART facts derived at compile time from the board defines
 * (TD_CLOCK_HZ, TD_UART_BASE, TD_UART_BAUD, TD_UART_TX_PIN/RX_PIN): which USART, its bus,
 * enable bit and alternate function; the PLL, flash wait states and APB prescalers; the
 * USART's clock and BRR value. A header of its own so that a host test can check the numbers
 * for boards that only exist as hardware.
 */
#ifndef TD_STM32F4_CLOCK_H
#define TD_STM32F4_CLOCK_H

#include <stdint.h>

#if !defined(TD_UART_BASE) || !defined(TD_CLOCK_HZ)
#error "TD_UART_BASE and TD_CLOCK_HZ must be defined (board file uart.base, clock_hz)"
#endif
#if !defined(TD_UART_TX_PIN) || !defined(TD_UART_RX_PIN)
#error "TD_UART_TX_PIN and TD_UART_RX_PIN must be defined (board file uart.tx_pin/rx_pin)"
#endif
#ifndef TD_UART_BAUD
#define TD_UART_BAUD 115200u
#endif

/* which USART: APB bus, RCC enable bit, GPIO alternate function */
#if TD_UART_BASE == 0x40011000u /* USART1 */
#define TD_UART_APB 2
#define TD_UART_RCC_BIT 4u
#define TD_UART_AF 7u
#elif TD_UART_BASE == 0x40011400u /* USART6 */
#define TD_UART_APB 2
#define TD_UART_RCC_BIT 5u
#define TD_UART_AF 8u
#elif TD_UART_BASE == 0x40004400u /* USART2 */
#define TD_UART_APB 1
#define TD_UART_RCC_BIT 17u
#define TD_UART_AF 7u
#elif TD_UART_BASE == 0x40004800u /* USART3 */
#define TD_UART_APB 1
#define TD_UART_RCC_BIT 18u
#define TD_UART_AF 7u
#else
#error "TD_UART_BASE is not an STM32F4 USART1/2/3/6 base address"
#endif

/* PLL from HSI 16 MHz: M = 8 (2 MHz input), VCO = 2 MHz * N, SYSCLK = VCO / P, Q = 7 */
#define TD_STM32_PLLM 8u
#if TD_CLOCK_HZ > 96000000u
#define TD_STM32_PLLP 2u
#else
#define TD_STM32_PLLP 4u
#endif
#define TD_STM32_PLLN ((uint32_t)(TD_CLOCK_HZ) / 2000000u * TD_STM32_PLLP)
#define TD_STM32_PLLQ 7u
/* one wait state per 30 MHz (2.7-3.6 V supply) */
#define TD_STM32_FLASH_WS (((uint32_t)(TD_CLOCK_HZ) - 1u) / 30000000u)
/* APB1 at most 42 MHz, APB2 at most 84 MHz; PPRE codes: /1 = 0, /2 = 4, /4 = 5 */
#if TD_CLOCK_HZ <= 42000000u
#define TD_APB1_DIV 1u
#define TD_STM32_PPRE1 0u
#elif TD_CLOCK_HZ <= 84000000u
#define TD_APB1_DIV 2u
#define TD_STM32_PPRE1 4u
#else
#define TD_APB1_DIV 4u
#define TD_STM32_PPRE1 5u
#endif
#if TD_CLOCK_HZ <= 84000000u
#define TD_APB2_DIV 1u
#define TD_STM32_PPRE2 0u
#else
#define TD_APB2_DIV 2u
#define TD_STM32_PPRE2 4u
#endif
#if TD_UART_APB == 1
#define TD_UART_PCLK_HZ ((uint32_t)(TD_CLOCK_HZ) / TD_APB1_DIV)
#else
#define TD_UART_PCLK_HZ ((uint32_t)(TD_CLOCK_HZ) / TD_APB2_DIV)
#endif
#define TD_UART_TX_PORT ((uint32_t)(TD_UART_TX_PIN) >> 4)
#define TD_UART_RX_PORT ((uint32_t)(TD_UART_RX_PIN) >> 4)
#define TD_TX_PIN_NO ((uint32_t)(TD_UART_TX_PIN) & 15u)
#define TD_RX_PIN_NO ((uint32_t)(TD_UART_RX_PIN) & 15u)

/* oversampling by 16: BRR = mantissa.fraction(4 bits) = PCLK / baud, rounded */
#define TD_UART_BRR (((uint32_t)TD_UART_PCLK_HZ + (uint32_t)TD_UART_BAUD / 2u) / (uint32_t)TD_UART_BAUD)

#endif /* TD_STM32F4_CLOCK_H */
