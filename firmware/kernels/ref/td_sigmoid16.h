/*
 * td_sigmoid16.h - private to td_logistic_s16_ref.c, td_tanh_s16_ref.c and the LSTM kernels
 * (td_lstm_body.h): TFLite Micro's int16 LOGISTIC and TANH, written once.
 *
 * Both look up one 256-entry table of sigmoid(i / 24) in unsigned Q0.16 (filled on the host)
 * and use tanh(x) = 2 sigmoid(2x) - 1. td_sigmoid16_scale rescales an int16 input so that
 * 2^9 steps cover one table interval for the sigmoid (2^8 for tanh, the doubling): the host
 * folded TFLM's factor 3 and the power-of-two case into mult and shift,
 * x = (in * mult + round) >> shift, mult <= 32767, so the product fits int32.
 * td_logistic16 / td_tanh16 interpolate |x| linearly between the two entries around it in
 * unsigned arithmetic (saturating at table index 255 as TFLM), mirror negative x, and round
 * to Q0.15 (tanh with an arithmetic shift).
 */
#ifndef TD_SIGMOID16_H
#define TD_SIGMOID16_H

#include <stdint.h>

static inline int32_t td_sigmoid16_scale(int32_t in, int32_t mult, int32_t shift)
{
    const int32_t round = shift > 0 ? (int32_t)1 << (shift - 1) : 0;
    return (in * mult + round) >> shift;
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

static inline int16_t td_logistic16(const uint16_t *lut, int32_t x)
{
    uint32_t r = td_sigmoid16_interp(lut, x, 9, 0x7FFFu << 10);
    r = x >= 0 ? r + (1u << 9) : (1u << 25) - r + (1u << 9) - 1u;
    return (int16_t)(r >> 10);
}

static inline int16_t td_tanh16(const uint16_t *lut, int32_t x)
{
    const int32_t r = (int32_t)td_sigmoid16_interp(lut, x, 8, 0xFFFFu << 8);
    const int32_t c = x >= 0 ? r - (1 << 23) + (1 << 7) : -r + (1 << 23) + (1 << 7) - 1;
    return (int16_t)(c >> 8);
}

#endif /* TD_SIGMOID16_H */
