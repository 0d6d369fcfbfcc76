/*
 * td_fully_connected_s16_body.h - private to td_fully_connected_s16_ref.c and
 * td_fully_connected_s16_b32_ref.c: TFLite Micro's 16x8 FULLY_CONNECTED for one of its two
 * accumulators (td_s16_accum.h, chosen by the including file), written once: the sum of
 * w * x (the int16 zero point is 0), plus bias, requantized per channel, clamped to the fused
 * activation range in int16.
 */
#include <stddef.h>

#include "td_kernels.h"
#include "td_s16_accum.h"

static inline void td_fully_connected_s16_body(const td_fully_connected_s16_params_t *p,
                                               const int16_t *in0, int16_t *out0)
{
    for (int32_t b = 0; b < p->batches; ++b) {
        const int16_t *x = in0 + b * p->accum_depth;
        for (int32_t o = 0; o < p->out_c; ++o) {
            const int8_t *w = p->filter + o * p->accum_depth;
            TD_S16_ACC_T acc = 0;
            for (int32_t d = 0; d < p->accum_depth; ++d) {
                acc = TD_S16_ADD(acc, (int32_t)w[d] * (int32_t)x[d]);
            }
            if (p->TD_S16_BIAS != NULL) {
                acc = TD_S16_ADD(acc, p->TD_S16_BIAS[o]);
            }
            const int32_t v = TD_S16_REQUANT(acc, p->mult[o], p->shift[o]);
            out0[b * p->out_c + o] = (int16_t)td_clamp_s32(v, p->act_min, p->act_max);
        }
    }
}
