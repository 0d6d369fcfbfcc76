/*
 * td_dwconv2d_3x3_s8_dsp.c - int8 3x3 depthwise convolution (depth multiplier 1, no
 * dilation, any stride and padding) with the DSP extension, bit-exact with td_dwconv2d_s8_ref.
 *
 * Channels are processed four at a time: one 32-bit load gives four input channels of a tap and
 * one gives the four filter values of that tap (both are contiguous in NHWC / [ky][kx][c]).
 * SXTB16 splits each into even and odd channels as int16 pairs, SADD16 adds the input offset
 * to both lanes (x + input_offset is in [-255, 255]: no lane overflow), and SMLABB / SMLATT
 * accumulate each channel separately. Per output pixel the valid tap rectangle is computed
 * once, so taps outside the image are skipped exactly as the reference skips them (no bias
 * folding is needed, the bias is the reference's); interior pixels take an unrolled 3x3 path.
 * Channels beyond the last multiple of 4 are done in scalar C as in the reference.
 *
 * Parameters: td_dwconv2d_params_t exactly as for td_dwconv2d_s8_ref, restricted to
 * filter_h = filter_w = 3, depth_multiplier = 1 (out_c = in_c), dilation 1. No scratch.
 */
#include "td_kernels.h"

#include "td_simd.h"

int32_t td_dwconv2d_3x3_s8_dsp_scratch_size(const td_dwconv2d_params_t *p)
{
    (void)p;
    return 0;
}

/* a[0..3] += (x[c] + off) * w[c] for the four channels packed in the words x and w */
static inline void td_dw_tap(int32_t x, int32_t w, int32_t off2, int32_t a[4])
{
    const int32_t xe = td_sadd16(td_sxtb16(x), off2);
    const int32_t xo = td_sadd16(td_sxtb16_ror8(x), off2);
    const int32_t we = td_sxtb16(w);
    const int32_t wo = td_sxtb16_ror8(w);
    a[0] = td_smlabb(xe, we, a[0]);
    a[1] = td_smlabb(xo, wo, a[1]);
    a[2] = td_smlatt(xe, we, a[2]);
    a[3] = td_smlatt(xo, wo, a[3]);
}

static inline int32_t td_min_i32(int32_t a, int32_t b)
{
    return a < b ? a : b;
}

void td_dwconv2d_3x3_s8_dsp(const td_dwconv2d_params_t *p, const int8_t *in0, int8_t *out0)
{
    const int32_t ch = p->in_c;
    const int32_t ch4 = ch & ~3;
    const int32_t row_pitch = p->in_w * ch;
    const int32_t off = p->input_offset;
    const int32_t off2 = (int32_t)(((uint32_t)off & 0xFFFFu) * 0x10001u);
    const int32_t out_off = p->output_offset, lo = p->act_min, hi = p->act_max;
    const int32_t *bias = p->bias, *mult = p->mult, *shift = p->shift;
    const int8_t *filter = p->filter;
    int8_t *dst = out0;
    for (int32_t b = 0; b < p->batches; ++b) {
        const int8_t *image = in0 + b * p->in_h * row_pitch;
        for (int32_t oy = 0; oy < p->out_h; ++oy) {
            const int32_t iy0 = oy * p->stride_h - p->pad_h;
            const int32_t ky_lo = iy0 < 0 ? -iy0 : 0;
            const int32_t ky_hi = td_min_i32(3, p->in_h - iy0);
            for (int32_t ox = 0; ox < p->out_w; ++ox, dst += ch) {
                const int32_t ix0 = ox * p->stride_w - p->pad_w;
                const int32_t kx_lo = ix0 < 0 ? -ix0 : 0;
                const int32_t kx_hi = td_min_i32(3, p->in_w - ix0);
                /* first valid tap of the pixel, channel 0 */
                const int8_t *first = image + (iy0 + ky_lo) * row_pitch + (ix0 + kx_lo) * ch;
                const int32_t full = ky_lo == 0 && kx_lo == 0 && ky_hi == 3 && kx_hi == 3;
                int32_t c = 0;
                for (; c < ch4; c += 4) {
                    int32_t a[4] = { 0, 0, 0, 0 };
                    if (bias != 0) {
                        a[0] = bias[c];
                        a[1] = bias[c + 1];
                        a[2] = bias[c + 2];
                        a[3] = bias[c + 3];
                    }
                    if (full) {
                        const int8_t *s = first + c;
                        const int8_t *f = filter + c;
                        for (int32_t ky = 0; ky < 3; ++ky) {
                            td_dw_tap(td_read_s8x4(s), td_read_s8x4(f), off2, a);
                            td_dw_tap(td_read_s8x4(s + ch), td_read_s8x4(f + ch), off2, a);
                            td_dw_tap(td_read_s8x4(s + 2 * ch), td_read_s8x4(f + 2 * ch), off2,
                                      a);
                            s += row_pitch;
                            f += 3 * ch;
                        }
                    } else {
                        const int8_t *srow = first + c;
                        const int8_t *frow = filter + (ky_lo * 3 + kx_lo) * ch + c;
                        for (int32_t ky = ky_lo; ky < ky_hi; ++ky) {
                            const int8_t *s = srow, *f = frow;
                            for (int32_t kx = kx_lo; kx < kx_hi; ++kx) {
                                td_dw_tap(td_read_s8x4(s), td_read_s8x4(f), off2, a);
                                s += ch;
                                f += ch;
                            }
                            srow += row_pitch;
                            frow += 3 * ch;
                        }
                    }
                    /* a[j] is channel c + j (see td_dw_tap) */
                    for (int32_t j = 0; j < 4; ++j) {
                        const int32_t o = c + j;
                        const int32_t v = td_requantize(a[j], mult[o], shift[o]) + out_off;
                        dst[o] = (int8_t)td_clamp_s32(v, lo, hi);
                    }
                }
                for (; c < ch; ++c) {
                    int32_t acc = 0;
                    const int8_t *srow = first + c;
                    const int8_t *frow = filter + (ky_lo * 3 + kx_lo) * ch + c;
                    for (int32_t ky = ky_lo; ky < ky_hi; ++ky) {
                        for (int32_t kx = 0; kx < kx_hi - kx_lo; ++kx) {
                            acc += ((int32_t)srow[kx * ch] + off) * (int32_t)frow[kx * ch];
                        }
                        srow += row_pitch;
                        frow += 3 * ch;
                    }
                    if (bias != 0) {
                        acc += bias[c];
                    }
                    const int32_t v = td_requantize(acc, mult[c], shift[c]) + out_off;
                    dst[c] = (int8_t)td_clamp_s32(v, lo, hi);
                }
            }
        }
    }
}
