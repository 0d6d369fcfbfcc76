/*
 * td_dwconv2d_s8_opt.c - int8 depthwise convolution, portable optimised C (any kernel size,
 * stride, dilation, padding, channels and depth multiplier), bit-exact with
 * td_dwconv2d_s8_ref, for cores without the DSP extension.
 *
 * The loop order is the reference's (output pixels in NHWC order; input channel i, then
 * multiplier m: output channel i * M + m), so the planner's in-place proofs for the reference
 * hold. Per output pixel the kernel rows and columns inside the image are found once and the
 * taps are walked by pointers (input stride in_c, filter stride out_c), without per-tap tests;
 * with multiplier 1 and no horizontal dilation both strides are in_c, so a kernel row is
 * walked by one index (the Cortex-M0's register-offset LDRSB), a row of three taps unrolled.
 *
 * Parameters: td_dwconv2d_params_t as for td_dwconv2d_s8_ref; with a bias the host folds
 * the input offset into it and passes input_offset = 0 (as for td_conv2d_s8_opt);
 * requant_form as chosen on the host. No scratch.
 */
#include "td_kernels.h"

#include "td_opt_dot.h"

int32_t td_dwconv2d_s8_opt_scratch_size(const td_dwconv2d_params_t *p)
{
    (void)p;
    return 0;
}

void td_dwconv2d_s8_opt(const td_dwconv2d_params_t *p, const int8_t *in0, int8_t *out0)
{
    const int32_t c = p->in_c, oc = p->out_c, dm = p->depth_multiplier;
    const int32_t fw = p->filter_w, dh = p->dilation_h, dw = p->dilation_w;
    const int32_t in_w = p->in_w, off = p->input_offset;
    const int32_t out_off = p->output_offset, lo = p->act_min, hi = p->act_max;
    const int32_t form = p->requant_form;
    const int32_t sx = dw * c, sy = dh * in_w * c;   /* input steps between taps */
    int8_t *dst = out0;
    td_opt_walk_t px = TD_OPT_WALK(p, in0);
    while (td_opt_walk_next(&px)) {
        const int32_t ky0 = px.ky0, kx0 = px.kx0;
        const int32_t inside = px.ky1 > ky0 && px.kx1 > kx0;
        const int8_t *src0 =
            inside ? px.image + ((px.iy0 + ky0 * dh) * in_w + px.ix0 + kx0 * dw) * c : px.image;
        const int32_t w_first = (ky0 * fw + kx0) * oc;
        const int32_t ny = px.ky1 - ky0, nx = px.kx1 - kx0;
        for (int32_t i = 0; i < c; ++i) {
            for (int32_t m = 0; m < dm; ++m) {
                const int32_t o = i * dm + m;
                int32_t acc = p->bias != 0 ? p->bias[o] : 0;
                const int8_t *srow = src0 + i;
                const int8_t *wrow = p->filter + w_first + o;
                for (int32_t y = 0; y < ny && inside; ++y, srow += sy, wrow += fw * oc) {
                    if (sx == oc && nx == 3) {   /* the common 3-tap row, unrolled */
                        acc += (srow[0] + off) * wrow[0] + (srow[oc] + off) * wrow[oc]
                               + (srow[2 * oc] + off) * wrow[2 * oc];
                        continue;
                    }
                    if (sx == oc) {   /* multiplier 1, no dilation: one index for both */
                        const int8_t *s = srow + nx * oc, *w = wrow + nx * oc;
                        int32_t j = -nx * oc;
                        do {
                            acc += (s[j] + off) * w[j];
                        } while ((j += oc) != 0);
                        continue;
                    }
                    const int8_t *s = srow, *w = wrow;
                    for (int32_t x = 0; x < nx; ++x, s += sx, w += oc) {
                        acc += (*s + off) * *w;
                    }
                }
                *dst++ = td_opt_out(acc, p->mult[o], p->shift[o], out_off, lo, hi, form);
            }
        }
    }
}
