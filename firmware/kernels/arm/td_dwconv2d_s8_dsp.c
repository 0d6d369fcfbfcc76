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

#include "td_dwconv2d_dsp.h"
#include "td_simd.h"

int32_t td_dwconv2d_s8_dsp_scratch_size(const td_dwconv2d_params_t *p)
{
    (void)p;
    return 0;
}

/* the output of channel c (td_dwconv2d_dsp.h's td_dw_out with this layer's parameters) */
static inline __attribute__((always_inline)) int8_t
td_dwg_out(int32_t acc, const td_dwconv2d_params_t *p, int32_t c, int32_t zp2p1,
           const int round_form)
{
    return td_dw_out(acc, p->mult[c], p->shift[c], zp2p1, p->output_offset, p->act_min,
                     p->act_max, round_form, 0);
}

static inline __attribute__((always_inline)) void
td_dw_body(const td_dwconv2d_params_t *p, const int8_t *in0, int8_t *out0, const int round_form)
{
    const int32_t ch = p->in_c, ch4 = ch & ~3;
    const int32_t in_h = p->in_h, in_w = p->in_w, fw = p->filter_w;
    const int32_t dh = p->dilation_h, dw = p->dilation_w;
    const int32_t off = p->input_offset, off2 = td_pack_off(off);
    const int32_t zp2p1 = 2 * p->output_offset + 1;
    const int32_t *bias = p->bias;
    const int32_t in_row = in_w * ch;
    int8_t *dst = out0;
    for (int32_t b = 0; b < p->batches; ++b) {
        const int8_t *image = in0 + b * in_h * in_row;
        for (int32_t oy = 0; oy < p->out_h; ++oy) {
            td_dw_window_t win;
            td_dw_rows(p, oy, &win);
            for (int32_t ox = 0; ox < p->out_w; ++ox, dst += ch) {
                td_dw_cols(p, ox, &win);
                const int32_t ky0 = win.ky0, ky1 = win.ky1, kx0 = win.kx0;
                const int32_t nx = win.kx1 - kx0;
                const int32_t inside = nx > 0 && ky1 > ky0;
                /* (no tap inside: the loops below do not run; no pointer leaves the image) */
                const int8_t *src0 = inside ? image + (win.iy0 + ky0 * dh) * in_row
                                                  + (win.ix0 + kx0 * dw) * ch
                                            : image;
                const int8_t *w0 = inside ? p->filter + (ky0 * fw + kx0) * ch : p->filter;
                for (int32_t c = 0; c < ch4; c += 4) {
                    int32_t a0, a1, a2, a3;
                    td_dw_bias4(bias, c, &a0, &a1, &a2, &a3);
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
                    dst[c] = td_dwg_out(a0, p, c, zp2p1, round_form);
                    dst[c + 1] = td_dwg_out(a1, p, c + 1, zp2p1, round_form);
                    dst[c + 2] = td_dwg_out(a2, p, c + 2, zp2p1, round_form);
                    dst[c + 3] = td_dwg_out(a3, p, c + 3, zp2p1, round_form);
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
                    dst[c] = td_dwg_out(a, p, c, zp2p1, round_form);
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
