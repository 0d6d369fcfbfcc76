/*
 * td_dwconv2d_dsp.h - what the dsp depthwise kernels share (static inline, private to
 * td_dwconv2d_s8_dsp.c, td_dwconv2d_3x3_s8_dsp.c and td_dwconv2d_c1_s8_dsp.c): the one int8
 * output of an accumulator.
 */
#ifndef TD_DWCONV2D_DSP_H
#define TD_DWCONV2D_DSP_H

#include "td_kernels.h"

#include "td_simd.h"

/* One int8 output: acc requantized in the host-chosen form (round_form: the rounding form
 * of td_requant.h with zp2p1 = 2 * output_offset + 1, else td_requantize plus out_off), then
 * clamped to [lo, hi] (full_range, i.e. [-128, 127]: one SSAT). round_form and full_range
 * are compile-time constants in every caller, so each caller's body is specialised. */
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

#endif /* TD_DWCONV2D_DSP_H */
