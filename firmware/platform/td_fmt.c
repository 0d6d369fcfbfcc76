/*
 * td_fmt.c - bounded text formatting without printf, for fault reports and logs (platform
 * layer, shared by every family and every app).
 */
#include "td_fmt.h"

char *td_fmt_str(char *dst, const char *end, const char *s)
{
    while (*s && dst < end - 1)
        *dst++ = *s++;
    *dst = 0;
    return dst;
}

char *td_fmt_u32(char *dst, const char *end, uint32_t v)
{
    char tmp[11];
    int n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10u);
        v /= 10u;
    } while (v);
    while (n && dst < end - 1)
        *dst++ = tmp[--n];
    *dst = 0;
    return dst;
}

char *td_fmt_hex(char *dst, const char *end, uint32_t v)
{
    static const char digits[] = "0123456789abcdef";
    dst = td_fmt_str(dst, end, "0x");
    for (int sh = 28; sh >= 0 && dst < end - 1; sh -= 4)
        *dst++ = digits[(v >> sh) & 0xFu];
    *dst = 0;
    return dst;
}
