/*
 * td_split_body.h - private to td_split_s8_ref.c and td_split_s16_ref.c: SPLIT / SPLIT_V
 * for one element type, written once. The including file defines TD_ELEM_T (int8_t or
 * int16_t) before including it, once per translation unit.
 *
 * `ap` holds the num_outputs output pointers (TD_ELEM_T *), in order. For each of the
 * `outer` slices of the input, output i takes the next chunks[i] contiguous elements.
 * A pure copy (the inverse of CONCATENATION).
 */
#ifndef TD_ELEM_T
#error "define TD_ELEM_T before including td_split_body.h"
#endif

#include <stdarg.h>
#include <string.h>

#include "td_kernels.h"

static inline void td_split_body(const td_split_params_t *p, const TD_ELEM_T *in0,
                                 va_list ap)
{
    TD_ELEM_T *out[TD_SPLIT_MAX_OUTPUTS];
    for (int32_t i = 0; i < p->num_outputs; ++i) {
        out[i] = va_arg(ap, TD_ELEM_T *);
    }
    const TD_ELEM_T *src = in0;
    for (int32_t o = 0; o < p->outer; ++o) {
        for (int32_t i = 0; i < p->num_outputs; ++i) {
            const int32_t n = p->chunks[i];
            memcpy(out[i] + (size_t)o * (size_t)n, src, (size_t)n * sizeof(TD_ELEM_T));
            src += n;
        }
    }
}
