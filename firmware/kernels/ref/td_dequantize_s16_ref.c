/*
 * td_dequantize_s16_ref.c - DEQUANTIZE int16 -> float32 as TFLite: (float)(scale * (q - zp))
 * with the product in double (scale is the float32 scale widened on the host and passed as
 * the bits of a double split in two words, so the device computes exactly the host's double).
 */
#include "td_kernels.h"

void td_dequantize_s16_ref(const td_dequantize_s16_params_t *p, const int16_t *in0,
                           float *out0)
{
    union {
        uint64_t u;
        double d;
    } s;
    s.u = ((uint64_t)p->scale_hi << 32) | (uint64_t)p->scale_lo;
    for (int32_t i = 0; i < p->size; ++i) {
        out0[i] = (float)(s.d * (double)((int32_t)in0[i] - p->zero_point));
    }
}
