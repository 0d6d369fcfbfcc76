/*
 * td_mul_s16_ref.c - int16 MUL with broadcasting (zero points 0), bit-exact with TFLite
 * Micro: a * b rescaled once by scale0 * scale1 / out_scale and clamped, as the int8 kernel;
 * both operands in the arena. Safe in place.
 */
#include "td_bcast_rows.h"
#include "td_kernels.h"

static inline int16_t td_mul16_one(const td_mul_params_t *p, int32_t a, int32_t b)
{
    const int32_t prod = (a + p->in0_offset) * (b + p->in1_offset);
    const int32_t out = td_requantize(prod, p->out_mult, p->out_shift) + p->out_offset;
    return (int16_t)td_clamp_s32(out, p->act_min, p->act_max);
}

void td_mul_s16_ref(const td_mul_params_t *p, const int16_t *in0, const int16_t *in1,
                    int16_t *out0)
{
    const int32_t *d = p->out_dims;
    const int32_t *s0 = p->in0_strides;
    const int32_t *s1 = p->in1_strides;
    const int16_t *in1_data = in1; /* in1_const is NULL for int16 */
    int16_t *out = out0;
    td_bcast_rows_t row;
    if (!td_bcast_rows_begin(&row, d)) {
        return;
    }
    do {
        const int16_t *a = in0 + row.off0;
        const int16_t *b = in1_data + row.off1;
        for (int32_t i5 = 0; i5 < d[5]; ++i5) {
            *out++ = td_mul16_one(p, a[i5 * s0[5]], b[i5 * s1[5]]);
        }
    } while (td_bcast_rows_next(&row, d, s0, s1));
}
