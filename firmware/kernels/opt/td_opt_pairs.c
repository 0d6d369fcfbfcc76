/*
 * td_opt_pairs.c - the one channel-pair body of the portable convolution kernels
 * (td_opt_pairs.h), shared by td_conv2d_s8_opt (front to back) and td_conv2d_1x1_back_s8_opt
 * (back to front): one copy in flash when a model uses both orders.
 *
 * Speed on the Cortex-M0 comes from the loop shape: a pair of output channels shares every
 * input load (one input byte, two filter bytes, two multiply-accumulates), and each run of
 * the window is walked by one negative index towards its end, which Thumb-1 reads with its
 * register-offset LDRSB and no other address arithmetic: 11 instructions per two
 * multiply-accumulates against about 7 per one for a channel at a time.
 *
 * Sums: bias[o] + sum over the taps inside the image of (in + input_offset) * filter[o] in
 * int32, as td_opt_dot forms them (the host folds the input offset into the bias where every
 * window is inside the image and passes input_offset = 0).
 */
#include "td_opt_pairs.h"

#include "td_opt_dot.h"

/* s[0] += sum_{i<n} (x[i] + off) * w0[i], s[1] likewise with w1; n >= 1. The rows are
 * walked by one negative index towards their ends. */
static inline void td_opt_run2(const int8_t *x, const int8_t *w0, const int8_t *w1, int32_t n,
                               int32_t off, int32_t *s)
{
    const int8_t *xe = x + n, *e0 = w0 + n, *e1 = w1 + n;
    int32_t s0 = s[0], s1 = s[1];
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
    s[0] = s0;
    s[1] = s1;
}

/* The pair's sums over the runs of r (w0, w1: the two filter rows at r->w_first). Not
 * inlined, and a window of one run (every pointwise pixel) without the loop over runs: alone
 * the inner loop keeps its three runs, the index and both sums in the Cortex-M0's eight low
 * registers; inlined into the pixel loops they were spilled to the stack (16 instructions per
 * two multiply-accumulates instead of 11), and the loop over runs costs a pointwise layer of
 * 64 channels 3 % more. */
static __attribute__((noinline)) void td_opt_dot2(const td_opt_runs_t *r, const int8_t *w0,
                                                  const int8_t *w1, int32_t off, int32_t *s)
{
    if (r->rows == 1) {
        td_opt_run2(r->x, w0, w1, r->n, off, s);
        return;
    }
    const int8_t *x = r->x;
    for (int32_t k = r->rows; k > 0; --k, x += r->step, w0 += r->w_step, w1 += r->w_step) {
        td_opt_run2(x, w0, w1, r->n, off, s);
    }
}

/* Output channel o of accumulator acc; one copy in the code for the three calls below. */
static __attribute__((noinline)) int8_t td_opt_pair_out(const td_conv2d_params_t *p,
                                                        int32_t acc, int32_t o)
{
    return td_opt_out(acc, p->mult[o], p->shift[o], p->output_offset, p->act_min, p->act_max,
                      p->requant_form);
}

/* Pairs of channels; an odd last channel is summed as a pair with itself. */
void td_opt_conv_pixel(const td_conv2d_params_t *p, const td_opt_runs_t *r, int8_t *dst)
{
    const int32_t oc = p->out_c, off = p->input_offset;
    const int32_t size = p->filter_h * p->filter_w * p->filter_c;   /* one filter row */
    const int32_t *bias = p->bias;
    const int8_t *w = p->filter + r->w_first;
    int32_t o = 0;
    for (; o + 1 < oc; o += 2, w += 2 * size) {
        int32_t acc[2] = { bias != 0 ? bias[o] : 0, bias != 0 ? bias[o + 1] : 0 };
        td_opt_dot2(r, w, w + size, off, acc);
        dst[o] = td_opt_pair_out(p, acc[0], o);
        dst[o + 1] = td_opt_pair_out(p, acc[1], o + 1);
    }
    if (o < oc) {
        int32_t acc[2] = { bias != 0 ? bias[o] : 0, 0 };
        td_opt_dot2(r, w, w, off, acc);
        dst[o] = td_opt_pair_out(p, acc[0], o);
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
                const td_opt_runs_t r = { row + x * sx, 0, 1, p->in_c, 0, 0 };
                td_opt_conv_pixel(p, &r, out_row + x * oc);
            }
        }
    }
}
