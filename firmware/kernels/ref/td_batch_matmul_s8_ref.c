/*
 * td_batch_matmul_s8_ref.c - int8 BATCH_MATMUL with broadcast batch dims and adj_x/adj_y,
 * bit-exact with TFLite Micro: out[b][i][j] = requantize(sum_k (lhs[b][i][k] + lhs_offset) *
 * (rhs[b][k][j] + rhs_offset)) + out_offset, saturated. The transposition flags and the
 * broadcast are folded into element strides and per-batch offsets on the host, so the
 * operands are read in place (TFLM copies transposed operands into its arena first).
 * A constant operand is passed in lhs_const/rhs_const. Not in place.
 */
#include <stddef.h>

#include "td_kernels.h"

void td_batch_matmul_s8_ref(const td_batch_matmul_params_t *p, const int8_t *in0,
                            const int8_t *in1, int8_t *out0)
{
    const int8_t *lhs_base = p->lhs_const != NULL ? p->lhs_const : in0;
    const int8_t *rhs_base = p->rhs_const != NULL ? p->rhs_const : in1;
    int8_t *out = out0;
    for (int32_t b = 0; b < p->batches; ++b) {
        const int8_t *lhs = lhs_base + p->lhs_batch_offsets[b];
        const int8_t *rhs = rhs_base + p->rhs_batch_offsets[b];
        for (int32_t i = 0; i < p->rows; ++i) {
            for (int32_t j = 0; j < p->cols; ++j) {
                int32_t acc = 0;
                for (int32_t k = 0; k < p->depth; ++k) {
                    const int32_t a = lhs[i * p->lhs_row_stride + k * p->lhs_depth_stride];
                    const int32_t w = rhs[k * p->rhs_depth_stride + j * p->rhs_col_stride];
                    acc += (a + p->lhs_offset) * (w + p->rhs_offset);
                }
                *out++ = td_sat_s8(td_requantize(acc, p->out_mult, p->out_shift)
                                   + p->out_offset);
            }
        }
    }
}
