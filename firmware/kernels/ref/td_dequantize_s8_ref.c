/*
 * td_dequantize_s8_ref.c - int8 -> float32 DEQUANTIZE by table.
 *
 * TFLite computes (float)(scale * (q - zero_point)) in double precision; the host does the
 * same for the 256 possible inputs, so the device needs neither doubles nor an FPU here.
 * The table holds IEEE-754 bit patterns, copied out with memcpy (no aliasing or alignment
 * assumptions on the output).
 */
#include <string.h>

#include "td_kernels.h"

void td_dequantize_s8_ref(const td_dequantize_params_t *p, const int8_t *in0, float *out0)
{
    const uint32_t *lut = p->lut;
    for (int32_t i = 0; i < p->size; ++i) {
        const uint32_t bits = lut[(int32_t)in0[i] + 128];
        memcpy(&out0[i], &bits, sizeof bits);
    }
}
