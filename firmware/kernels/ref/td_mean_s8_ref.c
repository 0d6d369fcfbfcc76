/*
 * td_mean_s8_ref.c - int8 MEAN over any set of axes, as TFLite Micro's reference.
 *
 * int32 sums per output element (in the scratch buffer), then
 * out = clamp(requantize(sum - zp * count, mult, shift) + out_zp) with TFLite's multiplier
 * that folds 1/count in (computed on the host). Sums wrap in two's complement as TFLite's.
 * scratch: int32_t[num_outputs], 4-byte aligned.
 */
#include "td_kernels.h"
#include "td_mean_body.h"

void td_mean_s8_ref(const td_mean_params_t *p, const int8_t *in0, int8_t *out0,
                    void *scratch)
{
    td_mean_body(p, in0, out0, 0, scratch);
}
