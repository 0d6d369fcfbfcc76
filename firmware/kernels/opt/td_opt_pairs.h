/*
 * td_opt_pairs.h - the channel-pair body of the portable convolution kernels (defined once,
 * in td_opt_pairs.c; private to kernels/opt/): the output channels of an output pixel are
 * taken in pairs that share every input load (an odd last channel alone).
 *
 * td_conv2d_s8_opt runs it for every convolution without groups whose kernel rows are
 * contiguous in the input (dilation_w = 1), front to back; its pointwise layers (1x1, no
 * padding) also through td_opt_pw, which td_conv2d_1x1_back_s8_opt runs back to front, for
 * the in-place chains where the output trails the input.
 *
 * Access order: each pair reads the whole window of its pixel, then writes its two outputs; a
 * pixel's window is not read after its last pair, and no other pixel's output is written in
 * between (tinydeploy/kernels/access.py: conv_1x1_lanes_order(2) and its back order for
 * td_opt_pw; conv_ref_order, which allows no more, for the windows of other shapes).
 */
#ifndef TD_OPT_PAIRS_H
#define TD_OPT_PAIRS_H

#include <stdint.h>

#include "td_kernels.h"

/* The taps of one output pixel's window that lie inside the image: `rows` runs of `n` input
 * bytes, the first at x, each `step` bytes after the one before (rows = 0: no tap inside;
 * else n >= 1); every filter row's runs start `w_first` bytes into it, `w_step` apart. */
typedef struct {
    const int8_t *x;
    int32_t step, rows, n, w_first, w_step;
} td_opt_runs_t;

/* The out_c outputs of one output pixel (dst[0 .. out_c)) from its window; no groups. */
void td_opt_conv_pixel(const td_conv2d_params_t *p, const td_opt_runs_t *r, int8_t *dst);

/* A pointwise layer (filter_h = filter_w = 1, filter_c = in_c, no padding, any stride):
 * every output pixel, front to back (back == 0) or back to front (back != 0). */
void td_opt_pw(const td_conv2d_params_t *p, const int8_t *in0, int8_t *out0, int32_t back);

#endif /* TD_OPT_PAIRS_H */
