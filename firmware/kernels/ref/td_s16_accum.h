/*
 * td_s16_accum.h - private to the 16x8 FULLY_CONNECTED and CONV_2D kernels: the accumulator
 * of TFLite Micro's two 16x8 paths, chosen by the including file before it includes the
 * op's body (td_fully_connected_s16_body.h, td_conv2d_s16_body.h), once per translation unit:
 *
 *   #define TD_S16_BIAS32 0   int64 bias: int64 sums, td_requantize64 (the Q31 multiplier
 *                             rounded to Q15; the converter's default 16x8 output)
 *   #define TD_S16_BIAS32 1   int32 bias (the converter's int32-bias 16x8 option): int32
 *                             sums wrapping in two's complement, the 32-bit td_requantize
 *
 * TD_S16_ACC_T is the accumulator type, TD_S16_BIAS the params field holding the bias (or
 * NULL), TD_S16_ADD(acc, v) the addition, TD_S16_REQUANT(acc, m, s) the requantization.
 */
#ifndef TD_S16_BIAS32
#error "define TD_S16_BIAS32 (0: int64 bias, 1: int32 bias) before including td_s16_accum.h"
#endif

#include <stdint.h>

#include "td_kernels.h"

#if TD_S16_BIAS32
#define TD_S16_ACC_T int32_t
#define TD_S16_BIAS bias32
#define TD_S16_ADD(acc, v) ((int32_t)((uint32_t)(acc) + (uint32_t)(int32_t)(v)))
#define TD_S16_REQUANT(acc, m, s) td_requantize((acc), (m), (s))
#else
#include "td_requant64.h"
#define TD_S16_ACC_T int64_t
#define TD_S16_BIAS bias
#define TD_S16_ADD(acc, v) ((acc) + (int64_t)(v))
#define TD_S16_REQUANT(acc, m, s) td_requantize64((acc), (m), (s))
#endif
