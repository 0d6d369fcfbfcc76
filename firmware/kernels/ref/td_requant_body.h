/*
 * td_requant_body.h - private to the integer QUANTIZE kernels between int8, int16 and int32
 * (td_quantize_s16_s8_ref.c, td_quantize_s8_s16_ref.c, td_quantize_s16_s16_ref.c,
 * td_quantize_s16_s32_ref.c, td_quantize_s8_s32_ref.c): TFLite's Requantize,
 * out = clamp(requantize(in - in_zp, mult, shift) + out_zp) to the output type's range.
 */
#ifndef TD_REQUANT_BODY_H
#define TD_REQUANT_BODY_H

#include "td_kernels.h"

#define TD_REQUANT_LOOP(p, in0, out0, out_t, lo, hi)                                       \
    do {                                                                                   \
        for (int32_t i_ = 0; i_ < (p)->size; ++i_) {                                       \
            const int64_t v_ = (int64_t)td_requantize((int32_t)(in0)[i_] - (p)->in_zp,      \
                                                      (p)->mult, (p)->shift)               \
                               + (p)->out_zp;                                              \
            (out0)[i_] = (out_t)(v_ < (lo) ? (lo) : (v_ > (hi) ? (hi) : v_));              \
        }                                                                                  \
    } while (0)

#endif /* TD_REQUANT_BODY_H */
