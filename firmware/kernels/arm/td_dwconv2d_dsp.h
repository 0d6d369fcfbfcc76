/*
 * td_dwconv2d_dsp.h - what the dsp depthwise kernels share (static inline, private to
 * td_dwconv2d_s8_dsp.c, td_dwconv2d_3x3_s8_dsp.c, td_dwconv2d_3x3_lines_s8_dsp.c and
 * td_dwconv2d_c1_s8_dsp.c): the window of taps inside the image, the bias of four channels
 * and the one int8 output of an accumulator.
 */
#ifndef TD_DWCONV2D_DSP_H
#define TD_DWCONV2D_DSP_H

#include "td_kernels.h"

#include "td_simd.h"
#include "td_tap_range.h"

/* The taps of one output pixel: iy0 / ix0 the input row / column of tap (0, 0) (possibly in
 * the padding), kernel rows [ky0, ky1) and columns [kx0, kx1) inside the image (empty when
 * none is). td_dw_rows fills the rows, once per output row; td_dw_cols the columns. */
typedef struct {
    int32_t iy0, ix0, ky0, ky1, kx0, kx1;
} td_dw_window_t;

static inline void td_dw_rows(const td_dwconv2d_params_t *p, int32_t oy, td_dw_window_t *win)
{
    win->iy0 = oy * p->stride_h - p->pad_h;
    td_tap_range(win->iy0, p->dilation_h, p->filter_h, p->in_h, &win->ky0, &win->ky1);
}

static inline void td_dw_cols(const td_dwconv2d_params_t *p, int32_t ox, td_dw_window_t *win)
{
    win->ix0 = ox * p->stride_w - p->pad_w;
    td_tap_range(win->ix0, p->dilation_w, p->filter_w, p->in_w, &win->kx0, &win->kx1);
}

/* a0..a3 = the bias of channels c .. c+3 (0 without a bias) */
static inline __attribute__((always_inline)) void
td_dw_bias4(const int32_t *bias, int32_t c, int32_t *a0, int32_t *a1, int32_t *a2, int32_t *a3)
{
    *a0 = bias != 0 ? bias[c] : 0;
    *a1 = bias != 0 ? bias[c + 1] : 0;
    *a2 = bias != 0 ? bias[c + 2] : 0;
    *a3 = bias != 0 ? bias[c + 3] : 0;
}

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
