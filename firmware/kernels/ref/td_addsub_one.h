/*
 * td_addsub_one.h - private to the ADD and SUB reference kernels (td_add_s8_ref.c,
 * td_add_s16_ref.c, td_sub_s8_ref.c, td_sub_s16_ref.c): TFLite's quantized ADD/SUB of one
 * element pair, written once for both ops, both element types and both params structs.
 *
 * The including file defines, once per translation unit:
 *   TD_ADDSUB_NAME    the function's name
 *   TD_ADDSUB_T       the output element type (int8_t or int16_t)
 *   TD_ADDSUB_PARAMS  the params struct (td_add_params_t or td_binary_params_t: the same
 *                     field names)
 *   TD_ADDSUB_OP      + (ADD) or - (SUB)
 * Each input is offset by its zero point, shifted left by left_shift (20 for int8, 15 for
 * int16), rescaled by its own multiplier to twice the larger input scale; the two are added
 * or subtracted, rescaled to the output, offset and clamped to the fused activation range.
 */
#if !defined(TD_ADDSUB_NAME) || !defined(TD_ADDSUB_T) || !defined(TD_ADDSUB_PARAMS) || \
    !defined(TD_ADDSUB_OP)
#error "define TD_ADDSUB_NAME, TD_ADDSUB_T, TD_ADDSUB_PARAMS, TD_ADDSUB_OP first"
#endif

#include "td_kernels.h"

static inline TD_ADDSUB_T TD_ADDSUB_NAME(const TD_ADDSUB_PARAMS *p, int32_t a, int32_t b)
{
    const int32_t x = (int32_t)((uint32_t)(a + p->in0_offset) << p->left_shift);
    const int32_t y = (int32_t)((uint32_t)(b + p->in1_offset) << p->left_shift);
    const int32_t sx = td_requantize(x, p->in0_mult, p->in0_shift);
    const int32_t sy = td_requantize(y, p->in1_mult, p->in1_shift);
    const int32_t out = td_requantize(sx TD_ADDSUB_OP sy, p->out_mult, p->out_shift)
                        + p->out_offset;
    return (TD_ADDSUB_T)td_clamp_s32(out, p->act_min, p->act_max);
}
