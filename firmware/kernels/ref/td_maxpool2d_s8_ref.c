/*
 * td_maxpool2d_s8_ref.c - reference int8 max pooling, bit-exact with TFLite Micro.
 *
 * Each window is clipped to the image (td_pool2d_window.h); padding taps are never read nor
 * counted.
 * The maximum starts at -128 (a window with no valid tap gives -128).
 * The result is clamped to [act_min, act_max]. No scratch memory.
 */
#include "td_kernels.h"
#include "td_pool2d_body.h"

void td_maxpool2d_s8_ref(const td_pool2d_params_t *p, const int8_t *in0, int8_t *out0)
{
    td_pool2d_ref(p, in0, out0, 0, 1);
}
