/*
 * td_l2norm_s8_ref.c - int8 L2_NORMALIZATION along the last dimension, bit-exact with
 * TFLite Micro's reference: per row, the int32 sum of squares of (x - zp) gives an inverse
 * square root multiplier (td_inv_sqrt.h), and each output is (x - zp) rescaled by it with
 * 7 extra bits (output scale 1/128, zero point 0, as TFLite's converter sets), saturated.
 * Safe in place.
 */
#include "td_inv_sqrt.h"
#include "td_kernels.h"

void td_l2norm_s8_ref(const td_l2norm_params_t *p, const int8_t *in0, int8_t *out0)
{
    for (int32_t r = 0; r < p->rows; ++r) {
        const int8_t *x = in0 + r * p->depth;
        int8_t *y = out0 + r * p->depth;
        int32_t acc = 0;
        for (int32_t i = 0; i < p->depth; ++i) {
            const int32_t v = (int32_t)x[i] - p->input_zp;
            acc += v * v;
        }
        int32_t mult, shift;
        td_inv_sqrt_multiplier(acc, &mult, &shift);
        for (int32_t i = 0; i < p->depth; ++i) {
            const int32_t v = (int32_t)x[i] - p->input_zp;
            y[i] = td_sat_s8(td_requantize(v, mult, shift + 7));
        }
    }
}
