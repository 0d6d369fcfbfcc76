/*
 * td_concatenation_body.h - private to td_concatenation_s8_ref.c and
 * td_concatenation_s16_ref.c: CONCATENATION (and PACK) for one element type, written once.
 * The including file defines TD_ELEM_T (int8_t or int16_t) before including it, once per
 * translation unit.
 *
 * `ap` holds the num_inputs input pointers (const TD_ELEM_T *), then the output pointer.
 * For each of the `outer` slices, input i contributes chunks[i] contiguous elements. A pure
 * copy: TFLite requires every input to share the output's quantization.
 */
#ifndef TD_ELEM_T
#error "define TD_ELEM_T before including td_concatenation_body.h"
#endif

#include <stdarg.h>
#include <string.h>

#include "td_kernels.h"

#define TD_CONCAT_MAX_INPUTS 10

static inline void td_concatenation_body(const td_concatenation_params_t *p, va_list ap)
{
    const TD_ELEM_T *in[TD_CONCAT_MAX_INPUTS];
    for (int32_t i = 0; i < p->num_inputs; ++i) {
        in[i] = va_arg(ap, const TD_ELEM_T *);
    }
    TD_ELEM_T *out = va_arg(ap, TD_ELEM_T *);
    for (int32_t o = 0; o < p->outer; ++o) {
        for (int32_t i = 0; i < p->num_inputs; ++i) {
            const int32_t n = p->chunks[i];
            memcpy(out, in[i] + (size_t)o * (size_t)n, (size_t)n * sizeof(TD_ELEM_T));
            out += n;
        }
    }
}
