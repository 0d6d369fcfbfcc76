/*
 * td_resize_nearest_body.h - private to td_resize_nearest_s8_ref.c and
 * td_resize_nearest_s16_ref.c: RESIZE_NEAREST_NEIGHBOR (NHWC) for one element type, written
 * once. The including file defines TD_ELEM_T (int8_t or int16_t) before including it, once
 * per translation unit.
 *
 * Every output pixel copies the `depth` channels of one input pixel; the source row of each
 * output row and the source column of each output column were computed on the host with
 * TFLite's float arithmetic. Not in place.
 */
#ifndef TD_ELEM_T
#error "define TD_ELEM_T before including td_resize_nearest_body.h"
#endif

#include <string.h>

#include "td_kernels.h"

static inline void td_resize_nearest_body(const td_resize_params_t *p, const TD_ELEM_T *in0,
                                          TD_ELEM_T *out0)
{
    const size_t depth = (size_t)p->depth;
    const size_t row = (size_t)p->in_w * depth;
    TD_ELEM_T *out = out0;
    for (int32_t b = 0; b < p->batches; ++b) {
        const TD_ELEM_T *img = in0 + (size_t)b * (size_t)p->in_h * row;
        for (int32_t y = 0; y < p->out_h; ++y) {
            const TD_ELEM_T *src_row = img + (size_t)p->rows[y] * row;
            for (int32_t x = 0; x < p->out_w; ++x) {
                memcpy(out, src_row + (size_t)p->cols[x] * depth, depth * sizeof(TD_ELEM_T));
                out += depth;
            }
        }
    }
}
