/*
 * td_split_body.h - private to td_split_s8_ref.c, td_split_s16_ref.c and td_split_f32_ref.c:
 * SPLIT / SPLIT_V for every element type, written once: `elem` is the element size in bytes
 * (1, 2 or 4 for float, a constant at each call site).
 *
 * `ap` holds the num_outputs output pointers (int8_t *, int16_t * or float *, as elem says), in
 * order. For each of the `outer` slices of the input, output i takes the next chunks[i]
 * contiguous elements. A pure copy (the inverse of CONCATENATION).
 */
#ifndef TD_SPLIT_BODY_H
#define TD_SPLIT_BODY_H

#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include "td_kernels.h"

static inline void td_split_body(const td_split_params_t *p, const void *in0, size_t elem,
                                 va_list ap)
{
    char *out[TD_SPLIT_MAX_OUTPUTS];
    for (int32_t i = 0; i < p->num_outputs; ++i) {
        /* each pointer is read with the type it was passed as */
        out[i] = elem == 1   ? (char *)va_arg(ap, int8_t *)
                 : elem == 2 ? (char *)va_arg(ap, int16_t *)
                             : (char *)va_arg(ap, float *);
    }
    const char *src = (const char *)in0;
    for (int32_t o = 0; o < p->outer; ++o) {
        for (int32_t i = 0; i < p->num_outputs; ++i) {
            const size_t n = (size_t)p->chunks[i] * elem;
            memcpy(out[i] + (size_t)o * n, src, n);
            src += n;
        }
    }
}

#endif /* TD_SPLIT_BODY_H */
