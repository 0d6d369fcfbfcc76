/*
 * td_resize_bilinear_s8_ref.c - int8 RESIZE_BILINEAR (NHWC), bit-exact with TFLite Micro's
 * integer path (ResizeBilinearInteger): per output row the host gives the two source rows
 * y0, y1 and the Q10 position weight wy (and likewise x0, x1, wx per column; wy may be
 * negative or above 1024 near the border with half-pixel centers, as in TFLite). The four
 * taps are weighted in int64 with (1024 - w) and w, and the Q20 sum is rounded half away
 * from zero. No requantization: TFLite gives the output the input's quantization.
 */
#include "td_kernels.h"

void td_resize_bilinear_s8_ref(const td_resize_params_t *p, const int8_t *in0, int8_t *out0)
{
    const int32_t depth = p->depth;
    const int32_t row = p->in_w * depth;
    int8_t *out = out0;
    for (int32_t b = 0; b < p->batches; ++b) {
        const int8_t *img = in0 + b * p->in_h * row;
        for (int32_t y = 0; y < p->out_h; ++y) {
            const int8_t *r0 = img + p->rows[3 * y] * row;
            const int8_t *r1 = img + p->rows[3 * y + 1] * row;
            const int64_t wy = p->rows[3 * y + 2];
            for (int32_t x = 0; x < p->out_w; ++x) {
                const int32_t c0 = p->cols[3 * x] * depth;
                const int32_t c1 = p->cols[3 * x + 1] * depth;
                const int64_t wx = p->cols[3 * x + 2];
                for (int32_t c = 0; c < depth; ++c) {
                    const int64_t v = (int64_t)r0[c0 + c] * (1024 - wy) * (1024 - wx)
                                      + (int64_t)r1[c0 + c] * wy * (1024 - wx)
                                      + (int64_t)r0[c1 + c] * (1024 - wy) * wx
                                      + (int64_t)r1[c1 + c] * wy * wx;
                    const int64_t round = v > 0 ? ((int64_t)1 << 19) : -((int64_t)1 << 19);
                    const int64_t s = v + round;
                    /* truncating division by 2^20 without a 64-bit division call */
                    *out++ = (int8_t)(s >= 0 ? (s >> 20) : -((-s) >> 20));
                }
            }
        }
    }
}
