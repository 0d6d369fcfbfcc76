/*
 * td_requant_mve.h - td_requantize on four int32 lanes with MVE (Helium). Private to the
 * MVE kernels of kernels/arm (the files ending in _mve.c), included after <arm_mve.h>.
 */
#ifndef TD_REQUANT_MVE_H
#define TD_REQUANT_MVE_H

#include <arm_mve.h>

/* td_requantize of four lanes: identical results for every input (checked against the scalar
 * primitive on the device by tests/golden/test_mve_target.py). The steps map one to one:
 *   left shift by max(shift, 0), wrapping         VSHL (register), non-saturating;
 *   TFLite's saturating rounding doubling high mul VQRDMULH: (2ab + 2^31) >> 32 rounds halves
 *                                                 up, and so does TFLite's nudge 1 - 2^30 for
 *                                                 negative products; INT32_MIN^2 saturates;
 *   rounding right shift by max(-shift, 0)        VRSHL by a negative amount rounds halves
 *                                                 up, TFLite away from zero: a negative value
 *                                                 is first lowered by one when the shift is
 *                                                 not 0 ((v & right) >> 31 is then -1), which
 *                                                 turns "half up" into "half away from zero"
 *                                                 and changes no other result (VQADD keeps
 *                                                 INT32_MIN, which has no half to round). */
static inline int32x4_t td_requantize_x4_mve(int32x4_t x, int32x4_t mult, int32x4_t shift)
{
    const int32x4_t zero = vdupq_n_s32(0);
    const int32x4_t right = vminq_s32(shift, zero); /* <= 0 */
    int32x4_t v = vshlq_s32(x, vmaxq_s32(shift, zero));
    v = vqrdmulhq_s32(v, mult);
    v = vqaddq_s32(v, vshrq_n_s32(vandq_s32(v, right), 31));
    return vrshlq_s32(v, right);
}

#endif /* TD_REQUANT_MVE_H */
