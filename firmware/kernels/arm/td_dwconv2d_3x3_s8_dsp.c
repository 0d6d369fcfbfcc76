/*
 * td_dwconv2d_3x3_s8_dsp.c - int8 3x3 depthwise convolution (depth multiplier 1, any stride,
 * dilation and padding) with the DSP extension, bit-exact with td_dwconv2d_s8_ref.
 *
 * Channels are processed four at a time. One 32-bit load gives four input channels of a tap
 * (contiguous in NHWC); SXTB16 / SXTB16 ROR #8 split them into the int16 lanes (c0, c2) and
 * (c1, c3); one LDRD gives the tap's four filter values, packed on the host in the same lane
 * order; SMLABB / SMLATT accumulate every channel separately.
 *
 * Bias folding, as for the matrix-product kernels (td_gemm_s8_dsp.h): the host adds
 * input_offset * sum over the 9 taps of filter[tap][c] to the bias, so the kernel accumulates
 * plain x * w. A tap outside the image reads a row of the input zero point instead (kept in
 * scratch): (zp + input_offset) * w = 0, which is exactly what the reference's skipping of that
 * tap contributes. So every output pixel runs the same unrolled 9-tap code.
 *
 * Parameters: td_dwconv2d_params_t as for td_dwconv2d_s8_ref with filter_h = filter_w = 3,
 * depth_multiplier = 1 (out_c = in_c), and two differences prepared on the host:
 *   filter: packed int16 (little-endian, 4-byte aligned) [groups][9 taps][4 lanes] with
 *           groups = ceil(in_c / 4); the lanes of group g hold channels 4g, 4g+2, 4g+1, 4g+3
 *           (0 where the channel does not exist);
 *   bias:   never NULL, [in_c] bias[c] + input_offset * sum_t filter[t][c] (mod 2^32).
 * scratch: td_dwconv2d_3x3_s8_dsp_scratch_size(p) bytes (the zero-point row), any alignment.
 */
#include "td_kernels.h"

#include "td_simd.h"

int32_t td_dwconv2d_3x3_s8_dsp_scratch_size(const td_dwconv2d_params_t *p)
{
    return (p->in_c + 3) & ~3;
}

/* The last, partial group of channels: n < 4 bytes, zero-extended to a word. */
static int32_t td_read_partial(const int8_t *p, int32_t n)
{
    uint32_t v = 0;
    for (int32_t i = 0; i < n; ++i) {
        v |= (uint32_t)(uint8_t)p[i] << (8 * i);
    }
    return (int32_t)v;
}

/* a0..a3 += x * w for the four channels of one tap (lane order above); w advances by 2 words */
#define TD_DW_TAP(x)                                                                       \
    do {                                                                                   \
        int32_t we_, wo_;                                                                  \
        const int32_t x_ = (x);                                                            \
        w = td_load2(w, &we_, &wo_);                                                       \
        const int32_t xe_ = td_sxtb16(x_), xo_ = td_sxtb16_ror8(x_);                       \
        a0 = td_smlabb(xe_, we_, a0);                                                      \
        a2 = td_smlatt(xe_, we_, a2);                                                      \
        a1 = td_smlabb(xo_, wo_, a1);                                                      \
        a3 = td_smlatt(xo_, wo_, a3);                                                      \
    } while (0)

static inline int8_t td_dw_out(int32_t acc, const td_dwconv2d_params_t *p, int32_t o)
{
    const int32_t v = td_requantize(td_add_wrap(acc, p->bias[o]), p->mult[o], p->shift[o])
                      + p->output_offset;
    return (int8_t)td_clamp_s32(v, p->act_min, p->act_max);
}

void td_dwconv2d_3x3_s8_dsp(const td_dwconv2d_params_t *p, const int8_t *in0, int8_t *out0,
                            void *scratch)
{
    const int32_t ch = p->in_c;
    const int32_t ch4 = ch & ~3;
    const int8_t *zp_row = (const int8_t *)scratch;
    const int8_t *tap[9];
    int8_t *dst = out0;
    memset(scratch, (int8_t)(-p->input_offset), (size_t)((ch + 3) & ~3));
    for (int32_t b = 0; b < p->batches; ++b) {
        const int8_t *image = in0 + b * p->in_h * p->in_w * ch;
        for (int32_t oy = 0; oy < p->out_h; ++oy) {
            const int32_t iy0 = oy * p->stride_h - p->pad_h;
            for (int32_t ox = 0; ox < p->out_w; ++ox, dst += ch) {
                const int32_t ix0 = ox * p->stride_w - p->pad_w;
                for (int32_t ky = 0; ky < 3; ++ky) {
                    const int32_t iy = iy0 + ky * p->dilation_h;
                    for (int32_t kx = 0; kx < 3; ++kx) {
                        const int32_t ix = ix0 + kx * p->dilation_w;
                        const int32_t inside = iy >= 0 && iy < p->in_h && ix >= 0
                                               && ix < p->in_w;
                        tap[3 * ky + kx] = inside ? image + (iy * p->in_w + ix) * ch : zp_row;
                    }
                }
                const td_word_t *w = (const td_word_t *)(const void *)p->filter;
                const int8_t *t0 = tap[0], *t1 = tap[1], *t2 = tap[2], *t3 = tap[3];
                const int8_t *t4 = tap[4], *t5 = tap[5], *t6 = tap[6], *t7 = tap[7];
                const int8_t *t8 = tap[8];
                int32_t c = 0;
                for (; c < ch4; c += 4) {
                    int32_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
                    TD_DW_TAP(td_read_s8x4(t0 + c));
                    TD_DW_TAP(td_read_s8x4(t1 + c));
                    TD_DW_TAP(td_read_s8x4(t2 + c));
                    TD_DW_TAP(td_read_s8x4(t3 + c));
                    TD_DW_TAP(td_read_s8x4(t4 + c));
                    TD_DW_TAP(td_read_s8x4(t5 + c));
                    TD_DW_TAP(td_read_s8x4(t6 + c));
                    TD_DW_TAP(td_read_s8x4(t7 + c));
                    TD_DW_TAP(td_read_s8x4(t8 + c));
                    dst[c] = td_dw_out(a0, p, c);
                    dst[c + 1] = td_dw_out(a1, p, c + 1);
                    dst[c + 2] = td_dw_out(a2, p, c + 2);
                    dst[c + 3] = td_dw_out(a3, p, c + 3);
                }
                if (c < ch) {
                    const int32_t n = ch - c;
                    int32_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
                    for (int32_t t = 0; t < 9; ++t) {
                        TD_DW_TAP(td_read_partial(tap[t] + c, n));
                    }
                    const int32_t acc[4] = { a0, a1, a2, a3 };
                    for (int32_t j = 0; j < n; ++j) {
                        dst[c + j] = td_dw_out(acc[j], p, c + j);
                    }
                }
            }
        }
    }
}
