/*
 * td_transpose_conv_s8_ref.c - int8 TRANSPOSE_CONV (NHWC, per-channel weights), bit-exact
 * with TFLite Micro's reference: every input pixel scatters (x + input_offset) * w into an
 * int32 accumulator per output element (the scratch buffer, out elements * 4 bytes, as
 * TFLM's), then bias, per-channel requantize, output offset and activation clamp.
 * Filter layout [out_c][filter_h][filter_w][in_c]. Not in place.
 */
#include <string.h>

#include "td_kernels.h"

void td_transpose_conv_s8_ref(const td_transpose_conv_params_t *p, const int8_t *in0,
                              int8_t *out0, void *scratch)
{
    int32_t *acc = (int32_t *)scratch;
    const int32_t oc = p->out_c, ic = p->in_c;
    const int32_t n_out = p->batches * p->out_h * p->out_w * oc;
    memset(acc, 0, (size_t)n_out * sizeof(int32_t));
    for (int32_t b = 0; b < p->batches; ++b) {
        for (int32_t y = 0; y < p->in_h; ++y) {
            for (int32_t x = 0; x < p->in_w; ++x) {
                const int8_t *px = in0 + ((b * p->in_h + y) * p->in_w + x) * ic;
                const int32_t oy0 = y * p->stride_h - p->pad_h;
                const int32_t ox0 = x * p->stride_w - p->pad_w;
                for (int32_t fy = 0; fy < p->filter_h; ++fy) {
                    const int32_t oy = oy0 + fy;
                    if (oy < 0 || oy >= p->out_h) {
                        continue;
                    }
                    for (int32_t fx = 0; fx < p->filter_w; ++fx) {
                        const int32_t ox = ox0 + fx;
                        if (ox < 0 || ox >= p->out_w) {
                            continue;
                        }
                        int32_t *a = acc + ((b * p->out_h + oy) * p->out_w + ox) * oc;
                        for (int32_t o = 0; o < oc; ++o) {
                            const int8_t *w = p->filter
                                              + ((o * p->filter_h + fy) * p->filter_w + fx) * ic;
                            int32_t s = 0;
                            for (int32_t c = 0; c < ic; ++c) {
                                s += ((int32_t)px[c] + p->input_offset) * (int32_t)w[c];
                            }
                            a[o] = (int32_t)((uint32_t)a[o] + (uint32_t)s);
                        }
                    }
                }
            }
        }
    }
    for (int32_t i = 0; i < n_out; ++i) {
        const int32_t o = i % oc;
        int32_t v = acc[i];
        if (p->bias != NULL) {
            v += p->bias[o];
        }
        v = td_requantize(v, p->mult[o], p->shift[o]) + p->output_offset;
        out0[i] = (int8_t)td_clamp_s32(v, p->act_min, p->act_max);
    }
}
