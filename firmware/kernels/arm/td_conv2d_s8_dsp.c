/*
 * td_conv2d_s8_dsp.c - int8 2-D convolution (any kernel size, stride, dilation, padding; no
 * groups) as im2col + a SIMD matrix product, bit-exact with td_conv2d_s8_ref.
 *
 * For each pair of output pixels (flat batch, y, x order) the receptive fields are copied into
 * two scratch columns of k = filter_h * filter_w * in_c bytes, in the filter's [ky][kx][i]
 * order, then every pair of filter rows is multiplied with both columns (td_dot_2x2_s8).
 * Taps outside the image are filled with the input zero point (-input_offset): with the
 * folded bias that contributes (zp + input_offset) * w = 0, exactly what the reference's
 * skipping of padded taps contributes.
 *
 * Parameters: td_conv2d_params_t as for td_conv2d_s8_ref with filter_c = in_c, and `bias`
 * never NULL, holding bias[o] + input_offset * sum(filter[o]) (mod 2^32, from the host).
 * scratch: td_conv2d_s8_dsp_scratch_size(p) bytes, any alignment, contents not preserved.
 */
#include "td_kernels.h"

#include "td_gemm_s8_dsp.h"

/* column pitch: k rounded up to a multiple of 4 so both columns start word-aligned */
static int32_t td_col_pitch(const td_conv2d_params_t *p)
{
    return (p->filter_h * p->filter_w * p->in_c + 3) & ~3;
}

int32_t td_conv2d_s8_dsp_scratch_size(const td_conv2d_params_t *p)
{
    return 2 * td_col_pitch(p);
}

/* Copies the receptive field of output pixel (b, oy, ox) into col (k bytes). */
static void td_im2col(const td_conv2d_params_t *p, const int8_t *in0, int32_t b, int32_t oy,
                      int32_t ox, int8_t *col)
{
    const int8_t pad = (int8_t)(-p->input_offset);
    const int32_t c = p->in_c;
    const int32_t iy0 = oy * p->stride_h - p->pad_h;
    const int32_t ix0 = ox * p->stride_w - p->pad_w;
    for (int32_t ky = 0; ky < p->filter_h; ++ky) {
        const int32_t iy = iy0 + ky * p->dilation_h;
        if (iy < 0 || iy >= p->in_h) {
            memset(col, pad, (size_t)(p->filter_w * c));
            col += p->filter_w * c;
            continue;
        }
        const int8_t *row = in0 + (b * p->in_h + iy) * p->in_w * c;
        if (p->dilation_w == 1 && ix0 >= 0 && ix0 + p->filter_w <= p->in_w) {
            memcpy(col, row + ix0 * c, (size_t)(p->filter_w * c));
            col += p->filter_w * c;
            continue;
        }
        for (int32_t kx = 0; kx < p->filter_w; ++kx) {
            const int32_t ix = ix0 + kx * p->dilation_w;
            if (ix < 0 || ix >= p->in_w) {
                memset(col, pad, (size_t)c);
            } else {
                memcpy(col, row + ix * c, (size_t)c);
            }
            col += c;
        }
    }
}

void td_conv2d_s8_dsp(const td_conv2d_params_t *p, const int8_t *in0, int8_t *out0,
                      void *scratch)
{
    const int32_t k = p->filter_h * p->filter_w * p->in_c;
    const int32_t oc = p->out_c;
    const int32_t off = p->output_offset, lo = p->act_min, hi = p->act_max;
    const int32_t *bias = p->bias, *mult = p->mult, *shift = p->shift;
    int8_t *col0 = (int8_t *)scratch;
    int8_t *col1 = col0 + td_col_pitch(p);
    const int32_t pixels = p->batches * p->out_h * p->out_w;
    int32_t b = 0, oy = 0, ox = 0;
    int32_t acc[4];
    for (int32_t px = 0; px < pixels; px += 2) {
        const int32_t two = px + 1 < pixels;
        td_im2col(p, in0, b, oy, ox, col0);
        if (++ox == p->out_w) {
            ox = 0;
            if (++oy == p->out_h) {
                oy = 0;
                ++b;
            }
        }
        int8_t *d0 = out0 + px * oc;
        const int8_t *w = p->filter;
        int32_t o = 0;
        if (two) {
            int8_t *d1 = d0 + oc;
            td_im2col(p, in0, b, oy, ox, col1);
            if (++ox == p->out_w) {
                ox = 0;
                if (++oy == p->out_h) {
                    oy = 0;
                    ++b;
                }
            }
            for (; o + 2 <= oc; o += 2, w += 2 * k) {
                td_dot_2x2_s8(col0, col1, w, w + k, k, acc);
                d0[o] = td_output_s8(acc[0], bias[o], mult[o], shift[o], off, lo, hi);
                d0[o + 1] = td_output_s8(acc[1], bias[o + 1], mult[o + 1], shift[o + 1], off,
                                         lo, hi);
                d1[o] = td_output_s8(acc[2], bias[o], mult[o], shift[o], off, lo, hi);
                d1[o + 1] = td_output_s8(acc[3], bias[o + 1], mult[o + 1], shift[o + 1], off,
                                         lo, hi);
            }
            if (o < oc) {
                td_dot_1x2_s8(w, col0, col1, k, acc);
                d0[o] = td_output_s8(acc[0], bias[o], mult[o], shift[o], off, lo, hi);
                d1[o] = td_output_s8(acc[1], bias[o], mult[o], shift[o], off, lo, hi);
            }
        } else {
            for (; o + 2 <= oc; o += 2, w += 2 * k) {
                td_dot_1x2_s8(col0, w, w + k, k, acc);
                d0[o] = td_output_s8(acc[0], bias[o], mult[o], shift[o], off, lo, hi);
                d0[o + 1] = td_output_s8(acc[1], bias[o + 1], mult[o + 1], shift[o + 1], off,
                                         lo, hi);
            }
            if (o < oc) {
                d0[o] = td_output_s8(td_dot_1x1_s8(col0, w, k), bias[o], mult[o], shift[o],
                                     off, lo, hi);
            }
        }
    }
}
