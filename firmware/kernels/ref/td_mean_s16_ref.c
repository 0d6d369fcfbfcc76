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
    td_mean_body(p, in0, out0, 1, scratch);
}
