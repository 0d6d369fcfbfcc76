/*
 * td_dwconv2d_s8_dsp.c - int8 depthwise convolution, any kernel size, stride, dilation,
 * padding and channel count (depth multiplier 1), with the DSP extension, bit-exact with
 * td_dwconv2d_s8_ref.
 *
 * Per output pixel the rows and columns of the kernel that fall inside the image are found
 * once; taps outside are skipped, as in the reference. Channels go four at a time: one load
 * gives four input channels of a tap, SXTAB16 / SXTAB16 ROR #8 add the input offset and split
 * them into the int16 lanes (c0, c2) and (c1, c3); one load gives the tap's four int8 filter
 * values (the reference layout: [kh][kw][C], channels contiguous), widened by SXTB16; SMLABB /
 * SMLATT accumulate every channel separately, starting at the bias. The last in_c % 4
 * channels are accumulated one by one.
 *
 * Parameters: td_dwconv2d_params_t as for td_dwconv2d_s8_ref with depth_multiplier = 1
 * (out_c = in_c); filter, bias, mult and shift are the reference's; requant_form as chosen
 * on the host. No scratch.
 */
#include "td_kernels.h"

#include "td_simd.h"
#include "td_tap_range.h"

int32_t td_dwconv2d_s8_dsp_scratch_size(const td_dwconv2d_params_t *p)
{
    (void)p;
    return 0;
}

static inline __attribute__((always_inline)) int8_t
td_dw_out(int32_t acc, const td_dwconv2d_params_t *p, int32_t c, int32_t zp2p1,
          const int round_form)
{
    int32_t v;
    if (round_form) {
        const int32_t e = -p->shift[c];
        v = td_requant_round_form(acc, p->mult[c], e, td_requant_rnd(zp2p1, e));
    } else {
        v = td_requantize(acc, p->mult[c], p->shift[c]) + p->output_offset;
    }
    return (int8_t)td_clamp_s32(v, p->act_min, p->act_max);
}

static inline __attribute__((always_inline)) void
td_dw_body(const td_dwconv2d_params_t *p, const int8_t *in0, int8_t *out0, const int round_form)
{
    const int32_t ch = p->in_c, ch4 = ch & ~3;
    const int32_t in_h = p->in_h, in_w = p->in_w, fh = p->filter_h, fw = p->filter_w;
    const int32_t dh = p->dilation_h, dw = p->dilation_w;
    const int32_t off = p->input_offset, off2 = td_pack_off(off);
    const int32_t zp2p1 = 2 * p->output_offset + 1;
    const int32_t *bias = p->bias;
    const int32_t in_row = in_w * ch;
    int8_t *dst = out0;
    for (int32_t b = 0; b < p->batches; ++b) {
        const int8_t *image = in0 + b * in_h * in_row;
        for (int32_t oy = 0; oy < p->out_h; ++oy) {
            const int32_t iy0 = oy * p->stride_h - p->pad_h;
            int32_t ky0, ky1;
            td_tap_range(iy0, dh, fh, in_h, &ky0, &ky1);
            for (int32_t ox = 0; ox < p->out_w; ++ox, dst += ch) {
                const int32_t ix0 = ox * p->stride_w - p->pad_w;
                int32_t kx0, kx1;
                td_tap_range(ix0, dw, fw, in_w, &kx0, &kx1);
                const int32_t nx = kx1 - kx0;
                const int32_t inside = nx > 0 && ky1 > ky0;
                /* (no tap inside: the loops below do not run; no pointer leaves the image) */
                const int8_t *src0 =
                    inside ? image + (iy0 + ky0 * dh) * in_row + (ix0 + kx0 * dw) * ch : image;
                const int8_t *w0 = inside ? p->filter + (ky0 * fw + kx0) * ch : p->filter;
                for (int32_t c = 0; c < ch4; c += 4) {
                    int32_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
                    if (bias != 0) {
                        a0 = bias[c];
                        a1 = bias[c + 1];
                        a2 = bias[c + 2];
                        a3 = bias[c + 3];
                    }
                    const int8_t *srow = src0 + c, *wrow = w0 + c;
                    for (int32_t ky = ky0; ky < ky1; ++ky, srow += dh * in_row,
                         wrow += fw * ch) {
                        const int8_t *s = srow, *w = wrow;
                        for (int32_t kx = 0; kx < nx; ++kx, s += dw * ch, w += ch) {
                            const int32_t xv = td_read_s8x4(s), wv = td_read_s8x4(w);
                            const int32_t xe = td_sxtab16(off2, xv), xo = td_sxtab16_ror8(off2, xv);
                            const int32_t we = td_sxtb16(wv), wo = td_sxtb16_ror8(wv);
                            a0 = td_smlabb(xe, we, a0);
                            a2 = td_smlatt(xe, we, a2);
                            a1 = td_smlabb(xo, wo, a1);
                            a3 = td_smlatt(xo, wo, a3);
                        }
                    }
                    dst[c] = td_dw_out(a0, p, c, zp2p1, round_form);
                    dst[c + 1] = td_dw_out(a1, p, c + 1, zp2p1, round_form);
                    dst[c + 2] = td_dw_out(a2, p, c + 2, zp2p1, round_form);
                    dst[c + 3] = td_dw_out(a3, p, c + 3, zp2p1, round_form);
                }
                for (int32_t c = ch4; c < ch; ++c) {
                    int32_t a = bias != 0 ? bias[c] : 0;
                    const int8_t *srow = src0 + c, *wrow = w0 + c;
                    for (int32_t ky = ky0; ky < ky1; ++ky, srow += dh * in_row,
                         wrow += fw * ch) {
                        for (int32_t kx = 0; kx < nx; ++kx) {
                            a += (srow[kx * dw * ch] + off) * wrow[kx * ch];
                        }
                    }
                    dst[c] = td_dw_out(a, p, c, zp2p1, round_form);
                }
            }
        }
    }
}

void td_dwconv2d_s8_dsp(const td_dwconv2d_params_t *p, const int8_t *in0, int8_t *out0)
{
    if (p->requant_form) {
        td_dw_body(p, in0, out0, 1);
    } else {
        td_dw_body(p, in0, out0, 0);
    }
}
