/*
 * td_mean_s16_ref.c - int16 MEAN / SUM over any set of axes, as TFLite Micro's int16
 * QuantizedMeanOrSum: the int8 kernel's int32 sums (scratch: int32_t[num_outputs]),
 * multiplier and offsets, saturated to int16.
 */
#include "td_kernels.h"

void td_mean_s16_ref(const td_mean_params_t *p, const int16_t *in0, int16_t *out0,
                     void *scratch)
{
    int32_t *acc = (int32_t *)scratch;
    const int32_t *d = p->in_dims;
    const int32_t *os = p->out_strides;
    for (int32_t i = 0; i < p->num_outputs; ++i) {
        acc[i] = 0;
    }
    const int16_t *src = in0;
    for (int32_t i0 = 0; i0 < d[0]; ++i0) {
        for (int32_t i1 = 0; i1 < d[1]; ++i1) {
            for (int32_t i2 = 0; i2 < d[2]; ++i2) {
                for (int32_t i3 = 0; i3 < d[3]; ++i3) {
                    for (int32_t i4 = 0; i4 < d[4]; ++i4) {
                        int32_t *a = acc + i0 * os[0] + i1 * os[1] + i2 * os[2]
                                     + i3 * os[3] + i4 * os[4];
                        for (int32_t i5 = 0; i5 < d[5]; ++i5) {
                            int32_t *t = a + i5 * os[5];
                            *t = (int32_t)((uint32_t)*t + (uint32_t)(int32_t)*src++);
                        }
                    }
                }
            }
        }
    }
    for (int32_t i = 0; i < p->num_outputs; ++i) {
        const int32_t shifted = (int32_t)((uint32_t)acc[i] + (uint32_t)p->sum_offset);
        const int32_t out = td_requantize(shifted, p->out_mult, p->out_shift) + p->out_offset;
        out0[i] = td_sat_s16(out);
    }
}
