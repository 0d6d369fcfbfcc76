/*
 * td_bcast_rows.h - private to the broadcasting reference kernels (td_add_s8_ref.c,
 * td_add_s16_ref.c, td_mul_s8_ref.c, td_binary_walk.h) and the reductions (td_mean_body.h,
 * td_reduce_max_s8_ref.c, whose output strides are 0 along the reduced axes) and the strided
 * copies (td_strided_copy.h): the walk over the rows of a TD_BCAST_DIMS-D broadcast (see
 * td_add_params_t in td_kernels.h).
 *
 * A row is one index (i0..i4) of the five outer dimensions; the caller loops over the last
 * dimension itself. Rows come in row-major order, so the output is written densely; for each
 * row, off0 = sum(ik * in0_strides[k]) and off1 likewise for in1 (k < 5), kept up to date by
 * additions instead of being recomputed. Usage:
 *
 *     td_bcast_rows_t row;
 *     if (td_bcast_rows_begin(&row, dims)) {
 *         do { ... in0 + row.off0 ... in1 + row.off1 ... }
 *         while (td_bcast_rows_next(&row, dims, in0_strides, in1_strides));
 *     }
 */
#ifndef TD_BCAST_ROWS_H
#define TD_BCAST_ROWS_H

#include <stdint.h>

#include "td_kernels.h"

typedef struct {
    int32_t idx[TD_BCAST_DIMS - 1]; /* (i0..i4) of the current row */
    int32_t off0;                   /* element offset of the row's start in in0 */
    int32_t off1;                   /* element offset of the row's start in in1 */
} td_bcast_rows_t;

/* The first row; 0 when an outer dimension is empty (no row at all). */
static inline int td_bcast_rows_begin(td_bcast_rows_t *row, const int32_t *dims)
{
    for (int32_t k = 0; k < TD_BCAST_DIMS - 1; ++k) {
        row->idx[k] = 0;
        if (dims[k] < 1) {
            return 0;
        }
    }
    row->off0 = 0;
    row->off1 = 0;
    return 1;
}

/* Advance to the next row in row-major order; 0 after the last one. */
static inline int td_bcast_rows_next(td_bcast_rows_t *row, const int32_t *dims,
                                     const int32_t *s0, const int32_t *s1)
{
    for (int32_t k = TD_BCAST_DIMS - 2; k >= 0; --k) {
        if (++row->idx[k] < dims[k]) {
            row->off0 += s0[k];
            row->off1 += s1[k];
            return 1;
        }
        row->off0 -= (dims[k] - 1) * s0[k];
        row->off1 -= (dims[k] - 1) * s1[k];
        row->idx[k] = 0;
    }
    return 0;
}

/* TD_BCAST_WALK(elem_t, p, x, y, out0, fn): the whole broadcast walk of one binary kernel.
 * x and y are the resolved operand arrays (arena or flash) of element type elem_t; for every
 * output in row-major order, fn(p, a, b) receives the two raw inputs as int32 and returns the
 * result (in elem_t's range), written densely to out0 as elem_t. p supplies out_dims,
 * in0_strides and in1_strides.
 * Safe in place (out0 equal to an operand of the output's size): every element is read
 * before it is written. */
#define TD_BCAST_WALK(elem_t, p, x, y, out0, fn)                                           \
    do {                                                                                   \
        const int32_t *d_ = (p)->out_dims;                                                 \
        const int32_t *s0_ = (p)->in0_strides;                                             \
        const int32_t *s1_ = (p)->in1_strides;                                             \
        const elem_t *x_ = (x);                                                            \
        const elem_t *y_ = (y);                                                            \
        elem_t *o_ = (out0);                                                               \
        td_bcast_rows_t row_;                                                              \
        if (!td_bcast_rows_begin(&row_, d_)) {                                             \
            break;                                                                         \
        }                                                                                  \
        do {                                                                               \
            const elem_t *a_ = x_ + row_.off0;                                             \
            const elem_t *b_ = y_ + row_.off1;                                             \
            for (int32_t i_ = 0; i_ < d_[5]; ++i_) {                                       \
                *o_++ = (elem_t)fn((p), a_[i_ * s0_[5]], b_[i_ * s1_[5]]);                 \
            }                                                                              \
        } while (td_bcast_rows_next(&row_, d_, s0_, s1_));                                 \
    } while (0)

#endif /* TD_BCAST_ROWS_H */
