/*
 * td_fully_connected_s8_dsp.c - int8 fully connected layer with the DSP extension, bit-exact
 * with td_fully_connected_s8_ref; no scratch.
 *
 * out[b][o] = bias[o] + dot(in[b] + input_offset, filter[o]), requantized per feature. Both
 * operands stay int8 in memory: per block of four inputs one LDR and two SXTAB16 widen the
 * input (adding the offset) once for four filter rows, each widened by one LDR and two
 * SXTB16 and accumulated by two SMLAD (td_gemm_s8_dsp.h explains the lane order). A partial
 * last block reads the filter bytes past the depth as 0.
 *
 * Parameters: td_fully_connected_params_t as for td_fully_connected_s8_ref with
 * filter_offset = 0 (symmetric weights; the host keeps the reference kernel otherwise);
 * requant_form as chosen on the host. No scratch (the size companion answers 0).
 */
#include "td_kernels.h"

#include "td_gemm_s8_dsp.h"

int32_t td_fully_connected_s8_dsp_scratch_size(const td_fully_connected_params_t *p)
{
    (void)p;
    return 0;
}

/* acc[j] += dot(x, filter rows w[j]) over k values for j < 4 (rows past `rows` unused) */
static inline void td_dot_rows4(const int8_t *x, const int8_t *w0, int32_t k, int32_t off2,
                                int32_t rows, int32_t acc[4])
{
    const int8_t *w1 = rows > 1 ? w0 + k : w0, *w2 = rows > 2 ? w0 + 2 * k : w0;
    const int8_t *w3 = rows > 3 ? w0 + 3 * k : w0;
    int32_t a0 = acc[0], a1 = acc[1], a2 = acc[2], a3 = acc[3];
    const int32_t full = k >> 2;
    for (int32_t q = 0; q <= full; ++q) {
        int32_t xv, v0, v1, v2, v3;
        if (q < full) {
            xv = td_read_s8x4(x + 4 * q);
            v0 = td_read_s8x4(w0 + 4 * q);
            v1 = td_read_s8x4(w1 + 4 * q);
            v2 = td_read_s8x4(w2 + 4 * q);
            v3 = td_read_s8x4(w3 + 4 * q);
        } else if (k & 3) {
            xv = td_read_partial_s8(x + 4 * q, k & 3);
            v0 = td_read_partial_s8(w0 + 4 * q, k & 3);
            v1 = td_read_partial_s8(w1 + 4 * q, k & 3);
            v2 = td_read_partial_s8(w2 + 4 * q, k & 3);
            v3 = td_read_partial_s8(w3 + 4 * q, k & 3);
        } else {
            break;
        }
        const int32_t xe = td_sxtab16(off2, xv), xo = td_sxtab16_ror8(off2, xv);
        a0 = td_smlad(xo, td_sxtb16_ror8(v0), td_smlad(xe, td_sxtb16(v0), a0));
        a1 = td_smlad(xo, td_sxtb16_ror8(v1), td_smlad(xe, td_sxtb16(v1), a1));
        a2 = td_smlad(xo, td_sxtb16_ror8(v2), td_smlad(xe, td_sxtb16(v2), a2));
        a3 = td_smlad(xo, td_sxtb16_ror8(v3), td_smlad(xe, td_sxtb16(v3), a3));
    }
    acc[0] = a0;
    acc[1] = a1;
    acc[2] = a2;
    acc[3] = a3;
}

void td_fully_connected_s8_dsp(const td_fully_connected_params_t *p, const int8_t *in0,
                               int8_t *out0)
{
    const int32_t k = p->accum_depth;
    const int32_t oc = p->out_c;
    const int32_t off2 = td_pack_off(p->input_offset);
    const int32_t zp2p1 = 2 * p->output_offset + 1;
    const int32_t *bias = p->bias, *mult = p->mult, *shift = p->shift;
    for (int32_t r = 0; r < p->batches; ++r) {
        const int8_t *x = in0 + r * k;
        int8_t *d = out0 + r * oc;
        for (int32_t o = 0; o < oc; o += 4) {
            const int32_t rows = oc - o < 4 ? oc - o : 4;
            int32_t acc[4];
            for (int32_t j = 0; j < 4; ++j) {
                acc[j] = bias != 0 && j < rows ? bias[o + j] : 0;
            }
            td_dot_rows4(x, p->filter + o * k, k, off2, rows, acc);
            for (int32_t j = 0; j < rows; ++j) {
                int32_t v;
                if (p->requant_form) {
                    const int32_t e = -shift[o + j];
                    v = td_requant_round_form(acc[j], mult[o + j], e,
                                              td_requant_rnd(zp2p1, e));
                } else {
                    v = td_requantize(acc[j], mult[o + j], shift[o + j]) + p->output_offset;
                }
                d[o + j] = (int8_t)td_clamp_s32(v, p->act_min, p->act_max);
            }
        }
    }
}
