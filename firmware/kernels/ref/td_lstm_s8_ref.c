/*
 * td_lstm_s8_ref.c - int8 UNIDIRECTIONAL_SEQUENCE_LSTM (8-bit activations and weights,
 * 16-bit cell state), bit-exact with TFLite Micro's integer LSTM (lstm_eval.h).
 *
 * Per time step and batch row (rows are independent, so the order is TFLM's):
 *   gate_g = act(sat16(FC_in_g(x) + FC_rec_g(h)))   for g in input, forget, cell, output,
 *   c = sat16(c * f + i * g_cell), optionally clipped,  h = tanh(c) * o,  out_t = h.
 * FC outputs are Q3.12 int16 (requantized and saturated), gate outputs Q0.15. The sigmoid and
 * tanh are TFLM's 16-bit ones: interpolation in a 256-entry sigmoid table (from the host).
 */
#include <string.h>

#include "td_kernels.h"

static int16_t td_lstm_sigmoid(const uint16_t *lut, int32_t x)
{
    const int32_t v = x * 3;
    const uint32_t a = (uint32_t)(v < 0 ? -v : v);
    const uint32_t uh = a >> 9;
    uint32_t r;
    if (uh >= 255u) {
        r = 0x7FFFu << 10;
    } else {
        const uint32_t ua = lut[uh], ub = lut[uh + 1u];
        r = (ua << 9) + (a & 0x1FFu) * (ub - ua);
    }
    r = v >= 0 ? r + (1u << 9) : (1u << 25) - r + (1u << 9) - 1u;
    return (int16_t)(r >> 10);
}

static int16_t td_lstm_tanh(const uint16_t *lut, int32_t x, int32_t mult, int32_t shift)
{
    const int32_t round = shift > 0 ? (int32_t)1 << (shift - 1) : 0;
    const int32_t v = (x * mult + round) >> shift;
    const uint32_t a = (uint32_t)(v < 0 ? -v : v);
    const uint32_t uh = a >> 8;
    int32_t r;
    if (uh >= 255u) {
        r = 0xFFFF << 8;
    } else {
        const uint32_t ua = lut[uh], ub = lut[uh + 1u];
        r = (int32_t)((ua << 8) + (a & 0xFFu) * (ub - ua));
    }
    r = v >= 0 ? r - (1 << 23) + (1 << 7) : -r + (1 << 23) + (1 << 7) - 1;
    return (int16_t)(r >> 8);
}

/* FC of one row to Q3.12: clamp16(requantize(sum w * (x + offset) [+ bias])). */
static void td_lstm_fc(const int8_t *x, int32_t n, int32_t offset, const int8_t *w,
                       const int32_t *bias, int32_t mult, int32_t shift, int32_t rows,
                       int16_t *out)
{
    for (int32_t r = 0; r < rows; ++r) {
        int32_t acc = 0;
        for (int32_t k = 0; k < n; ++k) {
            acc += (int32_t)w[k] * ((int32_t)x[k] + offset);
        }
        w += n;
        if (bias != NULL) {
            acc += bias[r];
        }
        out[r] = td_sat_s16(td_requantize(acc, mult, shift));
    }
}

static void td_lstm_gate(const td_lstm_params_t *p, int32_t g, const int8_t *x,
                         const int8_t *h, int16_t *gate, int16_t *tmp)
{
    const int32_t S = p->state_size, I = p->input_size;
    td_lstm_fc(x, I, p->input_offset, p->in_weights + g * S * I, p->bias + g * S,
               p->in_mult[g], p->in_shift[g], S, gate);
    td_lstm_fc(h, S, p->hidden_offset, p->rec_weights + g * S * S, NULL, p->rec_mult[g],
               p->rec_shift[g], S, tmp);
    for (int32_t s = 0; s < S; ++s) {
        const int32_t v = td_sat_s16((int32_t)gate[s] + tmp[s]);
        gate[s] = g == 2 ? td_lstm_tanh(p->sigmoid_lut, v, 3, 0)
                         : td_lstm_sigmoid(p->sigmoid_lut, v);
    }
}

void td_lstm_s8_ref(const td_lstm_params_t *p, const int8_t *in0, const int8_t *hidden,
                    const int16_t *cell, int8_t *out0, void *scratch)
{
    /* The states are variable tensors in the (writable) arena, passed like every input. */
    int8_t *hid = (int8_t *)(uintptr_t)hidden;
    int16_t *cel = (int16_t *)(uintptr_t)cell;
    const int32_t S = p->state_size, I = p->input_size, B = p->batches, T = p->time_steps;
    int16_t *ig = (int16_t *)scratch, *fg = ig + S, *cg = fg + S, *og = cg + S, *tmp = og + S;

    for (int32_t outer = 0; outer < (p->time_major ? T : B); ++outer) {
        for (int32_t inner = 0; inner < (p->time_major ? B : T); ++inner) {
            const int32_t b = p->time_major ? inner : outer;
            const int32_t t = p->time_major ? outer : inner;
            const int32_t row = p->time_major ? t * B + b : b * T + t;
            const int8_t *x = in0 + row * I;
            int8_t *h = hid + b * S;
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
                const int32_t th = td_lstm_tanh(p->sigmoid_lut, c[s], p->cell_tanh_mult,
                                                p->cell_tanh_shift);
                const int32_t v = td_requantize(th * og[s], p->hidden_mult, p->hidden_shift)
                                  + p->hidden_zp;
                h[s] = td_sat_s8(v);
            }
            memcpy(out0 + row * S, h, (size_t)S);
        }
    }
}
