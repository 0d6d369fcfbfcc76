/*
 * td_sigmoid16.h - private to td_logistic_s16_ref.c and td_tanh_s16_ref.c: TFLite Micro's
 * int16 LOGISTIC / TANH front half, written once.
 *
 * Both ops look up one 256-entry table of sigmoid(i / 24) in unsigned Q0.16 (filled on the
 * host) and use tanh(x) = 2 sigmoid(2x) - 1. td_sigmoid16_scale rescales an int16 input so
 * that 2^frac_bits steps cover one table interval (the host folded TFLM's factor 3 and the
 * power-of-two case into mult and shift: x = (in * mult + round) >> shift, mult <= 32767, so
 * the product fits int32). td_sigmoid16_interp interpolates |x| linearly between the two
 * entries around it in unsigned arithmetic, saturating at table index 255 to `sat` as TFLM.
 */
#ifndef TD_SIGMOID16_H
#define TD_SIGMOID16_H

#include <stdint.h>

static inline int32_t td_sigmoid16_scale(int16_t in, int32_t mult, int32_t shift)
{
    const int32_t round = shift > 0 ? (int32_t)1 << (shift - 1) : 0;
    return ((int32_t)in * mult + round) >> shift;
}

static inline uint32_t td_sigmoid16_interp(const uint16_t *lut, int32_t x, int frac_bits,
                                           uint32_t sat)
{
    const uint32_t ax = (uint32_t)(x < 0 ? -x : x);
    const uint32_t hi = ax >> frac_bits;
    if (hi >= 255u) {
        return sat;
    }
    const uint32_t a = lut[hi];
    const uint32_t b = lut[hi + 1u];
    const uint32_t frac = ax & ((1u << frac_bits) - 1u);
    return (a << frac_bits) + frac * (b - a);
}

#endif /* TD_SIGMOID16_H */
