/*
 * td_add_s8_opt.c - int8 ADD of two tensors of the same shape (no broadcasting), bit-exact
 * with td_add_s8_ref (and so with TFLite Micro), for any core.
 *
 * The reference's arithmetic per element, each of its three requantizations (each input to
 * twice the larger scale, the sum to the output) in the rounding form of td_requant.h: one
 * SMMULR-like high multiply of twice the value, the value's sign, one rounding constant and
 * one arithmetic shift, with no branch. The host chose this kernel only where it proved the
 * form exact for every value the op can produce (tinydeploy/kernels/elementwise.py:
 * add_rounding_form_holds): the inputs' |(x + offset) << 20| <= 255 * 2^20 and the bound of
 * the sum, a positive multiplier, and no wrap; and one input's shift 0 (the input with the
 * larger scale: its multiplier is exactly 1/2), whose requantization is the high multiply
 * alone. About 25 instructions per
 * element on a Cortex-M4 against ~110 for the reference's general requantization.
 *
 * Element i of both inputs is read before element i of the output is written, so the output
 * may be either input (in place). Parameters: td_add_params_t as for td_add_s8_ref, with
 * in0_strides and in1_strides those of equal shapes (out_dims gives the element count).
 */
#include <stddef.h>

#include "td_kernels.h"

int32_t td_add_s8_opt_scratch_size(const td_add_params_t *p)
{
    (void)p;
    return 0;
}

/* td_requantize(x, m, -e) + zp in the rounding form, r = td_requant_rnd(2 * zp + 1, e), for
 * e >= 1 (shifted); the high multiply plus r = zp for e = 0 */
static inline __attribute__((always_inline)) int32_t
td_add_rescale(int32_t x, int32_t m, int32_t e, int32_t r, const int shifted)
{
    const int32_t h = td_smmulr2(x, m);
    return shifted ? (h + (h >> 31) + r) >> e : h + r;
}

static inline int32_t td_add_rnd(int32_t zp, int32_t e)
{
    return e == 0 ? zp : td_requant_rnd(2 * zp + 1, e);
}

/* The loop for one combination of the shifts: the first operand's is 0 (the kernel swaps the
 * operands so), the second's and the output's are 0 or not (s1, so). */
static inline __attribute__((always_inline)) void
td_add_loop(const td_add_params_t *p, const int8_t *a, int32_t off0, int32_t m0,
            const int8_t *b, int32_t off1, int32_t m1, int32_t e1, int8_t *out0, int32_t n,
            const int s1, const int so)
{
    const int32_t ls = p->left_shift, mo = p->out_mult, eo = -p->out_shift;
    const int32_t r1 = td_add_rnd(0, e1);
    const int32_t ro = td_add_rnd(p->out_offset, eo);
    const int32_t lo = p->act_min, hi = p->act_max;
    for (int32_t i = 0; i < n; ++i) {
        const int32_t x = (int32_t)((uint32_t)(a[i] + off0) << ls);
        const int32_t y = (int32_t)((uint32_t)(b[i] + off1) << ls);
        const int32_t s = td_add_rescale(x, m0, 0, 0, 0) + td_add_rescale(y, m1, e1, r1, s1);
        out0[i] = (int8_t)td_clamp_s32(td_add_rescale(s, mo, eo, ro, so), lo, hi);
    }
}

void td_add_s8_opt(const td_add_params_t *p, const int8_t *in0, const int8_t *in1,
                   int8_t *out0)
{
    int32_t n = 1;
    for (int32_t k = 0; k < TD_BCAST_DIMS; ++k) {
        n *= p->out_dims[k];
    }
    const int8_t *a = in0, *b = p->in1_const != NULL ? p->in1_const : in1;
    int32_t off0 = p->in0_offset, m0 = p->in0_mult;
    int32_t off1 = p->in1_offset, m1 = p->in1_mult, e1 = -p->in1_shift;
    if (p->in0_shift != 0) {   /* the sum is symmetric: the unshifted operand first */
        const int8_t *t = a;
        a = b;
        b = t;
        off0 = p->in1_offset, m0 = p->in1_mult;
        off1 = p->in0_offset, m1 = p->in0_mult, e1 = -p->in0_shift;
    }
    const int so = p->out_shift != 0;
    if (e1 != 0) {
        if (so) {
            td_add_loop(p, a, off0, m0, b, off1, m1, e1, out0, n, 1, 1);
        } else {
            td_add_loop(p, a, off0, m0, b, off1, m1, e1, out0, n, 1, 0);
        }
    } else if (so) {
        td_add_loop(p, a, off0, m0, b, off1, m1, e1, out0, n, 0, 1);
    } else {
        td_add_loop(p, a, off0, m0, b, off1, m1, e1, out0, n, 0, 0);
    }
}
