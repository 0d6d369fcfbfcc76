/*
 * Text output for the eembc app without printf: one line buffer flushed at CR LF (or when
 * full), exact decimal formatting of floats, and the platform layer's fault reports as text
 * lines (td_eembc_report_fault, installed as the platform's fault hook by main.c). Newlib's printf would pull in float support and a
 * heap; none of that is needed to print a few numbers.
 */
#include <stdint.h>
#include <string.h>

#include "td_eembc.h"
#include "td_platform.h"

#define TD_EEMBC_OUT_BYTES 96u

static char out_buf[TD_EEMBC_OUT_BYTES];
static uint32_t out_len;
static uint8_t mid_line; /* 1 when bytes of an unfinished line were written or buffered */

void td_eembc_flush(void)
{
    if (out_len) {
        td_uart_write((const uint8_t *)out_buf, out_len);
        out_len = 0;
    }
}

void td_eembc_putn(const char *s, uint32_t n)
{
    for (uint32_t i = 0; i < n; ++i) {
        if (out_len == TD_EEMBC_OUT_BYTES)
            td_eembc_flush();
        out_buf[out_len++] = s[i];
    }
    if (n)
        mid_line = 1;
}

void td_eembc_puts(const char *s) { td_eembc_putn(s, (uint32_t)strlen(s)); }

void td_eembc_endl(void)
{
    td_eembc_putn("\r\n", 2u);
    mid_line = 0;
    td_eembc_flush();
}

void td_eembc_put_u64(uint64_t v)
{
    char tmp[20];
    uint32_t n = 0;
    do {
        tmp[n++] = (char)('0' + (uint32_t)(v % 10u));
        v /= 10u;
    } while (v);
    while (n)
        td_eembc_putn(&tmp[--n], 1u);
}

void td_eembc_put_i32(int32_t v)
{
    if (v < 0) {
        td_eembc_putn("-", 1u);
        td_eembc_put_u64((uint64_t)(-(int64_t)v));
    } else {
        td_eembc_put_u64((uint64_t)v);
    }
}

void td_eembc_put_hex8(uint8_t v)
{
    static const char digits[] = "0123456789abcdef";
    char two[2];
    two[0] = digits[v >> 4];
    two[1] = digits[v & 0xFu];
    td_eembc_putn(two, 2u);
}

void td_eembc_put_sanitized(const char *s, uint32_t max)
{
    uint32_t i;
    for (i = 0; s[i] && i < max; ++i) {
        char c = s[i];
        td_eembc_putn((c >= 0x20 && c < 0x7F) ? &c : "?", 1u);
    }
    if (s[i])
        td_eembc_puts("...");
}

/* Decimal digits of a 128-bit magnitude (four 32-bit limbs, most significant last). */
static void put_u128(uint32_t limb[4])
{
    char tmp[40];
    uint32_t n = 0;
    for (;;) {
        uint32_t rem = 0;
        int nonzero = 0;
        for (int i = 3; i >= 0; --i) {
            uint64_t cur = ((uint64_t)rem << 32) | limb[i];
            limb[i] = (uint32_t)(cur / 10u);
            rem = (uint32_t)(cur % 10u);
            nonzero |= limb[i] != 0u;
        }
        tmp[n++] = (char)('0' + rem);
        if (!nonzero)
            break;
    }
    while (n)
        td_eembc_putn(&tmp[--n], 1u);
}

void td_eembc_put_f32(float v, uint32_t decimals)
{
    uint32_t bits, man, exp, pow10 = 1u;
    int32_t k;
    uint64_t frac_digits = 0;
    memcpy(&bits, &v, sizeof bits);
    man = bits & 0x7FFFFFu;
    exp = (bits >> 23) & 0xFFu;
    if (decimals > 9u)
        decimals = 9u;
    for (uint32_t i = 0; i < decimals; ++i)
        pow10 *= 10u;
    if (exp == 0xFFu) {
        td_eembc_puts(man ? "nan" : ((bits >> 31) ? "-inf" : "inf"));
        return;
    }
    if (bits >> 31)
        td_eembc_putn("-", 1u);
    /* |v| = m * 2^k exactly, m < 2^24 */
    if (exp == 0u) {
        k = -149;
    } else {
        man |= 0x800000u;
        k = (int32_t)exp - 150;
    }
    if (k >= 0) {
        /* an integer: m << k < 2^128 */
        uint32_t limb[4] = {0, 0, 0, 0};
        uint32_t word = (uint32_t)k / 32u, sh = (uint32_t)k % 32u;
        limb[word] = man << sh;
        if (sh && word < 3u)
            limb[word + 1u] = man >> (32u - sh);
        put_u128(limb);
    } else {
        uint32_t s = (uint32_t)(-k);
        uint32_t ip = s < 32u ? man >> s : 0u;
        uint32_t f = s < 32u ? man & ((1u << s) - 1u) : man;
        uint64_t scaled = (uint64_t)f * pow10; /* < 2^54 */
        if (s < 64u) {
            frac_digits = scaled >> s;
            if ((scaled & ((1ull << s) - 1u)) >= (1ull << (s - 1u)))
                frac_digits++; /* half or more: away from zero */
        }
        if (frac_digits == pow10) {
            frac_digits = 0;
            ip++;
        }
        td_eembc_put_u64(ip);
    }
    if (decimals) {
        char tmp[9];
        td_eembc_putn(".", 1u);
        for (uint32_t i = decimals; i > 0; --i) {
            tmp[i - 1u] = (char)('0' + (uint32_t)(frac_digits % 10u));
            frac_digits /= 10u;
        }
        td_eembc_putn(tmp, decimals);
    }
}

/* ---- the platform layer's fault hook (td_platform.h) ---- */

void td_eembc_report_fault(const char *text)
{
    if (mid_line)
        td_eembc_endl(); /* a report never joins a half-written line */
    td_eembc_puts("e-[");
    td_eembc_put_sanitized(text, 200u);
    td_eembc_puts("]");
    td_eembc_endl();
}
