/*
 * td_mean_s8_ref.c - int8 MEAN over any set of axes, as TFLite Micro's reference.
 *
 * int32 sums per output element (in the scratch buffer), then
 * out = clamp(requantize(sum - zp * count, mult, shift) + out_zp) with TFLite's multiplier
 * that folds 1/count in (computed on the host). Sums wrap in two's complement as TFLite's.
 * scratch: int32_t[num_outputs], 4-byte aligned.
 */
#include "td_bcast_rows.h"
#include "td_kernels.h"

void td_mean_s8_ref(const td_mean_params_t *p, const int8_t *in0, int8_t *out0,
                    void *scratch)
{
    int32_t *acc = (int32_t *)scratch;
    const int32_t *d = p->in_dims;
    const int32_t *os = p->out_strides;
    for (int32_t i = 0; i < p->num_outputs; ++i) {
        acc[i] = 0;
    }
    /* every input element in row-major order, onto its output's sum (out_strides are 0
     * along the reduced axes, the walk of td_bcast_rows.h) */
    const int8_t *src = in0;
    td_bcast_rows_t row;
    if (td_bcast_rows_begin(&row, d)) {
        do {
            int32_t *a = acc + row.off0;
            for (int32_t i5 = 0; i5 < d[5]; ++i5) {
                int32_t *t = a + i5 * os[5];
                *t = (int32_t)((uint32_t)*t + (uint32_t)(int32_t)*src++);
            }
        } while (td_bcast_rows_next(&row, d, os, os));
    }
    for (int32_t i = 0; i < p->num_outputs; ++i) {
        const int32_t shifted = (int32_t)((uint32_t)acc[i] + (uint32_t)p->sum_offset);
        const int32_t out = td_requantize(shifted, p->out_mult, p->out_shift) + p->out_offset;
        out0[i] = td_sat_s8(out);
    }
}
