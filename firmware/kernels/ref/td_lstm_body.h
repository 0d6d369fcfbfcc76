/*
 * td_lstm_body.h - private to td_lstm_s8_ref.c and td_lstm_s16_ref.c: TFLite Micro's integer
 * UNIDIRECTIONAL_SEQUENCE_LSTM (lstm_eval.h) for int8 activations (EvalLstm<int8, int8,
 * int16, int32>) and 16x8 (EvalLstm<int16, int8, int16, int64>), written once; the including
 * file picks the path with td_accum.h's TD_ACCUM (TD_ACCUM_S8 or TD_ACCUM_S16).
 *
 * Per time step and batch row (rows are independent, so the order is TFLM's):
 *   gate_g = act(sat16(FC_in_g(x) + FC_rec_g(h)))   for g in input, forget, cell, output,
 *   c = sat16(c * f + i * g_cell), optionally clipped,  h = sat(tanh(c) * o),  out_t = h.
 * FC outputs are Q3.12 int16 (requantized from the path's accumulator and saturated), gate
 * outputs Q0.15; the sigmoid and tanh are td_sigmoid16.h's. The bias is int32 (`bias`) on
 * the int8 path and int64 (`bias64`) on the 16x8 one; the 16x8 zero points are 0.
 */
#include <string.h>

#include "td_accum.h"
#include "td_kernels.h"
#include "td_sigmoid16.h"

#if TD_ACCUM == TD_ACCUM_S16
#define TD_LSTM_BIAS bias64
typedef int64_t td_lstm_bias_t;
#else
#define TD_LSTM_BIAS bias
typedef int32_t td_lstm_bias_t;
#endif

/* FC of one row to Q3.12: sat16(requantize(sum w * (x + offset) [+ bias])). */
static void td_lstm_fc(const TD_ACC_ELEM_T *x, int32_t n, int32_t offset, const int8_t *w,
                       const td_lstm_bias_t *bias, int32_t mult, int32_t shift, int32_t rows,
                       int16_t *out)
{
    for (int32_t r = 0; r < rows; ++r) {
        TD_ACC_T acc = 0;
        for (int32_t k = 0; k < n; ++k) {
            acc = TD_ACC_ADD(acc, (int32_t)w[k] * ((int32_t)x[k] + offset));
        }
        w += n;
        if (bias != NULL) {
            acc = TD_ACC_ADD(acc, bias[r]);
        }
        out[r] = td_sat_s16(TD_ACC_REQUANT(acc, mult, shift));
    }
}

static void td_lstm_gate(const td_lstm_params_t *p, int32_t g, const TD_ACC_ELEM_T *x,
                         const TD_ACC_ELEM_T *h, int16_t *gate, int16_t *tmp)
{
    const int32_t S = p->state_size, I = p->input_size;
    td_lstm_fc(x, I, p->input_offset, p->in_weights + g * S * I, p->TD_LSTM_BIAS + g * S,
               p->in_mult[g], p->in_shift[g], S, gate);
    td_lstm_fc(h, S, p->hidden_offset, p->rec_weights + g * S * S, NULL, p->rec_mult[g],
               p->rec_shift[g], S, tmp);
    for (int32_t s = 0; s < S; ++s) {
        const int32_t v = td_sat_s16((int32_t)gate[s] + tmp[s]);
        gate[s] = g == 2 ? td_tanh16(p->sigmoid_lut, v * 3)
                         : td_logistic16(p->sigmoid_lut, v * 3);
    }
}

static inline void td_lstm_body(const td_lstm_params_t *p, const TD_ACC_ELEM_T *in0,
                                const TD_ACC_ELEM_T *hidden, const int16_t *cell,
                                TD_ACC_ELEM_T *out0, void *scratch)
{
    /* The states are variable tensors in the (writable) arena, passed like every input. */
    TD_ACC_ELEM_T *hid = (TD_ACC_ELEM_T *)(uintptr_t)hidden;
    int16_t *cel = (int16_t *)(uintptr_t)cell;
    const int32_t S = p->state_size, I = p->input_size, B = p->batches, T = p->time_steps;
    int16_t *ig = (int16_t *)scratch, *fg = ig + S, *cg = fg + S, *og = cg + S, *tmp = og + S;

    for (int32_t outer = 0; outer < (p->time_major ? T : B); ++outer) {
        for (int32_t inner = 0; inner < (p->time_major ? B : T); ++inner) {
            const int32_t b = p->time_major ? inner : outer;
            const int32_t t = p->time_major ? outer : inner;
            const int32_t row = p->time_major ? t * B + b : b * T + t;
            const TD_ACC_ELEM_T *x = in0 + row * I;
            TD_ACC_ELEM_T *h = hid + b * S;
            int16_t *c = cel + b * S;

            td_lstm_gate(p, 1, x, h, fg, tmp);
            td_lstm_gate(p, 0, x, h, ig, tmp);
            td_lstm_gate(p, 2, x, h, cg, tmp);
            for (int32_t s = 0; s < S; ++s) {
                const int32_t kept = td_sat_s16(td_requantize((int32_t)fg[s] * c[s],
                                                              p->forget_mult,
                                                              p->forget_shift));
                const int32_t added = td_sat_s16(td_requantize((int32_t)ig[s] * cg[s],
                                                               p->input_mult,
                                                               p->input_shift));
                int32_t v = td_sat_s16(kept + added);
                if (p->cell_clip > 0) {
                    v = td_clamp_s32(v, -p->cell_clip, p->cell_clip);
                }
                c[s] = (int16_t)v;
            }
            td_lstm_gate(p, 3, x, h, og, tmp);
            for (int32_t s = 0; s < S; ++s) {
                const int32_t th = td_tanh16(p->sigmoid_lut,
                                             td_sigmoid16_scale(c[s], p->cell_tanh_mult,
                                                                p->cell_tanh_shift));
                const int32_t v = td_requantize(th * og[s], p->hidden_mult, p->hidden_shift)
                                  + p->hidden_zp;
                h[s] = (TD_ACC_ELEM_T)TD_ACC_SAT(v);
            }
            memcpy(out0 + row * S, h, (size_t)S * sizeof(TD_ACC_ELEM_T));
        }
    }
}
