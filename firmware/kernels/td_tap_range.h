/*
 * td_tap_range.h - which taps of a (dilated) filter row or column fall inside the input
 * (static inline, private to the kernels that include it).
 *
 * For an output position whose first tap reads input index `origin` (stride * out - pad),
 * taps k in [first, end) read origin + k * dilation in [0, limit); the taps outside, which
 * TFLite skips (they read padding), are the ones this range leaves out. Requires
 * dilation >= 1 and size >= 0; end == first when no tap falls inside.
 */
#ifndef TD_TAP_RANGE_H
#define TD_TAP_RANGE_H

#include <stdint.h>

static inline void td_tap_range(int32_t origin, int32_t dilation, int32_t size, int32_t limit,
                                int32_t *first, int32_t *end)
{
    int32_t a = 0, b = size;
    while (a < size && origin + a * dilation < 0) {
        ++a;
    }
    while (b > a && origin + (b - 1) * dilation >= limit) {
        --b;
    }
    *first = a;
    *end = b;
}

#endif /* TD_TAP_RANGE_H */
