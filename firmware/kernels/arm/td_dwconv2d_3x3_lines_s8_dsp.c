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
    int32_t words;                    /* words (two int16 positions) per widened line */
    int32_t first;                    /* the word of the first image value */
    int32_t lead;                     /* 1: that word is (padding, first value) */
    int32_t full;                     /* then words of two image values */
    int32_t trail;                    /* 1: then one word (last value, padding) */
} td_dw3l_geom_t;

/* One channel: what the line loop reads from memory (the offsets are the assembly's
 * operands) and the pairs of its kernel lines. */
typedef struct {
    td_word2_t b2;    /* the doubled bias with the input offset folded in, twice */
    td_word2_t mr;    /* the multiplier and the rounding constant r */
    int32_t step;     /* output step along the line (bytes) */
    int32_t ones;     /* (-(outputs taken one at a time)) << 8 | e */
    int32_t w[10];    /* doubled (w0, w1), (w1, w2) of kernel lines 0, 1, 2, 0, 1 */
} td_dw3l_chan_t;

/* SMMLAR(a2, m, r) plus the sign of a2, shifted right by e and saturated to int8: the
 * rounding-form requantization of acc = a2 / 2 (td_requant_round_fold) */
static inline int32_t td_dw3l_out(int32_t a2, int32_t m, int32_t e, int32_t r)
{
    const int32_t x = (int32_t)((((int64_t)a2 * (int64_t)m + ((int64_t)1 << 31)) >> 32) + r);
    return td_ssat8((x + (a2 >> 31)) >> e);
}

#if TD_SIMD_NATIVE && defined(__OPTIMIZE__)

/* n whole words of the line at d from the input values s[0], s[e], s[2e], ... */
static inline __attribute__((always_inline)) void
td_dw3l_words(td_word_t *d, const int8_t *s, int32_t e, int32_t n)
{
    int32_t t0, t1, t2, t3;
    __asm__ volatile(
        "lsrs   %[n], %[n], #1\n\t"
        "bcc    1f\n\t"
        "ldrsb  %[t0], [%[s]]\n\t"
        "ldrsb  %[t1], [%[s], %[e]]\n\t"
        "add    %[s], %[s], %[e], lsl #1\n\t"
        "pkhbt  %[t0], %[t0], %[t1], lsl #16\n\t"
        "str    %[t0], [%[d]], #4\n\t"
        "1:\n\t"
        "cmp    %[n], #0\n\t"
        "beq    3f\n\t"
        "2:\n\t"
        "ldrsb  %[t0], [%[s]]\n\t"
        "ldrsb  %[t1], [%[s], %[e]]\n\t"
        "add    %[s], %[s], %[e], lsl #1\n\t"
        "ldrsb  %[t2], [%[s]]\n\t"
        "ldrsb  %[t3], [%[s], %[e]]\n\t"
        "add    %[s], %[s], %[e], lsl #1\n\t"
        "pkhbt  %[t0], %[t0], %[t1], lsl #16\n\t"
        "pkhbt  %[t2], %[t2], %[t3], lsl #16\n\t"
        "strd   %[t0], %[t2], [%[d]], #8\n\t"
        "subs   %[n], %[n], #1\n\t"
        "bne    2b\n\t"
        "3:\n\t"
        : [d] "+r"(d), [s] "+r"(s), [n] "+r"(n), [t0] "=&r"(t0), [t1] "=&r"(t1),
          [t2] "=&r"(t2), [t3] "=&r"(t3)
        : [e] "r"(e)
        : "cc", "memory");
}

/* One output line: `pairs` pairs of outputs (stride 1), then the outputs taken one at a
 * time (k->ones); ring: slot 0's first word, w: the pairs of the kernel lines in slots
 * 0, 1, 2. Registers: r4-r9 the weights, r10 the ring, r11 the output, r12 the count and
 * e (ASR reads its low byte; the count ends by the carry of its high bits). */
static inline __attribute__((always_inline)) void
td_dw3l_line(const td_word_t *ring, int8_t *out, const int32_t *w, int32_t pairs,
             int32_t e, const td_dw3l_chan_t *k)
{
    register int32_t w0 __asm__("r4") = w[0];
    register int32_t v0 __asm__("r5") = w[1];
    register int32_t w1 __asm__("r6") = w[2];
    register int32_t v1 __asm__("r7") = w[3];
    register int32_t w2 __asm__("r8") = w[4];
    register int32_t v2 __asm__("r9") = w[5];
    register const td_word_t *r __asm__("r10") = ring;
    register int8_t *o __asm__("r11") = out;
    register uint32_t ec __asm__("r12") = ((uint32_t)-pairs << 8) | (uint32_t)e;
    __asm__ volatile(
        "cmp    r12, #256\n\t"
        "blo    .Ldw3l_one%=\n\t"
        ".Ldw3l_pair%=:\n\t"
        "ldrd   r0, r1, %[b2]\n\t"
        "ldrd   r2, r3, [r10, #128]\n\t"
        "smlad  r0, r2, r6, r0\n\t"
        "smlatb r1, r2, r6, r1\n\t"
        "smlabt r0, r3, r7, r0\n\t"
        "smlad  r1, r3, r7, r1\n\t"
        "ldrd   r2, r3, [r10, #256]\n\t"
        "smlad  r0, r2, r8, r0\n\t"
        "smlatb r1, r2, r8, r1\n\t"
        "smlabt r0, r3, r9, r0\n\t"
        "smlad  r1, r3, r9, r1\n\t"
        "ldrd   r2, r3, [r10], #4\n\t"
        "smlad  r0, r2, r4, r0\n\t"
        "smlatb r1, r2, r4, r1\n\t"
        "smlabt r0, r3, r5, r0\n\t"
        "smlad  r1, r3, r5, r1\n\t"
        "ldrd   r2, r3, %[mr]\n\t"
        "smmlar lr, r0, r2, r3\n\t"
        "add    lr, lr, r0, asr #31\n\t"
        "smmlar r0, r1, r2, r3\n\t"
        "add    r0, r0, r1, asr #31\n\t"
        "ldr    r1, %[step]\n\t"
        "asr    lr, lr, r12\n\t"
        "asr    r0, r0, r12\n\t"
        "ssat   lr, #8, lr\n\t"
        "ssat   r0, #8, r0\n\t"
        "strb   lr, [r11]\n\t"
        "strb   r0, [r11, r1]\n\t"
        "add    r11, r11, r1, lsl #1\n\t"
        "adds   r12, r12, #256\n\t"
        "bcc    .Ldw3l_pair%=\n\t"
        ".Ldw3l_one%=:\n\t"
        "ldr    r12, %[ones]\n\t"
        "cmp    r12, #256\n\t"
        "blo    .Ldw3l_end%=\n\t"
        ".Ldw3l_loop1%=:\n\t"
        "ldr    r0, %[b2]\n\t"
        "ldrd   r2, r3, [r10, #128]\n\t"
        "smlad  r0, r2, r6, r0\n\t"
        "smlabt r0, r3, r7, r0\n\t"
        "ldrd   r2, r3, [r10, #256]\n\t"
        "smlad  r0, r2, r8, r0\n\t"
        "smlabt r0, r3, r9, r0\n\t"
        "ldrd   r2, r3, [r10], #4\n\t"
        "smlad  r0, r2, r4, r0\n\t"
        "smlabt r0, r3, r5, r0\n\t"
        "ldrd   r2, r3, %[mr]\n\t"
        "smmlar r1, r0, r2, r3\n\t"
        "add    r1, r1, r0, asr #31\n\t"
        "ldr    r2, %[step]\n\t"
        "asr    r1, r1, r12\n\t"
        "ssat   r1, #8, r1\n\t"
        "strb   r1, [r11]\n\t"
        "add    r11, r11, r2\n\t"
        "adds   r12, r12, #256\n\t"
        "bcc    .Ldw3l_loop1%=\n\t"
        ".Ldw3l_end%=:\n\t"
        : "+r"(r), "+r"(o), "+r"(ec)
        : "r"(w0), "r"(v0), "r"(w1), "r"(v1), "r"(w2), "r"(v2), [b2] "m"(k->b2),
          [mr] "m"(k->mr), [step] "m"(k->step), [ones] "m"(k->ones)
        : "r0", "r1", "r2", "r3", "lr", "cc", "memory");
}

#else /* the same loops in C (the host, and builds without optimisation) */

static inline void td_dw3l_words(td_word_t *d, const int8_t *s, int32_t e, int32_t n)
{
    for (; n > 0; --n, s += 2 * e) {
        *d++ = td_pkhbt16(s[0], s[e]);
    }
}

static inline void td_dw3l_line(const td_word_t *ring, int8_t *o, const int32_t *w,
                                int32_t pairs, int32_t e, const td_dw3l_chan_t *k)
{
    const td_word_t *r = ring;
    const int32_t bias = k->b2.w[0], m = k->mr.w[0], rnd = k->mr.w[1], step = k->step;
    for (; pairs > 0; --pairs, ++r, o += 2 * step) {
        int32_t a = bias, b = bias;
        for (int32_t s = 0; s < 3; ++s) {
            const int32_t p01 = r[s * TD_DW3L_WORDS], p23 = r[s * TD_DW3L_WORDS + 1];
            a = td_smlabt(p23, w[2 * s + 1], td_smlad(p01, w[2 * s], a));
            b = td_smlad(p23, w[2 * s + 1], td_smlatb(p01, w[2 * s], b));
        }
        o[0] = (int8_t)td_dw3l_out(a, m, e, rnd);
        o[step] = (int8_t)td_dw3l_out(b, m, e, rnd);
    }
    for (int32_t n = -(k->ones >> 8); n > 0; --n, ++r, o += step) {
        int32_t a = bias;
        for (int32_t s = 0; s < 3; ++s) {
            const int32_t p01 = r[s * TD_DW3L_WORDS], p23 = r[s * TD_DW3L_WORDS + 1];
            a = td_smlabt(p23, w[2 * s + 1], td_smlad(p01, w[2 * s], a));
        }
        o[0] = (int8_t)td_dw3l_out(a, m, e, rnd);
    }
}

#endif

/* Input line u (across) of one channel into its ring slot: the words holding image values
 * (the padding words keep the fill of the call's start), or, outside the image, all
 * `neg2` (the padding value -input_offset in both halves). src: the channel's first input
 * byte of the image. */
static inline __attribute__((always_inline)) void
td_dw3l_widen(td_word_t *slot, const int8_t *src, int32_t u, int32_t neg2,
              const td_dw3l_geom_t *g)
{
    if ((uint32_t)u >= (uint32_t)g->n_x) {
        for (int32_t i = 0; i < g->words; ++i) {
            slot[i] = neg2;
        }
        return;
    }
    const int32_t e = g->e_a;
    const int8_t *s = src + u * g->e_x;
    td_word_t *d = slot + g->first;
    if (g->lead) {
        *d++ = td_pkhbt16(neg2, s[0]);
        s += e;
    }
    td_dw3l_words(d, s, e, g->full);
    if (g->trail) {
        d[g->full] = td_pkhbt16(s[2 * e * g->full], neg2);
    }
}

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
    const int32_t width = ((g->out_a - 1) * g->s_a + 4 + 1) & ~1;
    g->words = width / 2;
    /* the image's values lie at positions [p0, p1) of the line */
    const int32_t p0 = g->pad_a < width ? g->pad_a : width;
    const int32_t p1 = g->pad_a + g->n_a < width ? g->pad_a + g->n_a : width;
    g->first = p0 >> 1;
    g->lead = p0 < p1 ? p0 & 1 : 0;
    const int32_t q0 = p0 + g->lead;
    g->full = p1 > q0 ? (p1 - q0) >> 1 : 0;
    g->trail = p1 > q0 ? (p1 - q0) & 1 : 0;
}

void td_dwconv2d_3x3_lines_s8_dsp(const td_dwconv2d_params_t *p, const int8_t *in0,
                                  int8_t *out0)
{
    td_word_t ring[3 * TD_DW3L_WORDS] __attribute__((aligned(8)));
    td_dw3l_geom_t g;
    td_dw3l_geometry(p, &g);
    const int32_t ch = p->in_c, off = p->input_offset;
    const int32_t neg2 = td_pack_off(-off);
    const int32_t zp2p1 = 2 * p->output_offset + 1;
    const int32_t lo = p->act_min, hi = p->act_max;
    const int clamp = lo != INT8_MIN || hi != INT8_MAX;
    const int32_t n = g.out_a, step = g.o_a;
    const int32_t pairs = g.s_a == 1 ? n >> 1 : 0;
    const int32_t in_image = p->in_h * p->in_w * ch, out_image = p->out_h * p->out_w * ch;
    td_dw3l_chan_t k;
    k.step = step;
    /* the padding positions of every slot hold -input_offset from here on */
    for (int32_t i = 0; i < 3 * TD_DW3L_WORDS; ++i) {
        ring[i] = neg2;
    }
    for (int32_t b = 0; b < p->batches; ++b) {
        for (int32_t c = 0; c < ch; ++c) {
            const int8_t *src = in0 + b * in_image + c;
            int8_t *dst = out0 + b * out_image + c;
            /* acc = bias + sum of w * (x + off) = (bias + off * sum of w) + sum of w * x,
             * doubled (the 2 * acc that SMMLAR takes) through doubled taps */
            uint32_t sum = 0;
            for (int32_t t = 0; t < 3; ++t) {   /* kernel line t, taps along it */
                const int8_t *f = p->filter + t * g.t_x * ch + c;
                const int32_t f0 = f[0], f1 = f[g.t_a * ch], f2 = f[2 * g.t_a * ch];
                sum += (uint32_t)(f0 + f1 + f2);
                k.w[2 * t] = td_pkhbt16(2 * f0, 2 * f1);
                k.w[2 * t + 1] = td_pkhbt16(2 * f1, 2 * f2);
            }
            for (int32_t t = 0; t < 4; ++t) {
                k.w[6 + t] = k.w[t];
            }
            const uint32_t bias = (p->bias != 0 ? (uint32_t)p->bias[c] : 0u)
                                  + (uint32_t)off * sum;
            k.b2.w[0] = k.b2.w[1] = (int32_t)(2u * bias);
            const int32_t e = -p->shift[c];
            k.mr.w[0] = p->mult[c];
            k.mr.w[1] = td_requant_rnd(zp2p1, e);
            k.ones = (int32_t)(((uint32_t)-(n - 2 * pairs) << 8) | (uint32_t)e);
            int32_t next = -g.pad_x, slot = 0;   /* the next input line to widen, its slot */
            int32_t base = 0;                    /* (j * s_x) % 3 */
            for (int32_t j = 0; j < g.out_x; ++j, dst += g.o_x) {
                const int32_t u_end = j * g.s_x - g.pad_x + 3;
                for (; next < u_end; ++next) {     /* (s_x <= 2: no line is skipped) */
                    td_dw3l_widen(ring + slot * TD_DW3L_WORDS, src, next, neg2, &g);
                    slot = slot == 2 ? 0 : slot + 1;
                }
                /* slot s holds kernel line (s - base) % 3: its pairs from k.w[2 * rot] on */
                const int32_t rot = base == 0 ? 0 : 3 - base;
                td_dw3l_line(ring, dst, k.w + 2 * rot, pairs, e, &k);
                base += g.s_x;
                base = base >= 3 ? base - 3 : base;
                if (clamp) {
                    int8_t *o = dst;
                    for (int32_t i = 0; i < n; ++i, o += step) {
                        *o = (int8_t)td_clamp_s32(*o, lo, hi);
                    }
                }
            }
        }
    }
}
