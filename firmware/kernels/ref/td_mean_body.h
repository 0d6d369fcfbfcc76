/*
 * td_mean_body.h - private to td_mean_s8_ref.c and td_mean_s16_ref.c: TFLite Micro's
 * QuantizedMeanOrSum for both element widths, which differ only in the input type and the
 * final saturation.
 *
 * td_mean_body, the whole kernel: td_mean_sums adds every input element, in row-major order,
 * to its output's int32 sum (out_strides are 0 along the reduced axes: the row walk of
 * td_bcast_rows.h); sums wrap in two's complement as TFLite's. Then each output is
 * requantize(sum + sum_offset, mult, shift) + out_offset saturated to the output type.
 * `wide` is a constant at each call site. scratch: int32_t[num_outputs] (the sums).
 */
#ifndef TD_MEAN_BODY_H
#define TD_MEAN_BODY_H

#include <stdint.h>

#include "td_bcast_rows.h"
#include "td_kernels.h"

/* in0 is int8_t (wide == 0) or int16_t (wide != 0) data. */
static inline void td_mean_sums(const td_mean_params_t *p, const void *in0, int wide,
                                int32_t *acc)
{
    const int32_t *d = p->in_dims;
    const int32_t *os = p->out_strides;
    const int8_t *in8 = (const int8_t *)in0;
    const int16_t *in16 = (const int16_t *)in0;
    int32_t k = 0;
    for (int32_t i = 0; i < p->num_outputs; ++i) {
        acc[i] = 0;
    }
    td_bcast_rows_t row;
    if (td_bcast_rows_begin(&row, d)) {
        do {
            int32_t *a = acc + row.off0;
            for (int32_t i5 = 0; i5 < d[5]; ++i5, ++k) {
                int32_t *t = a + i5 * os[5];
                const int32_t v = wide ? in16[k] : in8[k];
                *t = (int32_t)((uint32_t)*t + (uint32_t)v);
            }
        } while (td_bcast_rows_next(&row, d, os, os));
    }
}

/* The whole kernel: in0 and out0 are int8_t (wide == 0) or int16_t (wide != 0) data. */
static inline void td_mean_body(const td_mean_params_t *p, const void *in0, void *out0,
                                int wide, void *scratch)
{
    int32_t *acc = (int32_t *)scratch;
    td_mean_sums(p, in0, wide, acc);
    for (int32_t i = 0; i < p->num_outputs; ++i) {
        const int32_t shifted = (int32_t)((uint32_t)acc[i] + (uint32_t)p->sum_offset);
        const int32_t v = td_requantize(shifted, p->out_mult, p->out_shift) + p->out_offset;
        if (wide) {
            ((int16_t *)out0)[i] = td_sat_s16(v);
        } else {
            ((int8_t *)out0)[i] = td_sat_s8(v);
        }
    }
}

#endif /* TD_MEAN_BODY_H */
