/*
 * td_mean_s16_ref.c - int16 MEAN / SUM over any set of axes, as TFLite Micro's int16
 * QuantizedMeanOrSum: the int8 kernel's int32 sums (scratch: int32_t[num_outputs]),
 * multiplier and offsets, saturated to int16.
 */
#include "td_kernels.h"
#include "td_mean_body.h"

void td_mean_s16_ref(const td_mean_params_t *p, const int16_t *in0, int16_t *out0,
                     void *scratch)
{
    int32_t *acc = (int32_t *)scratch;
    td_mean_sums(p, in0, 1, acc);
    for (int32_t i = 0; i < p->num_outputs; ++i) {
        out0[i] = td_sat_s16(td_mean_value(p, acc[i]));
    }
}
