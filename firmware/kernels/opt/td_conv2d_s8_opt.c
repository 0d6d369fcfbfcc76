/*
 * td_conv2d_s8_opt.c - int8 2-D convolution, portable optimised C (any kernel size, stride,
 * dilation, padding, channels and groups), bit-exact with td_conv2d_s8_ref, for cores
 * without the DSP extension.
 *
 * Without groups and with contiguous kernel rows (dilation_w = 1) the output channels go in
 * pairs through td_opt_pairs.h's body (one input load feeds both): a pointwise layer (1x1,
 * no padding) through td_opt_pw, front to back, the body its twin td_conv2d_1x1_back_s8_opt
 * runs back to front; other windows one pixel after the other in NHWC order. Grouped and
 * horizontally dilated convolutions keep the reference's loop order. Either way no output is
 * written before its pixel's window has been read for it and no window is read after its
 * pixel's last output, so the reference's in-place proofs hold. Per output pixel the kernel
 * rows and columns inside the image are found once; each kernel row is one contiguous run of
 * input and filter bytes (the pairs) or one run of filter_c per tap (grouped, dilated), without
 * per-tap tests.
 *
 * Parameters: td_conv2d_params_t as for td_conv2d_s8_ref; when the layer has a bias the host
 * folds the input offset into it (bias[o] + input_offset * sum(filter[o]), the same value
 * modulo 2^32) and passes input_offset = 0; requant_form as chosen on the host. No scratch.
 */
#include "td_kernels.h"

#include "td_opt_dot.h"
#include "td_opt_pairs.h"

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
    const int32_t in_w = p->in_w, off = p->input_offset;
    const int32_t out_off = p->output_offset, lo = p->act_min, hi = p->act_max;
    const int32_t form = p->requant_form;
    const int32_t filter_size = fh * fw * fc;
    int8_t *dst = out0;
    td_opt_walk_t px = TD_OPT_WALK(p, in0);
    if (fh == 1 && fw == 1 && fc == c && p->pad_h == 0 && p->pad_w == 0) {
        td_opt_pw(p, in0, out0, 0);   /* pointwise: the twin's body, front to back */
        return;
    }
    if (fc == c && dw == 1) {   /* no groups, kernel rows contiguous: channel pairs */
        while (td_opt_walk_next(&px)) {
            td_opt_runs_t r = { px.image, dh * in_w * c, px.ky1 - px.ky0,
                                (px.kx1 - px.kx0) * c, (px.ky0 * fw + px.kx0) * c, fw * c };
            if (r.rows > 0 && r.n > 0) {
                r.x += ((px.iy0 + px.ky0 * dh) * in_w + px.ix0 + px.kx0) * c;
            } else {
                r.rows = 0;
            }
            td_opt_conv_pixel(p, &r, dst);
            dst += oc;
        }
        return;
    }
    while (td_opt_walk_next(&px)) {
        const int32_t ky0 = px.ky0, ky1 = px.ky1, kx0 = px.kx0, kx1 = px.kx1;
        for (int32_t o = 0; o < oc; ++o) {
            const int32_t g0 = (o / per_group) * fc;
            const int8_t *w = p->filter + o * filter_size;
            int32_t acc = p->bias != 0 ? p->bias[o] : 0;
            for (int32_t ky = ky0; ky < ky1 && kx1 > kx0; ++ky) {
                const int8_t *src = px.image + ((px.iy0 + ky * dh) * in_w + px.ix0) * c + g0;
                const int8_t *wr = w + ky * fw * fc;
                for (int32_t kx = kx0; kx < kx1; ++kx) {
                    acc = td_opt_dot(src + kx * dw * c, wr + kx * fc, fc, off, acc);
                }
            }
            *dst++ = td_opt_out(acc, p->mult[o], p->shift[o], out_off, lo, hi, form);
        }
    }
}
