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
 * tap contributes. So every output pixel runs the same unrolled 9-tap code on nine tap
 * pointers set once per pixel (the last, partial group of channels loads bytewise so that it
 * never reads past the input tensor).
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
#include "td_dw3x3_taps.h"

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

/* a0..a3 += x * w for the four channels of one tap: x = the word at base + off, w the next
 * packed filter word pair (lane order above; w advances by 2 words). On the Cortex-M the tap
 * is one asm block so that the compiler cannot hoist all nine loads and spill their values
 * (11 registers: it also compiles at -O0, where r7 is the frame pointer; the "memory" clobber
 * stands for the input and filter reads); elsewhere it is the same arithmetic through the
 * td_simd.h twins. */
/* the same for a word x already loaded (the partial last group of channels) */
#define TD_DW_TAP_WORD(x)                                                                  \
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

#if TD_SIMD_NATIVE
#define TD_DW_TAP(base, off)                                                               \
    do {                                                                                   \
        int32_t x_, xo_, we_, wo_;                                                         \
        __asm__("ldr %[x], [%[b], %[o]]\n\t"                                                \
                "ldrd %[we], %[wo], [%[w]], #8\n\t"                                        \
                "sxtb16 %[xo], %[x], ror #8\n\t"                                           \
                "sxtb16 %[x], %[x]\n\t"                                                    \
                "smlabb %[a0], %[x], %[we], %[a0]\n\t"                                     \
                "smlatt %[a2], %[x], %[we], %[a2]\n\t"                                     \
                "smlabb %[a1], %[xo], %[wo], %[a1]\n\t"                                    \
                "smlatt %[a3], %[xo], %[wo], %[a3]"                                         \
                : [a0] "+r"(a0), [a1] "+r"(a1), [a2] "+r"(a2), [a3] "+r"(a3), [w] "+r"(w),  \
                  [x] "=&r"(x_), [xo] "=&r"(xo_), [we] "=&r"(we_), [wo] "=&r"(wo_)          \
                : [b] "r"(base), [o] "r"(off)                                              \
                : "memory");                                                               \
    } while (0)
#else
#define TD_DW_TAP(base, off) TD_DW_TAP_WORD(td_read_s8x4((base) + (off)))
#endif

/* One output of channel o. The caller passes the parameters as locals: the int8 output
 * stores may alias *p as far as C knows, which would force reloads after every store. */
#define TD_DW_OUT(acc, o)                                                                  \
    ((int8_t)td_clamp_s32(td_requantize(td_add_wrap((acc), bias[o]), mult[o], shift[o])   \
                          + out_off, lo, hi))

void td_dwconv2d_3x3_s8_dsp(const td_dwconv2d_params_t *p, const int8_t *in0, int8_t *out0,
                            void *scratch)
{
    const int32_t ch = p->in_c;
    const int32_t ch4 = ch & ~3;
    const int32_t *bias = p->bias, *mult = p->mult, *shift = p->shift;
    const int32_t out_off = p->output_offset, lo = p->act_min, hi = p->act_max;
    const int8_t *zp_row = (const int8_t *)scratch;
    const int8_t *tap[9];
    int8_t *dst = out0;
    memset(scratch, (int8_t)(-p->input_offset), (size_t)((ch + 3) & ~3));
    for (int32_t b = 0; b < p->batches; ++b) {
        const int8_t *image = in0 + b * p->in_h * p->in_w * ch;
        for (int32_t oy = 0; oy < p->out_h; ++oy) {
            for (int32_t ox = 0; ox < p->out_w; ++ox, dst += ch) {
                td_dw3x3_taps(p, image, oy, ox, zp_row, tap);
                const td_word_t *w = (const td_word_t *)(const void *)p->filter;
                int32_t c = 0;
                for (; c < ch4; c += 4) {
                    int32_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
#pragma GCC unroll 9
                    for (int32_t t = 0; t < 9; ++t) {
                        TD_DW_TAP(tap[t], c);
                    }
                    dst[c] = TD_DW_OUT(a0, c);
                    dst[c + 1] = TD_DW_OUT(a1, c + 1);
                    dst[c + 2] = TD_DW_OUT(a2, c + 2);
                    dst[c + 3] = TD_DW_OUT(a3, c + 3);
                }
                if (c < ch) {
                    const int32_t n = ch - c;
                    int32_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
                    for (int32_t t = 0; t < 9; ++t) {
                        TD_DW_TAP_WORD(td_read_partial(tap[t] + c, n));
                    }
                    const int32_t acc[4] = { a0, a1, a2, a3 };
                    for (int32_t j = 0; c + j < ch; ++j) {
                        dst[c + j] = TD_DW_OUT(acc[j], c + j);
                    }
                }
            }
        }
    }
}
