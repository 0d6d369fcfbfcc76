/*
 * td_opt_pw.h - the pointwise (1x1, no groups, no padding, any stride) convolution of the
 * portable optimised kernels, one body for both pixel orders (defined once, in td_opt_pw.c;
 * private to kernels/opt/): td_conv2d_s8_opt runs it front to back,
 * td_conv2d_1x1_back_s8_opt from the last output pixel to the first, for the in-place chains
 * where the output trails the input.
 *
 * Access order (tinydeploy/kernels/access.py, conv_1x1_lanes_order(2) and its back order):
 * per output pixel the output channels are taken in pairs (an odd last channel alone); each
 * pair reads the whole input pixel, then writes its outputs; a pixel's input is not read
 * after its last pair, and no other pixel's output is written in between.
 *
 * Parameters: td_conv2d_params_t as for td_conv2d_s8_opt with filter_h = filter_w = 1,
 * filter_c = in_c, pad_h = pad_w = 0; back = 0: pixels front to back, else back to front.
 * No scratch; the output may overlap the input as the access order allows.
 */
#ifndef TD_OPT_PW_H
#define TD_OPT_PW_H

#include <stdint.h>

#include "td_kernels.h"

void td_opt_pw(const td_conv2d_params_t *p, const int8_t *in0, int8_t *out0, int32_t back);

#endif /* TD_OPT_PW_H */
