/*
 * td_fully_connected_body.h - private to td_fully_connected_s8_ref.c,
 * td_fully_connected_s16_ref.c and td_fully_connected_s16_b32_ref.c: TFLite Micro's
 * reference FULLY_CONNECTED for one of its paths (td_accum.h, chosen by the including file,
 * which also names the params struct TD_FC_PARAMS), written once:
 *
 *   out[b, o] = clamp(requant(sum over d of (in[b, d] + input_offset)
 *               * (filter[o, d] + filter_offset) + bias[o], mult[o], shift[o])
 *               + output_offset, act_min, act_max)
 *
 * (offsets 0 on the 16x8 paths). No scratch memory.
 */
#include <stddef.h>

#include "td_accum.h"
#include "td_kernels.h"

static inline void td_fully_connected_body(const TD_FC_PARAMS *p, const TD_ACC_ELEM_T *in0,
                                           TD_ACC_ELEM_T *out0)
{
    for (int32_t b = 0; b < p->batches; ++b) {
        const TD_ACC_ELEM_T *row = in0 + b * p->accum_depth;
        for (int32_t o = 0; o < p->out_c; ++o) {
            const int8_t *w = p->filter + o * p->accum_depth;
            TD_ACC_T acc = 0;
            for (int32_t d = 0; d < p->accum_depth; ++d) {
                acc = TD_ACC_ADD(acc, ((int32_t)row[d] + TD_ACC_IN_OFFSET(p))
                                      * ((int32_t)w[d] + TD_ACC_FILTER_OFFSET(p)));
            }
            if (p->TD_ACC_BIAS != NULL) {
                acc = TD_ACC_ADD(acc, p->TD_ACC_BIAS[o]);
            }
            const int32_t v = TD_ACC_REQUANT(acc, p->mult[o], p->shift[o]) + TD_ACC_OUT_OFFSET(p);
            out0[b * p->out_c + o] = (TD_ACC_ELEM_T)td_clamp_s32(v, p->act_min, p->act_max);
        }
    }
}
