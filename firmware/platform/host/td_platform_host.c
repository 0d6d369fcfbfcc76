/*
 * Host family: the firmware as a Linux process, for fast tests (with sanitizers if wanted).
 * The "UART" is stdin/stdout, which the host runner connects to a pseudo-terminal; the cycle
 * counter is CLOCK_MONOTONIC in ns. End of input (the runner closed the port) ends the
 * process with status 0. Fatal signals are reported through the fault hook (a LOG frame with the link layer), as on the
 * boards (not
 * under AddressSanitizer, which reports them itself).
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "td_fmt.h"
#include "td_platform.h"

static uint8_t rx_buf[512];
static size_t rx_len, rx_pos;

#if !defined(__SANITIZE_ADDRESS__)
static void on_fatal(int sig)
{
    char text[48];
    char *p = td_fmt_str(text, text + sizeof text, "fault signal ");
    td_fmt_u32(p, text + sizeof text, (uint32_t)sig);
    td_platform_report_fault(text);
    _exit(1);
}
#endif

/* the operating system owns the stack: no painting, no figures */
uint32_t td_stack_peak(void) { return 0; }
uint32_t td_stack_size(void) { return 0; }

void td_platform_init(void)
{
    signal(SIGPIPE, SIG_IGN);
#if !defined(__SANITIZE_ADDRESS__)
    signal(SIGSEGV, on_fatal);
    signal(SIGBUS, on_fatal);
    signal(SIGFPE, on_fatal);
    signal(SIGILL, on_fatal);
#endif
}

void td_uart_write(const uint8_t *buf, uint32_t n)
{
    while (n) {
        ssize_t k = write(STDOUT_FILENO, buf, n);
        if (k < 0) {
            if (errno == EINTR || errno == EAGAIN)
                continue;
            _exit(0); /* the port is gone: nobody left to talk to */
        }
        buf += k;
        n -= (uint32_t)k;
    }
}

int td_uart_read(uint8_t *byte)
{
    if (rx_pos == rx_len) {
        /* wait up to 1 ms: keeps the dispatch loop from spinning a host core */
        struct pollfd pfd = {STDIN_FILENO, POLLIN, 0};
        ssize_t k;
        if (poll(&pfd, 1, 1) <= 0)
            return 0;
        k = read(STDIN_FILENO, rx_buf, sizeof rx_buf);
        if (k == 0 || (k < 0 && errno != EINTR && errno != EAGAIN))
            _exit(0);
        if (k < 0)
            return 0;
        rx_len = (size_t)k;
        rx_pos = 0;
    }
    *byte = rx_buf[rx_pos++];
    return 1;
}

uint32_t td_cycles_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint32_t)((uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec);
}

const char *td_cycles_unit(void) { return "ns"; }

void td_platform_exit(int status) { exit(status); }
