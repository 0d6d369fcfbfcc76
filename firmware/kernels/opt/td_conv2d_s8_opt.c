/*
 * td_conv2d_s8_opt.c - int8 2-D convolution, portable optimised C (any kernel size, stride,
 * dilation, padding, channels and groups), bit-exact with td_conv2d_s8_ref, for cores
 * without the DSP extension.
 *
 * A pointwise layer (1x1, no groups, no padding) runs td_opt_pw.h's body front to back, the
 * body its twin td_conv2d_1x1_back_s8_opt runs back to front (pairs of output channels per
 * input load). Otherwise the loop order is the reference's (output pixels in NHWC order,
 * every output channel reading its whole window), so the planner's in-place proofs for the
 * reference hold. Per output pixel the kernel rows and columns inside the image are found
 * once; each kernel row is then one contiguous run of fw' * filter_c input and filter bytes
 * (dilation 1), summed by a loop unrolled by four, without per-tap tests.
 *
 * Parameters: td_conv2d_params_t as for td_conv2d_s8_ref; when the layer has a bias the host
 * folds the input offset into it (bias[o] + input_offset * sum(filter[o]), the same value
 * modulo 2^32) and passes input_offset = 0; requant_form as chosen on the host. No scratch.
 */
#include "td_kernels.h"

#include "td_opt_dot.h"
#include "td_opt_pw.h"

int32_t td_conv2d_s8_opt_scratch_size(const td_conv2d_params_t *p)
{
    (void)p;
    return 0;
}

void td_conv2d_s8_opt(const td_conv2d_params_t *p, const int8_t *in0, int8_t *out0)
{
    const int32_t c = p->in_c, fc = p->filter_c, oc = p->out_c;
    const int32_t per_group = oc / (c / fc);
    const int32_t fh = p->filter_h, fw = p->filter_w, dh = p->dilation_h, dw = p->dilation_w;
    const int32_t in_h = p->in_h, in_w = p->in_w, off = p->input_offset;
    const int32_t out_off = p->output_offset, lo = p->act_min, hi = p->act_max;
    const int32_t form = p->requant_form;
    const int32_t filter_size = fh * fw * fc;
    int8_t *dst = out0;
    if (fh == 1 && fw == 1 && fc == c && p->pad_h == 0 && p->pad_w == 0) {
        td_opt_pw(p, in0, out0, 0);   /* pointwise: the twin's body, front to back */
        return;
    }
    for (int32_t b = 0; b < p->batches; ++b) {
        const int8_t *image = in0 + b * in_h * in_w * c;
        for (int32_t oy = 0; oy < p->out_h; ++oy) {
            const int32_t iy0 = oy * p->stride_h - p->pad_h;
            int32_t ky0, ky1;
            td_tap_range(iy0, dh, fh, in_h, &ky0, &ky1);
            for (int32_t ox = 0; ox < p->out_w; ++ox) {
                const int32_t ix0 = ox * p->stride_w - p->pad_w;
                int32_t kx0, kx1;
                td_tap_range(ix0, dw, fw, in_w, &kx0, &kx1);
                const int32_t run = (kx1 - kx0) * fc;
                for (int32_t o = 0; o < oc; ++o) {
                    const int32_t g0 = (o / per_group) * fc;
                    const int8_t *w = p->filter + o * filter_size;
                    int32_t acc = p->bias != 0 ? p->bias[o] : 0;
                    for (int32_t ky = ky0; ky < ky1 && kx1 > kx0; ++ky) {
                        const int8_t *src = image + ((iy0 + ky * dh) * in_w + ix0) * c + g0;
                        const int8_t *wr = w + ky * fw * fc;
                        if (dw == 1 && fc == c) {
                            acc = td_opt_dot(src + kx0 * c, wr + kx0 * fc, run, off, acc);
                            continue;
                        }
                        for (int32_t kx = kx0; kx < kx1; ++kx) {
                            acc = td_opt_dot(src + kx * dw * c, wr + kx * fc, fc, off, acc);
                        }
                    }
                    *dst++ = td_opt_out(acc, p->mult[o], p->shift[o], out_off, lo, hi, form);
                }
            }
        }
    }
}
