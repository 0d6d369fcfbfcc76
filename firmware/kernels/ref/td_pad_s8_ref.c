/*
 * td_pad_s8_ref.c - int8 PAD / PADV2 (constant padding), as TFLite Micro's reference.
 *
 * The output is filled with the pad value, then each innermost input row is copied to its
 * place. Shapes are right-aligned to TD_PAD_DIMS dims on the host. Not in place.
 */
#include <string.h>

#include "td_kernels.h"

void td_pad_s8_ref(const td_pad_params_t *p, const int8_t *in0, int8_t *out0)
{
    const int32_t *id = p->in_dims;
    const int32_t *od = p->out_dims;
    const int32_t *b = p->pad_before;
    const int32_t total = od[0] * od[1] * od[2] * od[3] * od[4];
    memset(out0, (int8_t)p->pad_value, (size_t)total);
    const int8_t *src = in0;
    for (int32_t i0 = 0; i0 < id[0]; ++i0) {
        for (int32_t i1 = 0; i1 < id[1]; ++i1) {
            for (int32_t i2 = 0; i2 < id[2]; ++i2) {
                for (int32_t i3 = 0; i3 < id[3]; ++i3) {
                    const int32_t o = (((((i0 + b[0]) * od[1] + (i1 + b[1])) * od[2]
                                         + (i2 + b[2])) * od[3] + (i3 + b[3])) * od[4])
                                      + b[4];
                    memcpy(out0 + o, src, (size_t)id[4]);
                    src += id[4];
                }
            }
        }
    }
}
