/*
 * td_fmt.h - bounded text formatting without printf. Each function appends to dst, never
 * writes past end - 1, always NUL-terminates, and returns the new end of the text.
 */
#ifndef TD_FMT_H
#define TD_FMT_H

#include <stdint.h>

char *td_fmt_str(char *dst, const char *end, const char *s);   /* a C string */
char *td_fmt_u32(char *dst, const char *end, uint32_t v);      /* decimal */
char *td_fmt_hex(char *dst, const char *end, uint32_t v);      /* 0x + 8 hex digits */

#endif /* TD_FMT_H */
