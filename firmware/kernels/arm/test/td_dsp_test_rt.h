/* td_dsp_test_rt.h - the bare-metal test runtime of td_dsp_test_rt.c (mps2-an386, QEMU). */
#ifndef TD_DSP_TEST_RT_H
#define TD_DSP_TEST_RT_H

#include <stdint.h>

void td_rt_puts(const char *s);               /* semihosting console, NUL-terminated */
void td_rt_put_hex(const void *data, uint32_t n); /* n bytes as hex, then a newline */
void td_rt_put_u32(uint32_t v);               /* decimal */
uint32_t td_rt_ticks(void);                   /* SysTick value (counts down) */
uint32_t td_rt_elapsed(uint32_t start, uint32_t end); /* ticks from start to end */
void td_rt_exit(int status);                  /* QEMU exits with this status */

#endif /* TD_DSP_TEST_RT_H */
