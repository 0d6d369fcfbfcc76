/*
 * td_conv2d_s8_ref.c - reference int8 2-D convolution, bit-exact with TFLite Micro.
 *
 * out[b, y, x, o] = clamp(requant(sum over (ky, kx, i) of (in[b, y*sy - ph + ky*dy,
 *                   x*sx - pw + kx*dx, g*filter_c + i] + input_offset) * filter[o, ky, kx, i]
 *                   + bias[o], mult[o], shift[o]) + output_offset, act_min, act_max)
 * where g = o / (out_c / groups) and taps outside the image are skipped (zero padding in
 * the real domain). No scratch memory.
 */
#include "td_kernels.h"

void td_conv2d_s8_ref(const td_conv2d_params_t *p, const int8_t *in0, int8_t *out0)
{
    const int32_t groups = p->in_c / p->filter_c;
    const int32_t per_group = p->out_c / groups;
    for (int32_t b = 0; b < p->batches; ++b) {
        for (int32_t oy = 0; oy < p->out_h; ++oy) {
            const int32_t iy0 = oy * p->stride_h - p->pad_h;
            for (int32_t ox = 0; ox < p->out_w; ++ox) {
                const int32_t ix0 = ox * p->stride_w - p->pad_w;
                for (int32_t o = 0; o < p->out_c; ++o) {
                    const int32_t c0 = (o / per_group) * p->filter_c;
                    int32_t acc = 0;
                    for (int32_t ky = 0; ky < p->filter_h; ++ky) {
                        const int32_t iy = iy0 + p->dilation_h * ky;
                        if (iy < 0 || iy >= p->in_h) {
                            continue;
                        }
                        for (int32_t kx = 0; kx < p->filter_w; ++kx) {
                            const int32_t ix = ix0 + p->dilation_w * kx;
                            if (ix < 0 || ix >= p->in_w) {
                                continue;
                            }
                            const int8_t *src =
                                in0 + (((b * p->in_h + iy) * p->in_w + ix) * p->in_c + c0);
                            const int8_t *w =
                                p->filter + (((o * p->filter_h + ky) * p->filter_w + kx)
                                             * p->filter_c);
                            for (int32_t i = 0; i < p->filter_c; ++i) {
                                acc += ((int32_t)src[i] + p->input_offset) * (int32_t)w[i];
                            }
                        }
                    }
                    if (p->bias != 0) {
                        acc += p->bias[o];
                    }
                    acc = td_requantize(acc, p->mult[o], p->shift[o]) + p->output_offset;
                    out0[((b * p->out_h + oy) * p->out_w + ox) * p->out_c + o] =
                        (int8_t)td_clamp_s32(acc, p->act_min, p->act_max);
                }
            }
        }
    }
}
