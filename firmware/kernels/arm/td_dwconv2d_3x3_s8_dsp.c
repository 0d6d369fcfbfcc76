/*
 * td_dwconv2d_3x3_s8_dsp.c - int8 3x3 depthwise convolution (depth multiplier 1, channels a
 * multiple of 4, any stride, dilation and padding) with the DSP extension, bit-exact with
 * td_dwconv2d_s8_ref.
 *
 * Channels are processed four at a time. One 32-bit load gives four input channels of a tap
 * (contiguous in NHWC); SXTAB16 / SXTAB16 ROR #8 add the input offset and split them into the
 * int16 lanes (c0, c2) and (c1, c3); one more load gives the tap's four int8 filter values
 * (regrouped on the host per four channels, the same bytes as the model's), widened the same
 * way by SXTB16; SMLABB / SMLATT accumulate every channel separately, starting at the bias.
 * A tap outside the image reads a row of the input zero point (kept in scratch), which
 * widens to 0: exactly what the reference's skipping of that tap contributes. So every output
 * pixel runs the same unrolled 9-tap code on nine tap pointers set once per pixel.
 *
 * Parameters: td_dwconv2d_params_t as for td_dwconv2d_s8_ref with filter_h = filter_w = 3,
 * depth_multiplier = 1 (out_c = in_c), in_c % 4 == 0, and
 *   filter: int8 [in_c / 4][9 taps][4 channels]: group g, tap t holds channels 4g .. 4g+3;
 *   bias, mult, shift: the reference's; requant_form as chosen on the host.
 * scratch: td_dwconv2d_3x3_s8_dsp_scratch_size(p) bytes (the zero-point row), any alignment.
 */
#include "td_kernels.h"
#include "td_dw3x3_taps.h"

#include "td_simd.h"

int32_t td_dwconv2d_3x3_s8_dsp_scratch_size(const td_dwconv2d_params_t *p)
{
    return p->in_c;
}

/* a0..a3 += (x + off) * w for the four channels of one tap: x = the word at base + off_b,
 * w the next filter word (w advances by 4 bytes). On the Cortex-M, when optimising, the tap
 * is one asm block so that the compiler cannot hoist all nine loads and spill their values
 * (12 registers: one too many at -O0, where r7 is the frame pointer and the C form below is
 * used; the "memory" clobber stands for the input and filter reads); elsewhere it is the same
 * arithmetic through the td_simd.h functions (instructions or their twins). */
#if TD_SIMD_NATIVE && defined(__OPTIMIZE__)
#define TD_DW_TAP(base, off_b)                                                             \
    do {                                                                                   \
        int32_t x_, xo_, we_, wo_;                                                         \
        __asm__("ldr %[x], [%[b], %[o]]\n\t"                                                \
                "ldr %[we], [%[w]], #4\n\t"                                                \
                "sxtab16 %[xo], %[k], %[x], ror #8\n\t"                                    \
                "sxtab16 %[x], %[k], %[x]\n\t"                                             \
                "sxtb16 %[wo], %[we], ror #8\n\t"                                          \
                "sxtb16 %[we], %[we]\n\t"                                                  \
                "smlabb %[a0], %[x], %[we], %[a0]\n\t"                                     \
                "smlatt %[a2], %[x], %[we], %[a2]\n\t"                                     \
                "smlabb %[a1], %[xo], %[wo], %[a1]\n\t"                                    \
                "smlatt %[a3], %[xo], %[wo], %[a3]"                                         \
                : [a0] "+r"(a0), [a1] "+r"(a1), [a2] "+r"(a2), [a3] "+r"(a3), [w] "+r"(w),  \
                  [x] "=&r"(x_), [xo] "=&r"(xo_), [we] "=&r"(we_), [wo] "=&r"(wo_)          \
                : [b] "r"(base), [o] "r"(off_b), [k] "r"(off2)                             \
                : "memory");                                                               \
    } while (0)
#else
#define TD_DW_TAP(base, off_b)                                                             \
    do {                                                                                   \
        const int32_t x_ = td_read_s8x4((base) + (off_b));                                 \
        const int32_t wv_ = td_read_s8x4(w);                                               \
        w += 4;                                                                            \
        const int32_t xe_ = td_sxtab16(off2, x_), xo_ = td_sxtab16_ror8(off2, x_);         \
        const int32_t we_ = td_sxtb16(wv_), wo_ = td_sxtb16_ror8(wv_);                     \
        a0 = td_smlabb(xe_, we_, a0);                                                      \
        a2 = td_smlatt(xe_, we_, a2);                                                      \
        a1 = td_smlabb(xo_, wo_, a1);                                                      \
        a3 = td_smlatt(xo_, wo_, a3);                                                      \
    } while (0)
#endif

/* The whole kernel for one requantization form (specialised by the compiler). The
 * parameters are read into locals first: the int8 output stores may alias *p as far as C
 * knows, which would force reloads after every store. */
/* One int8 output: requantized in the chosen form, clamped (full_range: one SSAT). */
static inline __attribute__((always_inline)) int8_t
td_dw_out(int32_t acc, int32_t m, int32_t shift, int32_t zp2p1, int32_t out_off, int32_t lo,
          int32_t hi, const int round_form, const int full_range)
{
    int32_t v;
    if (round_form) {
        const int32_t e = -shift;
        v = td_requant_round_form(acc, m, e, td_requant_rnd(zp2p1, e));
    } else {
        v = td_requantize(acc, m, shift) + out_off;
    }
    return full_range ? (int8_t)td_ssat8(v) : (int8_t)td_clamp_s32(v, lo, hi);
}

static inline __attribute__((always_inline)) void
td_dw3x3_body(const td_dwconv2d_params_t *p, const int8_t *in0, int8_t *out0,
              const int8_t *zp_row, const int round_form, const int full_range)
{
    const int32_t ch = p->in_c;
    const int32_t *bias = p->bias, *mult = p->mult;
    const int8_t *shift = p->shift;
    const int32_t out_off = p->output_offset, lo = p->act_min, hi = p->act_max;
    const int32_t zp2p1 = 2 * out_off + 1;
    const int32_t off2 = td_pack_off(p->input_offset);
    const int8_t *tap[9];
    int8_t *dst = out0;
    for (int32_t b = 0; b < p->batches; ++b) {
        const int8_t *image = in0 + b * p->in_h * p->in_w * ch;
        for (int32_t oy = 0; oy < p->out_h; ++oy) {
            for (int32_t ox = 0; ox < p->out_w; ++ox, dst += ch) {
                td_dw3x3_taps(p, image, oy, ox, zp_row, tap);
                const int8_t *w = p->filter;
                for (int32_t c = 0; c < ch; c += 4) {
                    int32_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
                    if (bias != 0) {
                        a0 = bias[c];
                        a1 = bias[c + 1];
                        a2 = bias[c + 2];
                        a3 = bias[c + 3];
                    }
#pragma GCC unroll 9
                    for (int32_t t = 0; t < 9; ++t) {
                        TD_DW_TAP(tap[t], c);
                    }
                    dst[c] = td_dw_out(a0, mult[c], shift[c], zp2p1, out_off, lo, hi,
                                       round_form, full_range);
                    dst[c + 1] = td_dw_out(a1, mult[c + 1], shift[c + 1], zp2p1, out_off, lo,
                                           hi, round_form, full_range);
                    dst[c + 2] = td_dw_out(a2, mult[c + 2], shift[c + 2], zp2p1, out_off, lo,
                                           hi, round_form, full_range);
                    dst[c + 3] = td_dw_out(a3, mult[c + 3], shift[c + 3], zp2p1, out_off, lo,
                                           hi, round_form, full_range);
                }
            }
        }
    }
}

void td_dwconv2d_3x3_s8_dsp(const td_dwconv2d_params_t *p, const int8_t *in0, int8_t *out0,
                            void *scratch)
{
    const int8_t *zp_row = (const int8_t *)scratch;
    memset(scratch, (int8_t)(-p->input_offset), (size_t)p->in_c);
    if (!p->requant_form) {
        td_dw3x3_body(p, in0, out0, zp_row, 0, 0);
    } else if (p->act_min == INT8_MIN && p->act_max == INT8_MAX) {
        td_dw3x3_body(p, in0, out0, zp_row, 1, 1);
    } else {
        td_dw3x3_body(p, in0, out0, zp_row, 1, 0);
    }
}
