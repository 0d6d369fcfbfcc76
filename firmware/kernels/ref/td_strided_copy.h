/*
 * td_strided_copy.h - private to the PAD, TRANSPOSE and STRIDED_SLICE reference kernels
 * (td_pad_body.h, td_transpose_body.h, td_strided_slice_body.h): the copy all three are,
 * written once. Each kernel is a copy over a TD_COPY_DIMS-D index space in which one side is
 * dense and the other strided: TRANSPOSE and STRIDED_SLICE gather (strided input, dense
 * output), PAD scatters (dense input, strided output inside the filled padding).
 *
 * td_strided_copy: for every index (i0..i5) of dims, in row-major order, the element at
 * src + sum(ik * src_steps[k]) goes to dst + sum(ik * dst_steps[k]); steps are in elements
 * and may be negative or 0. The walk is td_bcast_rows.h's (which keeps both offsets by
 * additions); a row (the last dim) whose two steps are 1 is one memcpy. `elem` is the element
 * size in bytes, a constant at every call site. Nothing happens when a dim is 0; src and dst
 * must not overlap (none of the three kernels is in place).
 */
#ifndef TD_STRIDED_COPY_H
#define TD_STRIDED_COPY_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "td_bcast_rows.h"

#define TD_COPY_DIMS TD_BCAST_DIMS

/* v[0..n-1] right-aligned into out[TD_COPY_DIMS], the leading TD_COPY_DIMS - n entries
 * `lead` (1 for dims, 0 for steps); n <= TD_COPY_DIMS. */
static inline void td_right_align(const int32_t *v, int32_t n, int32_t lead, int32_t *out)
{
    for (int32_t k = 0; k < TD_COPY_DIMS; ++k) {
        out[k] = k < TD_COPY_DIMS - n ? lead : v[k - (TD_COPY_DIMS - n)];
    }
}

/* The element steps of a dense row-major array of dims (the last dim's step is 1). */
static inline void td_dense_steps(const int32_t *dims, int32_t *steps)
{
    int32_t s = 1;
    for (int32_t k = TD_COPY_DIMS - 1; k >= 0; --k) {
        steps[k] = s;
        s *= dims[k];
    }
}

static inline void td_strided_copy(const void *src, const int32_t *src_steps, void *dst,
                                   const int32_t *dst_steps, const int32_t *dims, size_t elem)
{
    const int32_t n = dims[TD_COPY_DIMS - 1];
    const ptrdiff_t ss = (ptrdiff_t)src_steps[TD_COPY_DIMS - 1] * (ptrdiff_t)elem;
    const ptrdiff_t ds = (ptrdiff_t)dst_steps[TD_COPY_DIMS - 1] * (ptrdiff_t)elem;
    td_bcast_rows_t row;
    if (n < 1 || !td_bcast_rows_begin(&row, dims)) {
        return;
    }
    do {
        const char *s = (const char *)src + (ptrdiff_t)row.off0 * (ptrdiff_t)elem;
        char *d = (char *)dst + (ptrdiff_t)row.off1 * (ptrdiff_t)elem;
        if (ss == (ptrdiff_t)elem && ds == (ptrdiff_t)elem) {
            memcpy(d, s, (size_t)n * elem);
        } else {
            for (int32_t i = 0; i < n; ++i) {
                memcpy(d + i * ds, s + i * ss, elem);
            }
        }
    } while (td_bcast_rows_next(&row, dims, src_steps, dst_steps));
}

#endif /* TD_STRIDED_COPY_H */
