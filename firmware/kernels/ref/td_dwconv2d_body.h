/*
 * td_dwconv2d_body.h - private to td_dwconv2d_s8_ref.c and td_dwconv2d_s16_ref.c: TFLite
 * Micro's reference DEPTHWISE_CONV_2D for one of its paths (td_accum.h, chosen by the
 * including file, which also names the params struct TD_DW_PARAMS), as the grouped
 * convolution it is: td_conv2d_body.h's loop (td_conv2d_body) with one input channel per
 * group.
 *
 * Output channel o = i * depth_multiplier + m reads input channel i only:
 * out[b, y, x, o] = clamp(requant(sum over (ky, kx) inside the image of
 *                   (in[b, iy, ix, i] + input_offset) * filter[ky, kx, o] + bias[o],
 *                   mult[o], shift[o]) + output_offset, act_min, act_max)
 * (offsets 0 on the 16x8 path). No scratch memory. Not in place.
 */
#ifndef TD_DW_PARAMS
#error "define TD_DW_PARAMS before including td_dwconv2d_body.h"
#endif

#define TD_CONV_PARAMS TD_DW_PARAMS
#define TD_CONV_DEPTHWISE 1
#include "td_conv2d_body.h"
