/*
 * td_opt_pw.c - the one body of the portable pointwise convolution (td_opt_pw.h), shared by
 * td_conv2d_s8_opt (front to back) and td_conv2d_1x1_back_s8_opt (back to front): one copy
 * in flash when a model uses both orders.
 *
 * Speed on the Cortex-M0 comes from the loop shape: a pair of output channels shares every
 * input load (one input byte, two filter bytes, two multiply-accumulates), and the rows are
 * walked by one negative index towards their ends, which Thumb-1 reads with its
 * register-offset LDRSB and no other address arithmetic: about 5.5 instructions per
 * multiply-accumulate against about 7 for one channel at a time.
 *
 * Sums: bias[o] + sum_i (in[i] + input_offset) * filter[o][i] in int32, as td_opt_dot forms
 * them (the host folds the input offset into the bias where it can, input_offset = 0).
 */
#include "td_opt_pw.h"

#include "td_opt_dot.h"

/* *a0 += sum_{i<n} (x[i] + off) * w0[i], *a1 likewise with w1; n >= 1. Not inlined: alone
 * the loop keeps its three rows, the index and both sums in the Cortex-M0's eight low
 * registers; inlined into the pixel loops they were spilled to the stack (8 instructions per
 * multiply-accumulate instead of 5.5). */
static __attribute__((noinline)) void td_opt_dot2(const int8_t *x, const int8_t *w0,
                                                  const int8_t *w1, int32_t n, int32_t off,
                                                  int32_t *a0, int32_t *a1)
{
    const int8_t *xe = x + n, *e0 = w0 + n, *e1 = w1 + n;
    int32_t s0 = *a0, s1 = *a1;
    int32_t i = -n;
    if (off == 0) {
        do {
            const int32_t v = xe[i];
            s0 += v * e0[i];
            s1 += v * e1[i];
        } while (++i != 0);
    } else {
        do {
            const int32_t v = xe[i] + off;
            s0 += v * e0[i];
            s1 += v * e1[i];
        } while (++i != 0);
    }
    *a0 = s0;
    *a1 = s1;
}

/* Output channel o of accumulator acc; one copy in the code for the three calls below. */
static __attribute__((noinline)) int8_t td_opt_pw_out(const td_conv2d_params_t *p,
                                                      int32_t acc, int32_t o)
{
    return td_opt_out(acc, p->mult[o], p->shift[o], p->output_offset, p->act_min, p->act_max,
                      p->requant_form);
}

/* The out_c outputs of one output pixel from its input pixel x: pairs of channels, an odd
 * last channel summed as a pair with itself. */
static void td_opt_pw_pixel(const td_conv2d_params_t *p, const int8_t *x, int8_t *dst)
{
    const int32_t n = p->in_c, oc = p->out_c, off = p->input_offset;
    const int32_t *bias = p->bias;
    const int8_t *w = p->filter;
    int32_t o = 0;
    for (; o + 1 < oc; o += 2, w += 2 * n) {
        int32_t a0 = bias != 0 ? bias[o] : 0, a1 = bias != 0 ? bias[o + 1] : 0;
        td_opt_dot2(x, w, w + n, n, off, &a0, &a1);
        dst[o] = td_opt_pw_out(p, a0, o);
        dst[o + 1] = td_opt_pw_out(p, a1, o + 1);
    }
    if (o < oc) {
        int32_t a0 = bias != 0 ? bias[o] : 0, a1 = 0;
        td_opt_dot2(x, w, w, n, off, &a0, &a1);
        dst[o] = td_opt_pw_out(p, a0, o);
    }
}

void td_opt_pw(const td_conv2d_params_t *p, const int8_t *in0, int8_t *out0, int32_t back)
{
    const int32_t nb = p->batches, oh = p->out_h, ow = p->out_w, oc = p->out_c;
    const int32_t sx = p->stride_w * p->in_c, sy = p->stride_h * p->in_w * p->in_c;
    const int32_t image = p->in_h * p->in_w * p->in_c;
    for (int32_t bi = 0; bi < nb; ++bi) {
        const int32_t b = back ? nb - 1 - bi : bi;
        for (int32_t yi = 0; yi < oh; ++yi) {
            const int32_t y = back ? oh - 1 - yi : yi;
            const int8_t *row = in0 + b * image + y * sy;
            int8_t *out_row = out0 + (b * oh + y) * ow * oc;
            for (int32_t xi = 0; xi < ow; ++xi) {
                const int32_t x = back ? ow - 1 - xi : xi;
                td_opt_pw_pixel(p, row + x * sx, out_row + x * oc);
            }
        }
    }
}
