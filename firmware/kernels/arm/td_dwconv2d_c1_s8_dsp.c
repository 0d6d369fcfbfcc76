/*
 * td_dwconv2d_c1_s8_dsp.c - int8 depthwise convolution of ONE input channel with any depth
 * multiplier M (out_c = M: in effect a convolution with M output channels), any kernel size,
 * stride, padding and dilation, with the DSP extension and no scratch; bit-exact with
 * td_dwconv2d_s8_ref. (TFLM's micro_speech model: 8x10 kernel, stride 2, M = 8.)
 *
 * Per output pixel the kernel rows and columns inside the image are found once (taps outside
 * are skipped, as in the reference). With dilation_w = 1 each kernel row is a run of
 * contiguous input bytes; four of them are read with one LDR and widened with the input
 * offset by SXTAB16 / SXTAB16 ROR #8 once for four channels, whose four filter values are
 * one LDR and two SXTB16 each, accumulated by two SMLAD. A partial last block is read
 * bytewise (zero above). Other dilations take the taps one by one.
 *
 * Parameters: td_dwconv2d_params_t as for td_dwconv2d_s8_ref with in_c = 1, and
 *   filter: int8 [M][filter_h][filter_w] (the model's [1][h][w][M] transposed on the host,
 *           the same bytes);
 *   bias, mult, shift: the reference's; requant_form as chosen on the host. No scratch.
 */
#include "td_kernels.h"

#include "td_simd.h"
#include "td_tap_range.h"

int32_t td_dwconv2d_c1_s8_dsp_scratch_size(const td_dwconv2d_params_t *p)
{
    (void)p;
    return 0;
}

/* the first n (1..3) bytes at q as a word, zero above */
static inline int32_t td_c1_partial(const int8_t *q, int32_t n)
{
    uint32_t v = (uint8_t)q[0];
    if (n > 1) {
        v |= (uint32_t)(uint8_t)q[1] << 8;
    }
    if (n > 2) {
        v |= (uint32_t)(uint8_t)q[2] << 16;
    }
    return (int32_t)v;
}

void td_dwconv2d_c1_s8_dsp(const td_dwconv2d_params_t *p, const int8_t *in0, int8_t *out0)
{
    const int32_t m_count = p->out_c;
    const int32_t fh = p->filter_h, fw = p->filter_w, dh = p->dilation_h, dw = p->dilation_w;
    const int32_t in_h = p->in_h, in_w = p->in_w, taps = fh * fw;
    const int32_t off = p->input_offset, off2 = td_pack_off(off);
    const int32_t zp2p1 = 2 * p->output_offset + 1;
    int8_t *dst = out0;
    for (int32_t b = 0; b < p->batches; ++b) {
        const int8_t *image = in0 + b * in_h * in_w;
        for (int32_t oy = 0; oy < p->out_h; ++oy) {
            const int32_t iy0 = oy * p->stride_h - p->pad_h;
            int32_t ky0, ky1;
            td_tap_range(iy0, dh, fh, in_h, &ky0, &ky1);
            for (int32_t ox = 0; ox < p->out_w; ++ox, dst += m_count) {
                const int32_t ix0 = ox * p->stride_w - p->pad_w;
                int32_t kx0, kx1;
                td_tap_range(ix0, dw, fw, in_w, &kx0, &kx1);
                const int32_t n = kx1 - kx0, full = n >> 2, tail = n & 3;
                for (int32_t m = 0; m < m_count; m += 4) {
                    /* four channels at once (the last group repeats its last channel) */
                    const int32_t cnt = m_count - m < 4 ? m_count - m : 4;
                    const int8_t *f0 = p->filter + m * taps;
                    const int8_t *f1 = f0 + (cnt > 1 ? taps : 0);
                    const int8_t *f2 = f0 + (cnt > 2 ? 2 * taps : 0);
                    const int8_t *f3 = f0 + (cnt > 3 ? 3 * taps : 0);
                    int32_t a[4] = { 0, 0, 0, 0 };
                    if (p->bias != 0) {
                        for (int32_t j = 0; j < cnt; ++j) {
                            a[j] = p->bias[m + j];
                        }
                    }
                    int32_t a0 = a[0], a1 = a[1], a2 = a[2], a3 = a[3];
                    for (int32_t ky = ky0; ky < ky1 && n > 0; ++ky) {
                        const int8_t *x = image + (iy0 + ky * dh) * in_w + ix0 + kx0 * dw;
                        const int32_t t0 = ky * fw + kx0;
                        const int8_t *w0 = f0 + t0, *w1 = f1 + t0, *w2 = f2 + t0, *w3 = f3 + t0;
                        if (dw != 1) {
                            for (int32_t kx = 0; kx < n; ++kx) {
                                const int32_t xv = x[kx * dw] + off;
                                a0 += xv * w0[kx];
                                a1 += xv * w1[kx];
                                a2 += xv * w2[kx];
                                a3 += xv * w3[kx];
                            }
                            continue;
                        }
                        for (int32_t q = 0; q < full; ++q, x += 4, w0 += 4, w1 += 4, w2 += 4,
                             w3 += 4) {
                            const int32_t xv = td_read_s8x4(x);
                            const int32_t xe = td_sxtab16(off2, xv), xo = td_sxtab16_ror8(off2, xv);
                            int32_t v = td_read_s8x4(w0);
                            a0 = td_smlad(xo, td_sxtb16_ror8(v), td_smlad(xe, td_sxtb16(v), a0));
                            v = td_read_s8x4(w1);
                            a1 = td_smlad(xo, td_sxtb16_ror8(v), td_smlad(xe, td_sxtb16(v), a1));
                            v = td_read_s8x4(w2);
                            a2 = td_smlad(xo, td_sxtb16_ror8(v), td_smlad(xe, td_sxtb16(v), a2));
                            v = td_read_s8x4(w3);
                            a3 = td_smlad(xo, td_sxtb16_ror8(v), td_smlad(xe, td_sxtb16(v), a3));
                        }
                        if (tail) {
                            const int32_t xv = td_c1_partial(x, tail);
                            const int32_t xe = td_sxtab16(off2, xv), xo = td_sxtab16_ror8(off2, xv);
                            int32_t v = td_c1_partial(w0, tail);
                            a0 = td_smlad(xo, td_sxtb16_ror8(v), td_smlad(xe, td_sxtb16(v), a0));
                            v = td_c1_partial(w1, tail);
                            a1 = td_smlad(xo, td_sxtb16_ror8(v), td_smlad(xe, td_sxtb16(v), a1));
                            v = td_c1_partial(w2, tail);
                            a2 = td_smlad(xo, td_sxtb16_ror8(v), td_smlad(xe, td_sxtb16(v), a2));
                            v = td_c1_partial(w3, tail);
                            a3 = td_smlad(xo, td_sxtb16_ror8(v), td_smlad(xe, td_sxtb16(v), a3));
                        }
                    }
                    a[0] = a0;
                    a[1] = a1;
                    a[2] = a2;
                    a[3] = a3;
                    for (int32_t j = 0; j < cnt; ++j) {
                        const int32_t o = m + j;
                        int32_t v;
                        if (p->requant_form) {
                            const int32_t e = -p->shift[o];
                            v = td_requant_round_form(a[j], p->mult[o], e,
                                                      td_requant_rnd(zp2p1, e));
                        } else {
                            v = td_requantize(a[j], p->mult[o], p->shift[o]) + p->output_offset;
                        }
                        dst[o] = (int8_t)td_clamp_s32(v, p->act_min, p->act_max);
                    }
                }
            }
        }
    }
}
