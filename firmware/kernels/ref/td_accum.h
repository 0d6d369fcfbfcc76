/*
 * td_accum.h - private to the reference FULLY_CONNECTED, CONV_2D and DEPTHWISE_CONV_2D
 * kernels: the element type and accumulator of TFLite Micro's paths for these ops, chosen
 * by the including file (TD_ACCUM) before it includes the op's body
 * (td_fully_connected_body.h, td_conv2d_body.h, td_dwconv2d_body.h), once per translation
 * unit:
 *
 *   TD_ACCUM_S8       int8 data, int32 sums of (x + input_offset) * (w + filter_offset),
 *                     int32 bias, 32-bit td_requantize, + output_offset
 *   TD_ACCUM_S16      16x8: int16 data (zero point 0), int64 sums and bias,
 *                     td_requantize64 (the Q31 multiplier rounded to Q15; the converter's
 *                     default 16x8 output)
 *   TD_ACCUM_S16_B32  16x8 with an int32 bias (the converter's int32-bias option): int32
 *                     sums, the 32-bit td_requantize, bias in the params' bias32
 *
 * Defined here: TD_ACC_ELEM_T (data type), TD_ACC_T (accumulator), TD_ACC_BIAS (the params
 * field of the bias, or NULL), TD_ACC_ADD(acc, v) (int32 sums wrap in two's complement),
 * TD_ACC_REQUANT(acc, m, s), TD_ACC_SAT(v) (saturation to the data type),
 * TD_ACC_IN_OFFSET(p), TD_ACC_FILTER_OFFSET(p), TD_ACC_OUT_OFFSET(p) (0 for the 16x8
 * paths).
 */
#define TD_ACCUM_S8 1
#define TD_ACCUM_S16 2
#define TD_ACCUM_S16_B32 3

#ifndef TD_ACCUM
#error "define TD_ACCUM (TD_ACCUM_S8, TD_ACCUM_S16 or TD_ACCUM_S16_B32) first"
#endif

#include <stdint.h>

#include "td_kernels.h"

#if TD_ACCUM == TD_ACCUM_S16
#include "td_requant64.h"
#define TD_ACC_ELEM_T int16_t
#define TD_ACC_T int64_t
#define TD_ACC_BIAS bias
#define TD_ACC_ADD(acc, v) ((acc) + (int64_t)(v))
#define TD_ACC_REQUANT(acc, m, s) td_requantize64((acc), (m), (s))
#else
#define TD_ACC_T int32_t
#define TD_ACC_ADD(acc, v) ((int32_t)((uint32_t)(acc) + (uint32_t)(int32_t)(v)))
#define TD_ACC_REQUANT(acc, m, s) td_requantize((acc), (m), (s))
#if TD_ACCUM == TD_ACCUM_S8
#define TD_ACC_ELEM_T int8_t
#define TD_ACC_BIAS bias
#else
#define TD_ACC_ELEM_T int16_t
#define TD_ACC_BIAS bias32
#endif
#endif

#if TD_ACCUM == TD_ACCUM_S8
#define TD_ACC_SAT(v) td_sat_s8(v)
#else
#define TD_ACC_SAT(v) td_sat_s16(v)
#endif

#if TD_ACCUM == TD_ACCUM_S8
#define TD_ACC_IN_OFFSET(p) ((p)->input_offset)
#define TD_ACC_FILTER_OFFSET(p) ((p)->filter_offset)
#define TD_ACC_OUT_OFFSET(p) ((p)->output_offset)
#else
#define TD_ACC_IN_OFFSET(p) 0
#define TD_ACC_FILTER_OFFSET(p) 0
#define TD_ACC_OUT_OFFSET(p) 0
#endif
