/*
 * td_tanh_s16_ref.c - int16 TANH as TFLite Micro's int16 reference: tanh(x) =
 * 2 sigmoid(2x) - 1 on the shared table at 2^8 steps per interval (the doubling), centred
 * and mirrored for negative x, rounded to Q0.15 with an arithmetic shift (td_sigmoid16.h).
 * Input and output zero points are 0, the output scale 2^-15 (the host checked). Safe in
 * place.
 */
#include "td_kernels.h"
#include "td_sigmoid16.h"

void td_tanh_s16_ref(const td_sigmoid16_params_t *p, const int16_t *in0, int16_t *out0)
{
    for (int32_t i = 0; i < p->size; ++i) {
        out0[i] = td_tanh16(p->lut, td_sigmoid16_scale(in0[i], p->mult, p->shift));
    }
}
