/*
 * td_binary_walk.h - private to the broadcasting binary reference kernels added with
 * td_binary_params_t (SUB, MAXIMUM, MINIMUM, SQUARED_DIFFERENCE, PRELU): resolves which
 * operand is constant and walks the broadcast with td_bcast_rows.h, calling the op's
 * element function for every output in row-major order.
 *
 * TD_BINARY_WALK(p, in0, in1, out0, fn) expands to the loop; fn(p, a, b) returns the int8
 * result for the int32 raw inputs a (operand 0) and b (operand 1). Safe in place (out0 equal
 * to an operand of the output's size): every element is read before it is written.
 */
#ifndef TD_BINARY_WALK_H
#define TD_BINARY_WALK_H

#include <stddef.h>

#include "td_bcast_rows.h"
#include "td_kernels.h"

#define TD_BINARY_WALK(p, in0, in1, out0, fn)                                              \
    do {                                                                                   \
        const int32_t *d_ = (p)->out_dims;                                                 \
        const int32_t *s0_ = (p)->in0_strides;                                             \
        const int32_t *s1_ = (p)->in1_strides;                                             \
        const int8_t *x_ = (p)->in0_const != NULL ? (p)->in0_const : (in0);                \
        const int8_t *y_ = (p)->in1_const != NULL ? (p)->in1_const : (in1);                \
        int8_t *o_ = (out0);                                                               \
        td_bcast_rows_t row_;                                                              \
        if (!td_bcast_rows_begin(&row_, d_)) {                                             \
            break;                                                                         \
        }                                                                                  \
        do {                                                                               \
            const int8_t *a_ = x_ + row_.off0;                                             \
            const int8_t *b_ = y_ + row_.off1;                                             \
            for (int32_t i_ = 0; i_ < d_[5]; ++i_) {                                       \
                *o_++ = fn((p), a_[i_ * s0_[5]], b_[i_ * s1_[5]]);                         \
            }                                                                              \
        } while (td_bcast_rows_next(&row_, d_, s0_, s1_));                                 \
    } while (0)

#endif /* TD_BINARY_WALK_H */
