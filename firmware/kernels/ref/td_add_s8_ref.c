/*
 * td_add_s8_ref.c - int8 ADD with broadcasting, bit-exact with TFLite Micro's reference.
 *
 * Each input is offset by its zero point, scaled by 2^left_shift (20), rescaled by its own
 * multiplier to a common scale (twice the larger input scale), summed, rescaled to the
 * output scale, offset and clamped to the fused activation range. All multipliers, shifts,
 * offsets and broadcast strides were computed on the host (tinydeploy/kernels/elementwise.py).
 */
#include <stddef.h>

#include "td_kernels.h"

static inline int8_t td_add_one(const td_add_params_t *p, int32_t a, int32_t b)
{
    const int32_t x = (int32_t)((uint32_t)(a + p->in0_offset) << p->left_shift);
    const int32_t y = (int32_t)((uint32_t)(b + p->in1_offset) << p->left_shift);
    const int32_t sx = td_requantize(x, p->in0_mult, p->in0_shift);
    const int32_t sy = td_requantize(y, p->in1_mult, p->in1_shift);
    const int32_t out = td_requantize(sx + sy, p->out_mult, p->out_shift) + p->out_offset;
    return (int8_t)td_clamp_s32(out, p->act_min, p->act_max);
}

void td_add_s8_ref(const td_add_params_t *p, const int8_t *in0, const int8_t *in1,
                   int8_t *out0)
{
    const int32_t *d = p->out_dims;
    const int32_t *s0 = p->in0_strides;
    const int32_t *s1 = p->in1_strides;
    const int8_t *in1_data = p->in1_const != NULL ? p->in1_const : in1;
    int8_t *out = out0;
    for (int32_t i0 = 0; i0 < d[0]; ++i0) {
        for (int32_t i1 = 0; i1 < d[1]; ++i1) {
            for (int32_t i2 = 0; i2 < d[2]; ++i2) {
                for (int32_t i3 = 0; i3 < d[3]; ++i3) {
                    for (int32_t i4 = 0; i4 < d[4]; ++i4) {
                        const int8_t *a = in0 + i0 * s0[0] + i1 * s0[1] + i2 * s0[2]
                                          + i3 * s0[3] + i4 * s0[4];
                        const int8_t *b = in1_data + i0 * s1[0] + i1 * s1[1] + i2 * s1[2]
                                          + i3 * s1[3] + i4 * s1[4];
                        for (int32_t i5 = 0; i5 < d[5]; ++i5) {
                            *out++ = td_add_one(p, a[i5 * s0[5]], b[i5 * s1[5]]);
                        }
                    }
                }
            }
        }
    }
}
