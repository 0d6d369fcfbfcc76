/*
 * td_opt_dot.h - the inner loops of the portable optimised kernels (static inline, private
 * to kernels/opt/): plain C for cores without the DSP extension (Cortex-M0/M0+), where
 * speed comes from the loop shape (pointer walks, unrolling by four, no per-tap tests) and
 * the requantization form the host chose, not from SIMD.
 */
#ifndef TD_OPT_DOT_H
#define TD_OPT_DOT_H

#include <stdint.h>

#include "td_requant.h"
#include "td_tap_range.h"

/* acc + sum_{i<n} (x[i] + off) * w[i] */
static inline int32_t td_opt_dot(const int8_t *x, const int8_t *w, int32_t n, int32_t off,
                                 int32_t acc)
{
    int32_t i = 0;
    if (off == 0) {
        for (; i + 4 <= n; i += 4) {
            acc += x[i] * w[i] + x[i + 1] * w[i + 1] + x[i + 2] * w[i + 2]
                   + x[i + 3] * w[i + 3];
        }
        for (; i < n; ++i) {
            acc += x[i] * w[i];
        }
        return acc;
    }
    for (; i + 4 <= n; i += 4) {
        acc += (x[i] + off) * w[i] + (x[i + 1] + off) * w[i + 1] + (x[i + 2] + off) * w[i + 2]
               + (x[i + 3] + off) * w[i + 3];
    }
    for (; i < n; ++i) {
        acc += (x[i] + off) * w[i];
    }
    return acc;
}

/* The int8 output of one accumulator in the host-chosen requantization form. */
static inline int8_t td_opt_out(int32_t acc, int32_t m, int32_t shift, int32_t out_off,
                                int32_t lo, int32_t hi, int32_t round_form)
{
    int32_t v;
    if (round_form) {
        const int32_t e = -shift;
        v = td_requant_round_form(acc, m, e, td_requant_rnd(2 * out_off + 1, e));
    } else {
        v = td_requantize(acc, m, shift) + out_off;
    }
    return (int8_t)td_clamp_s32(v, lo, hi);
}

#endif /* TD_OPT_DOT_H */
