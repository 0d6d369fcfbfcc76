/*
 * td_binary_walk.h - private to the broadcasting binary reference kernels added with
 * td_binary_params_t (SUB, MAXIMUM, MINIMUM, SQUARED_DIFFERENCE, PRELU): resolves which
 * operand is constant and walks the broadcast with TD_BCAST_WALK (td_bcast_rows.h), calling
 * the op's element function for every output in row-major order.
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
    TD_BCAST_WALK(int8_t, p, (p)->in0_const != NULL ? (p)->in0_const : (in0),              \
                  (p)->in1_const != NULL ? (p)->in1_const : (in1), out0, fn)

#endif /* TD_BINARY_WALK_H */
