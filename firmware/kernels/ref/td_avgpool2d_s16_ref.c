/*
 * td_avgpool2d_s16_ref.c - int16 AVERAGE_POOL_2D: the int32 sum of the valid taps divided by
 * their count, rounded half away from zero, as TFLite Micro's
 * int16 reference; the int8 kernel's windows (td_pool2d_window.h) and clamp on int16 data.
 * No scratch memory.
 */
#include "td_kernels.h"
#include "td_pool2d_body.h"

void td_avgpool2d_s16_ref(const td_pool2d_params_t *p, const int16_t *in0,
                          int16_t *out0)
{
    td_pool2d_ref(p, in0, out0, 1, 0);
}
