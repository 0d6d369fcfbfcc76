/*
 * td_fully_connected_s16_ref.c - 16x8 FULLY_CONNECTED (int16 activations, int8 weights,
 * int64 bias), bit-exact with TFLite Micro's reference: int64 sum of w * x (the int16 zero
 * point is 0), plus bias, requantized per channel from the int64 accumulator
 * (td_requant64.h), clamped to the fused activation range in int16.
 */
#include <stddef.h>

#include "td_kernels.h"
#include "td_requant64.h"

void td_fully_connected_s16_ref(const td_fully_connected_s16_params_t *p, const int16_t *in0,
                                int16_t *out0)
{
    for (int32_t b = 0; b < p->batches; ++b) {
        const int16_t *x = in0 + b * p->accum_depth;
        for (int32_t o = 0; o < p->out_c; ++o) {
            const int8_t *w = p->filter + o * p->accum_depth;
            int64_t acc = 0;
            for (int32_t d = 0; d < p->accum_depth; ++d) {
                acc += (int64_t)((int32_t)w[d] * (int32_t)x[d]);
            }
            if (p->bias != NULL) {
                acc += p->bias[o];
            }
            const int32_t v = td_requantize64(acc, p->mult[o], p->shift[o]);
            out0[b * p->out_c + o] = (int16_t)td_clamp_s32(v, p->act_min, p->act_max);
        }
    }
}
