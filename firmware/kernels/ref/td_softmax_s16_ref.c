/*
 * td_softmax_s16_ref.c - int16 -> int16 SOFTMAX along the last axis, as TFLite Micro's
 * SoftmaxInt16: per row, the differences to the row maximum are rescaled so that [-65535, 0]
 * is [-10, 0] (mult/shift: input scale * beta / (10 / 65535)), recentred and looked up in
 * the exp table (Q0.15); their int32 sum is normalised by its leading zeros, recentred and
 * looked up in the 1 / (1 + x) table, and each exp is scaled by that reciprocal with one
 * rounding shift, clamped to [0, 32767] (output scale 1/32768, zero point 0). The exps are
 * kept in the output row meanwhile (no scratch). Not in place.
 */
#include "td_kernels.h"
#include "td_lut16.h"

static inline int32_t td_clz32(uint32_t v)
{
    int32_t n = 0;
    while (n < 32 && !(v & 0x80000000u)) {
        v <<= 1;
        ++n;
    }
    return n;
}

void td_softmax_s16_ref(const td_softmax_s16_params_t *p, const int16_t *in0, int16_t *out0)
{
    for (int32_t r = 0; r < p->rows; ++r) {
        const int16_t *x = in0 + r * p->depth;
        int16_t *y = out0 + r * p->depth;
        int16_t max = INT16_MIN;
        for (int32_t c = 0; c < p->depth; ++c) {
            max = x[c] > max ? x[c] : max;
        }
        int32_t sum = 0;
        for (int32_t c = 0; c < p->depth; ++c) {
            const int32_t diff = td_requantize((int32_t)x[c] - max, p->mult, p->shift);
            y[c] = td_lut16_lookup(p->exp_lut, td_sat_s16(diff + 32767));
            sum += y[c];
        }
        /* sum >= the maximum's exp (about 32767), so 1 <= clz <= 17 */
        const int32_t clz = td_clz32((uint32_t)sum);
        const int32_t shifted = (int32_t)((((int64_t)sum << (clz - 1)) + (1 << 13)) >> 14);
        const int16_t recip = td_lut16_lookup(p->inv_lut,
                                              td_sat_s16(shifted - ((1 << 15) + (1 << 16))));
        const int32_t right = 31 - clz;
        const int64_t round = (int64_t)1 << (right - 1);
        for (int32_t c = 0; c < p->depth; ++c) {
            const int32_t v = (int32_t)(((int64_t)y[c] * recip + round) >> right);
            y[c] = (int16_t)td_clamp_s32(v, 0, INT16_MAX);
        }
    }
}
