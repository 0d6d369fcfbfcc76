/*
 * td_resize_nearest_s8_ref.c - int8 RESIZE_NEAREST_NEIGHBOR (NHWC), as TFLite Micro: every
 * output pixel copies the `depth` channels of one input pixel. The source row of each output
 * row and the source column of each output column were computed on the host with TFLite's
 * float arithmetic (align_corners, half_pixel_centers folded in). Not in place.
 */
#include <string.h>

#include "td_kernels.h"

void td_resize_nearest_s8_ref(const td_resize_params_t *p, const int8_t *in0, int8_t *out0)
{
    const size_t depth = (size_t)p->depth;
    const size_t row = (size_t)p->in_w * depth;
    int8_t *out = out0;
    for (int32_t b = 0; b < p->batches; ++b) {
        const int8_t *img = in0 + (size_t)b * (size_t)p->in_h * row;
        for (int32_t y = 0; y < p->out_h; ++y) {
            const int8_t *src_row = img + (size_t)p->rows[y] * row;
            for (int32_t x = 0; x < p->out_w; ++x) {
                memcpy(out, src_row + (size_t)p->cols[x] * depth, depth);
                out += depth;
            }
        }
    }
}
