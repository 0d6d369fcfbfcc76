/*
 * td_dwconv2d_3x3_s8_mve.c - int8 3x3 depthwise convolution (depth multiplier 1, any stride,
 * dilation and padding) with the M-profile Vector Extension (Helium), bit-exact with
 * td_dwconv2d_s8_ref (and so with TFLite Micro).
 *
 * Channels are processed four at a time in int32 lanes: for each of the nine taps one
 * widening load (VLDRB.S32) gives four input channels, another the tap's four filter values
 * (packed on the host per group of four channels, so one pointer with immediate offsets
 * walks them),
 * and VMUL + VADD accumulate their products onto the bias (wrapping, as the reference's int32
 * sum does where it is defined). The last, partial group of channels
 * uses tail predication (VCTP32): disabled lanes read no memory and store nothing, so no read
 * goes past a tensor. Requantization runs on the four lanes at once (td_requantize_x4_mve,
 * identical to td_requantize for every input).
 *
 * Bias folding, as for the dsp kernel (td_dwconv2d_3x3_s8_dsp.c): the host adds
 * input_offset * sum over the 9 taps of filter[tap][c] to the bias, so the kernel accumulates
 * plain x * w (exact modulo 2^32). A tap outside the image reads a row of the input zero point
 * instead (kept in scratch): (zp + input_offset) * w = 0, exactly what the reference's
 * skipping of that tap contributes. So every output pixel runs the same nine taps.
 *
 * Parameters: td_dwconv2d_params_t as for td_dwconv2d_s8_ref with filter_h = filter_w = 3,
 * depth_multiplier = 1 (out_c = in_c), and two differences prepared on the host:
 *   filter: int8 [groups][9 taps][4 channels] with groups = ceil(in_c / 4): group g, tap t
 *           holds filter[t][4g .. 4g+3] (0 where the channel does not exist), any alignment;
 *   bias:   never NULL, holding bias[c] + input_offset * sum_t filter[t][c] (mod 2^32);
 * input_offset is only used to fill the zero-point row. scratch:
 * td_dwconv2d_3x3_s8_mve_scratch_size(p) bytes (the zero-point row), any alignment.
 */
#include <string.h>

#include "td_kernels.h"
#include "td_dw3x3_taps.h"

#if !defined(__ARM_FEATURE_MVE) || !(__ARM_FEATURE_MVE & 1)
#error "td_dwconv2d_3x3_s8_mve.c needs MVE (-mcpu=cortex-m55 -mfloat-abi=hard)"
#endif

#include <arm_mve.h>

#include "td_requant_mve.h"

/* The int8 outputs dst[0..n-1] (n in 1..4) of four accumulators (bias included): requantize,
 * + output zero point, clamp. The per-channel arrays are read for n lanes only. */
static inline void td_output_x4_mve(int32x4_t acc, const int32_t *mult, const int8_t *shift,
                                    int32_t out_off, int32_t lo, int32_t hi, int8_t *dst,
                                    int32_t n)
{
    if (n == 4) { /* a whole group (a constant once inlined): no predication */
        int32x4_t v = td_requantize_x4_mve(acc, vldrwq_s32(mult), vldrbq_s32(shift));
        v = vaddq_n_s32(v, out_off);
        vstrbq_s32(dst, vminq_s32(vmaxq_s32(v, vdupq_n_s32(lo)), vdupq_n_s32(hi)));
        return;
    }
    const mve_pred16_t pred = vctp32q((uint32_t)n);
    int32x4_t v = td_requantize_x4_mve(acc, vldrwq_z_s32(mult, pred), vldrbq_z_s32(shift, pred));
    v = vaddq_n_s32(v, out_off);
    v = vminq_s32(vmaxq_s32(v, vdupq_n_s32(lo)), vdupq_n_s32(hi));
    vstrbq_p_s32(dst, v, pred);
}

int32_t td_dwconv2d_3x3_s8_mve_scratch_size(const td_dwconv2d_params_t *p)
{
    return (p->in_c + 3) & ~3;
}

void td_dwconv2d_3x3_s8_mve(const td_dwconv2d_params_t *p, const int8_t *in0, int8_t *out0,
                            void *scratch)
{
    const int32_t ch = p->in_c;
    const int8_t *filter = p->filter;
    const int32_t *bias = p->bias, *mult = p->mult;
    const int8_t *shift = p->shift;
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
                const int8_t *w = filter;
                int32_t c = 0;
                for (; c + 4 <= ch; c += 4, w += 36) { /* whole groups: no predication */
                    int32x4_t acc = vldrwq_s32(bias + c);
#pragma GCC unroll 9
                    for (int32_t t = 0; t < 9; ++t) {
                        acc = vaddq_s32(acc, vmulq_s32(vldrbq_s32(tap[t] + c),
                                                       vldrbq_s32(w + 4 * t)));
                    }
                    td_output_x4_mve(acc, mult + c, shift + c, out_off, lo, hi, dst + c, 4);
                }
                if (c < ch) { /* the last 1..3 channels: tail-predicated input reads */
                    const int32_t n = ch - c;
                    const mve_pred16_t pred = vctp32q((uint32_t)n);
                    int32x4_t acc = vldrwq_z_s32(bias + c, pred);
                    for (int32_t t = 0; t < 9; ++t) {
                        acc = vaddq_s32(acc, vmulq_s32(vldrbq_z_s32(tap[t] + c, pred),
                                                       vldrbq_s32(w + 4 * t)));
                    }
                    td_output_x4_mve(acc, mult + c, shift + c, out_off, lo, hi, dst + c, n);
                }
            }
        }
    }
}
