/*
 * td_logistic_s16_ref.c - int16 LOGISTIC as TFLite Micro's int16 reference: the input
 * rescaled to 2^9 steps per table interval, sigmoid(|x|) interpolated in the shared table,
 * mirrored for negative x (sigmoid(-x) = 1 - sigmoid(x)), rounded to Q0.15
 * (td_sigmoid16.h). Input and output zero points are 0, the output scale 2^-15 (the host
 * checked). Safe in place.
 */
#include "td_kernels.h"
#include "td_sigmoid16.h"

void td_logistic_s16_ref(const td_sigmoid16_params_t *p, const int16_t *in0, int16_t *out0)
{
    for (int32_t i = 0; i < p->size; ++i) {
        out0[i] = td_logistic16(p->lut, td_sigmoid16_scale(in0[i], p->mult, p->shift));
    }
}
