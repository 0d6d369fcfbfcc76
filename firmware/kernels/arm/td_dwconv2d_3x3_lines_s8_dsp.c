/*
 * td_dwconv2d_3x3_lines_s8_dsp.c - int8 3x3 depthwise convolution (depth multiplier 1, any
 * channel count, strides 1 or 2, no dilation, any padding) with the DSP extension and no
 * scratch, bit-exact with td_dwconv2d_s8_ref.
 *
 * One channel at a time. The image is seen as lines along its longer output side ("along":
 * the rows when out_w >= out_h, else the columns, so that a DS-CNN's 25x5 maps give lines of
 * 25 outputs); each input line of the channel is widened once into an int16 line of a small
 * ring of three on the stack, the input offset added and the padding stored as 0 (what the
 * reference's skipped taps contribute). The channel's nine taps stay in registers as the
 * int16 pairs (w0, w1) and (w1, w2) of each kernel line; two adjacent outputs i, i + 1 of a
 * stride-1 line take per kernel line one new word of input, p23 = (in[i+2], in[i+3]), and
 * the carried p01 = (in[i], in[i+1]):
 *     out i   += SMLAD(p01, (w0, w1)) + SMLABT(p23, (w1, w2))
 *     out i+1 += SMLATB(p01, (w0, w1)) + SMLAD(p23, (w1, w2))
 * five instructions per kernel line for two outputs; stride 2 takes one word per kernel line
 * and output (SMLAD + SMLABT). Then the rounding-form requantization (td_requant.h) and one
 * STRB. About 18 instructions per output of nine multiply-accumulates, plus about 4 per
 * input value for the widening.
 *
 * Order (tinydeploy/kernels/access.py: dwconv_lines_order, its twin): batch, channel, output
 * line; before an output line its input lines not yet widened are read (each input value of
 * the channel is read once), then the line's outputs are written. So the output may lie on
 * its input at any whole number of pixels the planner proves safe (a channel's outputs only
 * ever land on that channel's inputs already widened).
 *
 * Parameters: td_dwconv2d_params_t as for td_dwconv2d_s8_ref with filter_h = filter_w = 3,
 * depth_multiplier = 1, dilation 1, stride_h and stride_w in {1, 2}, and an along side with
 * (out - 1) * stride + 4 <= TD_DW3L_LINE (checked on the host); filter, bias, mult, shift the
 * reference's; requant_form as chosen on the host (1: every shift <= -1). No scratch; a stack
 * frame of 3 * TD_DW3L_LINE int16 plus registers.
 */
#include "td_kernels.h"

#include "td_dwconv2d_dsp.h"
#include "td_simd.h"

/* int16 values per widened line (twin: DW3L_LINE in tinydeploy/kernels/arm_dsp.py) */
#define TD_DW3L_LINE 64
#define TD_DW3L_WORDS (TD_DW3L_LINE / 2)

int32_t td_dwconv2d_3x3_lines_s8_dsp_scratch_size(const td_dwconv2d_params_t *p)
{
    (void)p;
    return 0;
}

/* The geometry of the lines: along the output's longer side (rows on a tie). */
typedef struct {
    int32_t n_a, pad_a, s_a, out_a;   /* along: input length, padding, stride, outputs */
    int32_t n_x, pad_x, s_x, out_x;   /* across (the lines) */
    int32_t e_a, e_x;                 /* input element steps along and across (bytes) */
    int32_t o_a, o_x;                 /* output element steps along and across (bytes) */
    int32_t t_a, t_x;                 /* tap index steps along and across (3 * ky + kx) */
    int32_t width;                    /* int16 values widened per line (even) */
} td_dw3l_geom_t;

/* One channel's requantization and the pairs (w0, w1), (w1, w2) of each kernel line. */
typedef struct {
    int32_t w01[3], w12[3];
    int32_t bias, mult, shift, rnd;
} td_dw3l_chan_t;

typedef struct {
    int32_t lo, hi;   /* the activation range */
} td_dw3l_quant_t;

/* A zero the compiler cannot see through (so that it keeps the few stores of a padding
 * instead of calling memset) */
static inline int32_t td_dw3l_zero(void)
{
    int32_t z = 0;
    __asm__("" : "+r"(z));
    return z;
}

/* (bottom = x's low half, top = y's low half) as one PKHBT */
static inline int32_t td_dw3l_pack(int32_t x, int32_t y)
{
#if TD_SIMD_NATIVE
    int32_t r;
    __asm__("pkhbt %0, %1, %2, lsl #16" : "=r"(r) : "r"(x), "r"(y));
    return r;
#else
    return td_pkhbt16(x, y);
#endif
}

/* Input line u (across) of one channel into the 4-byte aligned dst, a word (two positions)
 * at a time: along positions -pad_a .. width - pad_a - 1, zero outside the image, the input
 * offset added to both values of a word by one SADD16 (off2). src: the channel's first input
 * byte of the image. */
static __attribute__((noinline)) void td_dw3l_widen(int16_t *dst, const int8_t *src,
                                                    int32_t u, int32_t off2,
                                                    const td_dw3l_geom_t *g)
{
    td_word_t *d = (td_word_t *)dst;
    td_word_t *const end = d + g->width / 2;
    const int32_t z = td_dw3l_zero();
    if ((uint32_t)u >= (uint32_t)g->n_x) {
        while (d < end) {
            *d++ = z;
        }
        return;
    }
    const int32_t e = g->e_a;
    const int8_t *s = src + u * g->e_x;
    const int32_t words = g->width / 2;
    int32_t left = g->pad_a < 2 * words ? g->pad_a : 2 * words;   /* zeros before the image */
    for (; left >= 2; left -= 2) {
        *d++ = z;
    }
    int32_t inside = g->n_a;           /* values of the image still to widen */
    if (left == 1) {                   /* (0, first value) */
        *d++ = td_sadd16(td_dw3l_pack(z, s[0]), off2) & ~0xFFFF;
        s += e;
        --inside;
    }
    int32_t pairs = (int32_t)(end - d);
    pairs = inside / 2 < pairs ? inside / 2 : pairs;
    inside -= 2 * pairs;
    for (; pairs > 0; --pairs, s += 2 * e) {
        *d++ = td_sadd16(td_dw3l_pack(s[0], s[e]), off2);
    }
    if (inside > 0 && d < end) {       /* (last value, 0) */
        *d++ = td_sadd16(td_dw3l_pack(s[0], z), off2) & 0xFFFF;
    }
    while (d < end) {
        *d++ = z;
    }
}

/* td_requantize(acc, m, -e) + zp in the rounding form (td_requant.h) with r folded into the
 * product: SMMLAR(2 * acc, m, r) = SMMULR(2 * acc, m) + r exactly, plus the sign of acc
 * instead of that of SMMULR's x (they differ only where x = 0 and acc < 0, and there r - 1
 * and r give the same quotient, as r mod 2^e = 2^(e - 1)). */
static inline __attribute__((always_inline)) int32_t td_dw3l_round(int32_t acc, int32_t m,
                                                                   int32_t e, int32_t r)
{
    const int32_t a2 = (int32_t)((uint32_t)acc << 1);
#if TD_SIMD_NATIVE
    int32_t x;
    __asm__("smmlar %0, %1, %2, %3" : "=r"(x) : "r"(a2), "r"(m), "r"(r));
#else
    const int32_t x = td_smmulr2(acc, m) + r;
#endif
    return (x + (a2 >> 31)) >> e;
}

/* One channel's requantization of one output (fields of td_dw3l_chan_t in locals) */
#define TD_DW3L_OUT(acc)                                                                   \
    (mode == 1 ? (int8_t)td_ssat8(td_dw3l_round((acc), m, e, rnd))                         \
     : (int8_t)td_clamp_s32(td_ssat8(td_dw3l_round((acc), m, e, rnd)), lo, hi))

/* The words r[k] and r[k + 1] (4-byte aligned; one LDRD on the Cortex-M, k a constant) */
#if TD_SIMD_NATIVE
#define td_load2_at(r_, k_, a_, b_)                                                        \
    __asm__("ldrd %0, %1, [%2, #%c3]"                                                      \
            : "=&r"(*(a_)), "=r"(*(b_))                                                    \
            : "r"(r_), "i"(4 * (k_)), "m"(*(const td_word2_t *)((r_) + (k_))))
#else
#define td_load2_at(r_, k_, a_, b_) (*(a_) = (r_)[k_], *(b_) = (r_)[(k_) + 1])
#endif

/* Every output line of one channel (src, dst: its first input and output byte of the image;
 * k: its taps and requantization): before line j its input lines not yet widened go into
 * the ring (line u in slot (u + pad_x) % 3), then kernel line t of output line j reads slot
 * (j * s_x + t) % 3, so the pairs are taken in slot order from one of three rotations. mode:
 * 1 into all of int8, 2 with a clamp to the activation range. */
static inline __attribute__((always_inline)) void
td_dw3l_channel(int16_t *lines, const td_dw3l_geom_t *g, const int8_t *src, int8_t *dst,
                const td_dw3l_chan_t *k, const td_dw3l_quant_t *q, int32_t off2,
                const int mode)
{
    const int32_t bias = k->bias, m = k->mult, sh = k->shift, e = -sh, rnd = k->rnd;
    const int32_t lo = q->lo, hi = q->hi;
    const int32_t n = g->out_a, step = g->o_a, s_a = g->s_a;
    const td_word_t *const ring = (const td_word_t *)lines;
    int32_t next = -g->pad_x, slot = 0;   /* the next input line to widen, its slot */
    int32_t base = 0;                     /* (j * s_x) % 3 */
    for (int32_t j = 0; j < g->out_x; ++j, dst += g->o_x) {
        const int32_t u_end = j * g->s_x - g->pad_x + 3;
        for (; next < u_end; ++next) {     /* (s_x <= 2: no line is skipped) */
            td_dw3l_widen(lines + slot * TD_DW3L_LINE, src, next, off2, g);
            slot = slot == 2 ? 0 : slot + 1;
        }
        /* slot s holds kernel line (s - base) % 3 */
        const int32_t t0 = base == 0 ? 0 : 3 - base;
        const int32_t t1 = t0 == 2 ? 0 : t0 + 1, t2 = t1 == 2 ? 0 : t1 + 1;
        const int32_t w0 = k->w01[t0], w1 = k->w01[t1], w2 = k->w01[t2];
        const int32_t v0 = k->w12[t0], v1 = k->w12[t1], v2 = k->w12[t2];
        base += g->s_x;
        base = base >= 3 ? base - 3 : base;
        const td_word_t *r = ring;
        int8_t *o = dst;
        int32_t i = 0;
        if (s_a == 1) {
            for (; i + 2 <= n; i += 2, o += 2 * step, ++r) {
                int32_t c0, n0, c1, n1, c2, n2;
                td_load2_at(r, 0, &c0, &n0);
                td_load2_at(r, TD_DW3L_WORDS, &c1, &n1);
                td_load2_at(r, 2 * TD_DW3L_WORDS, &c2, &n2);
                int32_t a = td_smlad(c0, w0, bias), b = td_smlatb(c0, w0, bias);
                a = td_smlabt(n0, v0, a);
                b = td_smlad(n0, v0, b);
                a = td_smlad(c1, w1, a);
                b = td_smlatb(c1, w1, b);
                a = td_smlabt(n1, v1, a);
                b = td_smlad(n1, v1, b);
                a = td_smlad(c2, w2, a);
                b = td_smlatb(c2, w2, b);
                a = td_smlabt(n2, v2, a);
                b = td_smlad(n2, v2, b);
                o[0] = TD_DW3L_OUT(a);
                o[step] = TD_DW3L_OUT(b);
            }
        }
        for (; i < n; ++i, o += step, ++r) {   /* stride 2, or the last of an odd line */
            int32_t c0, n0, c1, n1, c2, n2;
            td_load2_at(r, 0, &c0, &n0);
            td_load2_at(r, TD_DW3L_WORDS, &c1, &n1);
            td_load2_at(r, 2 * TD_DW3L_WORDS, &c2, &n2);
            int32_t a = td_smlad(c0, w0, bias);
            a = td_smlabt(n0, v0, a);
            a = td_smlad(c1, w1, a);
            a = td_smlabt(n1, v1, a);
            a = td_smlad(c2, w2, a);
            a = td_smlabt(n2, v2, a);
            *o = TD_DW3L_OUT(a);
        }
    }
}

#define TD_DW3L_CHANNEL_FN(name, mode)                                                     \
    static void name(int16_t *lines, const td_dw3l_geom_t *g, const int8_t *src,          \
                     int8_t *dst, const td_dw3l_chan_t *k, const td_dw3l_quant_t *q,       \
                     int32_t off2)                                                         \
    {                                                                                      \
        td_dw3l_channel(lines, g, src, dst, k, q, off2, mode);                             \
    }
TD_DW3L_CHANNEL_FN(td_dw3l_channel_round, 1)
TD_DW3L_CHANNEL_FN(td_dw3l_channel_clamp, 2)

typedef void (*td_dw3l_channel_fn)(int16_t *, const td_dw3l_geom_t *, const int8_t *,
                                   int8_t *, const td_dw3l_chan_t *, const td_dw3l_quant_t *,
                                   int32_t);

static void td_dw3l_geometry(const td_dwconv2d_params_t *p, td_dw3l_geom_t *g)
{
    const int32_t ch = p->in_c;
    if (p->out_w >= p->out_h) {   /* along the rows */
        g->n_a = p->in_w, g->pad_a = p->pad_w, g->s_a = p->stride_w, g->out_a = p->out_w;
        g->n_x = p->in_h, g->pad_x = p->pad_h, g->s_x = p->stride_h, g->out_x = p->out_h;
        g->e_a = ch, g->e_x = p->in_w * ch;
        g->o_a = ch, g->o_x = p->out_w * ch;
        g->t_a = 1, g->t_x = 3;
    } else {                      /* along the columns */
        g->n_a = p->in_h, g->pad_a = p->pad_h, g->s_a = p->stride_h, g->out_a = p->out_h;
        g->n_x = p->in_w, g->pad_x = p->pad_w, g->s_x = p->stride_w, g->out_x = p->out_w;
        g->e_a = p->in_w * ch, g->e_x = ch;
        g->o_a = p->out_w * ch, g->o_x = ch;
        g->t_a = 3, g->t_x = 1;
    }
    /* (out_a - 1) * s_a + 3 values read, one word more by the last output, rounded to words */
    g->width = ((g->out_a - 1) * g->s_a + 4 + 1) & ~1;
}

void td_dwconv2d_3x3_lines_s8_dsp(const td_dwconv2d_params_t *p, const int8_t *in0,
                                  int8_t *out0)
{
    int16_t lines[3 * TD_DW3L_LINE] __attribute__((aligned(4)));
    td_dw3l_geom_t g;
    td_dw3l_geometry(p, &g);
    const int32_t ch = p->in_c, off2 = td_pack_off(p->input_offset);
    td_dw3l_quant_t q;
    const int32_t zp2p1 = 2 * p->output_offset + 1;
    q.lo = p->act_min;
    q.hi = p->act_max;
    const td_dw3l_channel_fn channel = q.lo == INT8_MIN && q.hi == INT8_MAX
                                       ? td_dw3l_channel_round : td_dw3l_channel_clamp;
    const int32_t in_image = p->in_h * p->in_w * ch, out_image = p->out_h * p->out_w * ch;
    for (int32_t b = 0; b < p->batches; ++b) {
        for (int32_t c = 0; c < ch; ++c) {
            const int8_t *src = in0 + b * in_image + c;
            int8_t *dst = out0 + b * out_image + c;
            td_dw3l_chan_t k;
            for (int32_t kx = 0; kx < 3; ++kx) {   /* kernel line kx, taps along it */
                const int8_t *f = p->filter + kx * g.t_x * ch + c;
                const int32_t f0 = f[0], f1 = f[g.t_a * ch], f2 = f[2 * g.t_a * ch];
                k.w01[kx] = td_pkhbt16(f0, f1);
                k.w12[kx] = td_pkhbt16(f1, f2);
            }
            k.bias = p->bias != 0 ? p->bias[c] : 0;
            k.mult = p->mult[c];
            k.shift = p->shift[c];
            k.rnd = td_requant_rnd(zp2p1, -k.shift);
            channel(lines, &g, src, dst, &k, &q, off2);
        }
    }
}
