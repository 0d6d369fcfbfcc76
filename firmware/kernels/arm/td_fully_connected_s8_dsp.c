/*
 * td_fully_connected_s8_dsp.c - int8 fully connected layer with the DSP extension, bit-exact
 * with td_fully_connected_s8_ref; no scratch.
 *
 * out[b][o] = bias[o] + dot(in[b] + input_offset, filter[o]), requantized per feature. Both
 * operands stay int8 in memory: per block of four inputs one LDR and two SXTAB16 widen the
 * input (adding the offset) once for four filter rows (td_dot4_s8_dsp.h; the last one to
 * three rows: three), each widened by one LDR and two SXTB16 and accumulated by two SMLAD
 * (td_gemm_s8_dsp.h explains the lane order). A partial last block reads the filter bytes
 * past the depth as 0.
 *
 * Parameters: td_fully_connected_params_t as for td_fully_connected_s8_ref with
 * filter_offset = 0 (symmetric weights; the host keeps the reference kernel otherwise); when
 * the layer has a bias the host folds the input offset into it (bias[o] + input_offset *
 * sum(filter[o]), the same value modulo 2^32) and passes input_offset = 0; whenever
 * accum_depth % 4 == 0, the whole groups of four filter rows are interleaved per block of
 * four values ([out_c/4][depth/4][4 rows][4], the same bytes; the last out_c % 4 rows as in
 * the reference);
 * requant_form as chosen on the host. No scratch (the size companion answers 0).
 */
#include "td_kernels.h"

#include "td_dot4_s8_dsp.h"
#include "td_gemm_s8_dsp.h"

int32_t td_fully_connected_s8_dsp_scratch_size(const td_fully_connected_params_t *p)
{
    (void)p;
    return 0;
}

/* acc[j] += dot(x + offset, filter row j) over k values for j < 3: w[j] = the rows (a row
 * may repeat when fewer than three remain; its sums are discarded). Whole blocks of four first,
 * without tests, then the partial one. */
static inline void td_dot_rows3(const int8_t *x, const int8_t *const w[3], int32_t k,
                                int32_t off2, int32_t acc[4])
{
    const int8_t *w0 = w[0], *w1 = w[1], *w2 = w[2];
    int32_t a0 = acc[0], a1 = acc[1], a2 = acc[2];
    const int8_t *end = x + (k & ~3);
    while (x != end) {
        const int32_t xv = td_read_s8x4(x);
        x += 4;
        const int32_t xe = td_sxtab16(off2, xv), xo = td_sxtab16_ror8(off2, xv);
        int32_t v = td_read_s8x4(w0);
        w0 += 4;
        a0 = td_smlad(xo, td_sxtb16_ror8(v), td_smlad(xe, td_sxtb16(v), a0));
        v = td_read_s8x4(w1);
        w1 += 4;
        a1 = td_smlad(xo, td_sxtb16_ror8(v), td_smlad(xe, td_sxtb16(v), a1));
        v = td_read_s8x4(w2);
        w2 += 4;
        a2 = td_smlad(xo, td_sxtb16_ror8(v), td_smlad(xe, td_sxtb16(v), a2));
    }
    if (k & 3) {
        const int32_t n = k & 3;
        const int32_t xv = td_read_partial_s8(x, n);
        const int32_t xe = td_sxtab16(off2, xv), xo = td_sxtab16_ror8(off2, xv);
        int32_t v = td_read_partial_s8(w0, n);
        a0 = td_smlad(xo, td_sxtb16_ror8(v), td_smlad(xe, td_sxtb16(v), a0));
        v = td_read_partial_s8(w1, n);
        a1 = td_smlad(xo, td_sxtb16_ror8(v), td_smlad(xe, td_sxtb16(v), a1));
        v = td_read_partial_s8(w2, n);
        a2 = td_smlad(xo, td_sxtb16_ror8(v), td_smlad(xe, td_sxtb16(v), a2));
    }
    acc[0] = a0;
    acc[1] = a1;
    acc[2] = a2;
}

void td_fully_connected_s8_dsp(const td_fully_connected_params_t *p, const int8_t *in0,
                               int8_t *out0)
{
    const int32_t k = p->accum_depth;
    const int32_t oc = p->out_c;
    const int32_t off2 = td_pack_off(p->input_offset);
    const int32_t zp2p1 = 2 * p->output_offset + 1;
    const int32_t *bias = p->bias, *mult = p->mult;
    const int8_t *shift = p->shift;
    const int32_t interleaved = (k & 3) == 0 && k > 0;
    for (int32_t r = 0; r < p->batches; ++r) {
        const int8_t *x = in0 + r * k;
        int8_t *d = out0 + r * oc;
        for (int32_t o = 0; o < oc;) {
            /* four rows through the unrolled loop, else by three */
            const int32_t four = interleaved && oc - o >= 4;
            const int32_t rows = four ? 4 : (oc - o < 3 ? oc - o : 3);
            int32_t acc[4];
            for (int32_t j = 0; j < 4; ++j) {
                acc[j] = bias != 0 && j < rows ? bias[o + j] : 0;
            }
            if (four) {
                const int8_t *w = p->filter + o * k;
                td_dot4_blocks(x, &w, k >> 2, off2, acc);
            } else {
                const int8_t *const w[3] = {
                    p->filter + o * k, p->filter + (o + (rows > 1)) * k,
                    p->filter + (o + (rows > 2 ? 2 : 0)) * k
                };
                td_dot_rows3(x, w, k, off2, acc);
            }
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
            o += rows;
        }
    }
}
