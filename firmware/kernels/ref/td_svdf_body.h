/*
 * td_svdf_body.h - the body of TFLite Micro's integer SVDF reference
 * (EvalIntegerSvdfReference<T>), written once for both state types. Private to
 * td_svdf_s8_s16_ref.c and td_svdf_s8_s8_ref.c, which define TD_SVDF_STATE_BITS (16 or 8:
 * the state and time-weight element type) before including it, once per translation unit,
 * and then call the static td_svdf_body from their public kernel. The feature result
 * saturates to the state type's range.
 *
 * Per invocation: shift the whole state left by one element; write each filter's feature
 * dot product (requantized, saturated to the state type, plus the state zero point) into the
 * newest time slot; dot every filter's memory with its time weights; sum `rank` filters per
 * unit with the bias; requantize to int8. Multipliers come from the host (recurrent.py). An
 * int8 state stores (requantized value + zero point) with C's conversion (two's complement
 * wrap), as TFLM does.
 */
#include <stddef.h>

#include "td_kernels.h"

#if TD_SVDF_STATE_BITS == 16
#define TD_SVDF_STATE_T int16_t
#define TD_SVDF_STATE_MIN INT16_MIN
#define TD_SVDF_STATE_MAX INT16_MAX
#elif TD_SVDF_STATE_BITS == 8
#define TD_SVDF_STATE_T int8_t
#define TD_SVDF_STATE_MIN INT8_MIN
#define TD_SVDF_STATE_MAX INT8_MAX
#else
#error "define TD_SVDF_STATE_BITS (16 or 8) before including td_svdf_body.h"
#endif

static void td_svdf_body(const td_svdf_params_t *p, const int8_t *in0,
                         const TD_SVDF_STATE_T *state, int8_t *out0, void *scratch)
{
    /* The state is a variable tensor in the (writable) arena, passed like every input. */
    TD_SVDF_STATE_T *st = (TD_SVDF_STATE_T *)(uintptr_t)state;
    const TD_SVDF_STATE_T *wt = (const TD_SVDF_STATE_T *)p->weights_time;
    const int32_t nb = p->batches, ni = p->input_size, nf = p->num_filters;
    const int32_t nu = p->num_units, nr = p->rank, nm = p->memory_size;
    int32_t *filt = (int32_t *)scratch;       /* [nb][nf] */
    int32_t *acc = filt + nb * nf;            /* [nb][nu] */

    /* 1. Shift the whole state left by one element (TFLM moves the flat buffer). */
    const int32_t total = nb * nf * nm;
    for (int32_t i = 0; i + 1 < total; ++i) {
        st[i] = st[i + 1];
    }

    /* 2. Feature matmul into the newest slot of every filter's memory. */
    for (int32_t b = 0; b < nb; ++b) {
        const int8_t *x = in0 + b * ni;
        const int8_t *w = p->weights_feature;
        TD_SVDF_STATE_T *dst = st + b * nf * nm + (nm - 1);
        for (int32_t r = 0; r < nf; ++r) {
            int32_t dot = 0;
            for (int32_t c = 0; c < ni; ++c) {
                dot += (int32_t)w[c] * ((int32_t)x[c] + p->input_offset);
            }
            w += ni;
            dot = td_requantize(dot, p->mult1, p->shift1);
            dot = td_clamp_s32(dot, TD_SVDF_STATE_MIN, TD_SVDF_STATE_MAX);
            *dst = (TD_SVDF_STATE_T)(p->state_zp + dot);
            dst += nm;
        }
    }

    /* 3. Time weights: one dot product per filter over its memory. */
    for (int32_t b = 0; b < nb; ++b) {
        const TD_SVDF_STATE_T *s = st + b * nm * nf;
        const TD_SVDF_STATE_T *v = wt;
        for (int32_t f = 0; f < nf; ++f) {
            int32_t sum = 0;
            for (int32_t j = 0; j < nm; ++j) {
                sum += (int32_t)*v++ * ((int32_t)*s++ - p->state_zp);
            }
            filt[b * nf + f] = sum;
        }
    }

    /* 4. Bias, reduce `rank` filters per unit, 5. requantize to int8. */
    for (int32_t b = 0; b < nb; ++b) {
        for (int32_t u = 0; u < nu; ++u) {
            int32_t a = p->bias != NULL ? p->bias[u] : 0;
            for (int32_t k = 0; k < nr; ++k) {
                a += filt[b * nf + u * nr + k];
            }
            acc[b * nu + u] = a;
        }
    }
    for (int32_t i = 0; i < nb * nu; ++i) {
        const int32_t v = td_requantize(acc[i], p->mult2, p->shift2) + p->output_offset;
        out0[i] = td_sat_s8(v);
    }
}
