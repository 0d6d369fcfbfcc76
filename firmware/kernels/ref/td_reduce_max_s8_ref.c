/*
 * td_reduce_max_s8_ref.c - int8 REDUCE_MAX over any set of axes, as TFLite Micro's
 * reference: the largest raw value (TFLM requires the input and output quantization to be
 * equal and never rescales). Dims and output strides as td_mean_s8_ref (td_mean_params_t;
 * only num_outputs, in_dims and out_strides are used). No scratch.
 */
#include "td_bcast_rows.h"
#include "td_kernels.h"

void td_reduce_max_s8_ref(const td_mean_params_t *p, const int8_t *in0, int8_t *out0)
{
    const int32_t *d = p->in_dims;
    const int32_t *os = p->out_strides;
    for (int32_t i = 0; i < p->num_outputs; ++i) {
        out0[i] = INT8_MIN;
    }
    /* every input element in row-major order against its output (td_bcast_rows.h walk) */
    const int8_t *src = in0;
    td_bcast_rows_t row;
    if (td_bcast_rows_begin(&row, d)) {
        do {
            int8_t *o = out0 + row.off0;
            for (int32_t i5 = 0; i5 < d[5]; ++i5) {
                int8_t *t = o + i5 * os[5];
                const int8_t v = *src++;
                if (v > *t) {
                    *t = v;
                }
            }
        } while (td_bcast_rows_next(&row, d, os, os));
    }
}
