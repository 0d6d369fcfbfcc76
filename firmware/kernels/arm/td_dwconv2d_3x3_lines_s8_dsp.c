/*
 * td_dwconv2d_3x3_lines_s8_dsp.c - int8 3x3 depthwise convolution (depth multiplier 1, any
 * channel count, strides 1 or 2, no dilation, any padding) with the DSP extension and no
 * scratch, bit-exact with td_dwconv2d_s8_ref.
 *
 * One channel at a time. The image is seen as lines along its longer output side ("along":
 * the rows when out_w >= out_h, else the columns, so that a DS-CNN's 25x5 maps give lines of
 * 25 outputs); each input line of the channel is widened once, raw (LDRSB, PKHBT: 17
 * instructions per eight values), into an int16 line of a ring of three on the stack. The
 * input offset is folded into the bias, acc = (bias + off * sum of w) + sum of w * x, so
 * the padding holds -off (filled into every slot once per call, and into the slot of a line
 * outside the image), whose product cancels its share of the folded bias, as the
 * reference's skipped taps contribute nothing. The taps are doubled, so that the sums are
 * the 2 * acc that SMMLAR takes, as the int16 pairs (w0, w1) and (w1, w2) of each kernel
 * line. Four adjacent outputs i .. i + 3 of a stride-1 line take per kernel line three
 * words, p01 = (in[i], in[i+1]), p23 and p45:
 *     out i   = SMLAD(p01, (w0, w1)) + SMLABT(p23, (w1, w2))
 *     out i+1 = SMLATB(p01, (w0, w1)) + SMLAD(p23, (w1, w2))
 *     out i+2 = SMLAD(p23, (w0, w1)) + SMLABT(p45, (w1, w2))
 *     out i+3 = SMLATB(p23, (w0, w1)) + SMLAD(p45, (w1, w2))
 * summed over the three kernel lines; then per output SMMLAR, the accumulator's sign, ASR,
 * SSAT and one STRB (the rounding form of td_requant.h): 57 instructions per four outputs
 * of nine multiply-accumulates, the weights of the line's rotation read by LDM/LDRD each
 * time (the slot a kernel line sits in rotates; three rotation records, each with the bias
 * and the next line's rotation). The rest of a line, at most a pair and a single, and
 * stride 2 (one output at a time: SMLAD + SMLABT per kernel line, 20 instructions) keep the
 * weights in registers. The DS-CNN's 25x5x64 layer: 20.2 instructions per output with the
 * widening and set-up. All output lines of a channel (widening, outputs) are one assembly
 * block on the channel's record, addressed from sp; the C loops are the host's and -O0's
 * twin. With one padding line on either side, the line above the image reuses the slot of
 * the previous channel's line below it. A clamped activation is applied to the channel's
 * outputs after its lines.
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
 * frame of 3 * TD_DW3L_LINE int16, the channel's record and registers.
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

/* One channel's state, as the line loop reads and updates it (every field is an operand of
 * the assembly, addressed from sp; the pairs are read by one LDRD). */
typedef struct {
    td_word2_t b2;            /* the doubled bias (the input offset folded in), twice */
    td_word2_t mr;            /* the multiplier, the rounding constant r */
    td_word2_t step;          /* the output step along a line (bytes), 3 times that */
    int32_t qe;               /* -(fours of outputs per line) << 8 | e */
    int32_t pe;               /* -(pairs after them) << 8 | e */
    int32_t ones;             /* -(outputs per line taken one at a time) << 8 | e */
    const struct td_dw3l_rot *wp;   /* this output line's rotation (in rot) */
    struct {
        int32_t u, end;       /* the next input line to widen, the first not needed yet */
    } un;
    td_word_t *slot;          /* the slot of input line u */
    td_word_t *ring_end;      /* past slot 2 */
    int32_t s_x;              /* the stride across */
    struct {
        int32_t n_x;          /* input lines */
        int32_t neg2;         /* the padding value -input_offset in both halves */
    } xn;
    struct {
        const int8_t *src;    /* the channel's first input byte of the image */
        int32_t e_x;          /* the input step across (bytes) */
    } sx;
    struct {
        int32_t e_a;          /* the input step along (bytes) */
        int32_t first4;       /* the byte offset in a slot of the word of the first value */
    } af;
    int32_t shape;            /* full << 2 | trail << 1 | lead: lead, that word is (padding,
                               * first value); then full words of two image values; trail,
                               * then one word (last value, padding) */
    int32_t words;            /* words per line */
    struct {
        td_word_t *ring;      /* slot 0 (slots are TD_DW3L_WORDS words apart) */
        int8_t *dst;          /* the output line's first byte */
    } rd;
    struct {
        int32_t o_x;          /* the output step across (bytes) */
        int32_t lines;        /* output lines still to compute */
    } ox;
    struct td_dw3l_rot {      /* slot s holding kernel line (s + i) % 3: */
        int32_t b2;           /* the doubled bias (b2 again) */
        int32_t w[6];         /* the doubled (w0, w1), (w1, w2) of slots 0, 1, 2 */
        const struct td_dw3l_rot *next;   /* the next output line's */
    } rot[3];
} td_dw3l_chan_t;

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

/* SMMLAR(a2, m, r) plus the sign of a2, shifted right by e and saturated to int8: the
 * rounding-form requantization (td_requant_round_fold) of acc = a2 / 2 */
static inline int32_t td_dw3l_out(int32_t a2, int32_t m, int32_t e, int32_t r)
{
    const int32_t x = (int32_t)((((int64_t)a2 * (int64_t)m + ((int64_t)1 << 31)) >> 32) + r);
    return td_ssat8((x + (a2 >> 31)) >> e);
}

#if TD_SIMD_NATIVE && defined(__OPTIMIZE__)

/* Every output line of the channel: its input lines not yet widened into their slots, then
 * its outputs, four at a time (stride 1), a pair and the outputs taken one at a time. In the
 * output loops: r10 the ring, r11 the output, r12 the count and e (ASR reads its low byte;
 * the count ends by the carry of its high bits); the four-output loop reads the weights
 * from the rotation record (lr), the others keep them in r4-r9; bias, multiplier, r and the
 * step are read by LDRD/LDR from the record. */
static inline __attribute__((always_inline)) void td_dw3l_lines(td_dw3l_chan_t *k)
{
    __asm__ volatile(
        /* widening: r0 = u, r1 = u_end, lr = slot */
        ".Ldw3l_line%=:\n\t"
        "ldrd   r0, r1, %[un]\n\t"
        "ldr    lr, %[slot]\n\t"
        "cmp    r0, r1\n\t"
        "bge    .Lw_done%=\n\t"
        ".Lw_line%=:\n\t"
        "ldrd   r12, r7, %[xn]\n\t"
        "cmp    r0, r12\n\t"
        "bhs    .Lw_fill%=\n\t"
        "ldrd   r2, r3, %[sx]\n\t"
        "mla    r2, r0, r3, r2\n\t"
        "ldrd   r3, r4, %[af]\n\t"
        "ldr    r11, %[shape]\n\t"
        "add    r4, lr, r4\n\t"
        "tst    r11, #1\n\t"
        "beq    .Lw_full%=\n\t"
        "ldrsb  r6, [r2]\n\t"
        "add    r2, r2, r3\n\t"
        "pkhbt  r6, r7, r6, lsl #16\n\t"
        "str    r6, [r4], #4\n\t"
        ".Lw_full%=:\n\t"               /* the whole words: 1, then 2, then fours */
        "lsrs   r5, r11, #3\n\t"
        "bcc    .Lw_two%=\n\t"
        "ldrsb  r6, [r2]\n\t"
        "ldrsb  r8, [r2, r3]\n\t"
        "add    r2, r2, r3, lsl #1\n\t"
        "pkhbt  r6, r6, r8, lsl #16\n\t"
        "str    r6, [r4], #4\n\t"
        ".Lw_two%=:\n\t"
        "lsrs   r5, r5, #1\n\t"
        "bcc    .Lw_fours%=\n\t"
        "ldrsb  r6, [r2]\n\t"
        "ldrsb  r8, [r2, r3]\n\t"
        "add    r2, r2, r3, lsl #1\n\t"
        "ldrsb  r9, [r2]\n\t"
        "ldrsb  r10, [r2, r3]\n\t"
        "add    r2, r2, r3, lsl #1\n\t"
        "pkhbt  r6, r6, r8, lsl #16\n\t"
        "pkhbt  r9, r9, r10, lsl #16\n\t"
        "strd   r6, r9, [r4], #8\n\t"
        ".Lw_fours%=:\n\t"
        "cbz    r5, .Lw_trail%=\n\t"
        "add    r11, r3, r3, lsl #1\n\t"   /* 3e (the shape is read again after) */
        ".Lw_four%=:\n\t"
        "ldrsb  r6, [r2]\n\t"
        "ldrsb  r12, [r2, r3]\n\t"
        "pkhbt  r6, r6, r12, lsl #16\n\t"
        "ldrsb  r8, [r2, r3, lsl #1]\n\t"
        "ldrsb  r12, [r2, r11]\n\t"
        "pkhbt  r8, r8, r12, lsl #16\n\t"
        "add    r2, r2, r3, lsl #2\n\t"
        "ldrsb  r9, [r2]\n\t"
        "ldrsb  r12, [r2, r3]\n\t"
        "pkhbt  r9, r9, r12, lsl #16\n\t"
        "ldrsb  r10, [r2, r3, lsl #1]\n\t"
        "ldrsb  r12, [r2, r11]\n\t"
        "pkhbt  r10, r10, r12, lsl #16\n\t"
        "add    r2, r2, r3, lsl #2\n\t"
        "stmia  r4!, {r6, r8, r9, r10}\n\t"
        "subs   r5, r5, #1\n\t"
        "bne    .Lw_four%=\n\t"
        "ldr    r11, %[shape]\n\t"
        ".Lw_trail%=:\n\t"
        "tst    r11, #2\n\t"
        "beq    .Lw_next%=\n\t"
        "ldrsb  r6, [r2]\n\t"
        "pkhbt  r6, r6, r7, lsl #16\n\t"
        "str    r6, [r4]\n\t"
        "b      .Lw_next%=\n\t"
        ".Lw_fill%=:\n\t"                /* a line outside the image: all padding */
        "ldr    r5, %[words]\n\t"
        "mov    r4, lr\n\t"
        "mov    r8, r7\n\t"
        "mov    r9, r7\n\t"
        "mov    r10, r7\n\t"
        "lsrs   r5, r5, #1\n\t"
        "bcc    .Lw_fill2%=\n\t"
        "str    r7, [r4], #4\n\t"
        ".Lw_fill2%=:\n\t"
        "lsrs   r5, r5, #1\n\t"
        "bcc    .Lw_fill4%=\n\t"
        "strd   r7, r8, [r4], #8\n\t"
        ".Lw_fill4%=:\n\t"
        "cbz    r5, .Lw_next%=\n\t"
        ".Lw_fill4l%=:\n\t"
        "stmia  r4!, {r7, r8, r9, r10}\n\t"
        "subs   r5, r5, #1\n\t"
        "bne    .Lw_fill4l%=\n\t"
        ".Lw_next%=:\n\t"
        "add    lr, lr, #128\n\t"
        "ldr    r12, %[ring_end]\n\t"
        "add    r0, r0, #1\n\t"
        "cmp    lr, r12\n\t"
        "it     eq\n\t"
        "subeq  lr, lr, #384\n\t"
        "cmp    r0, r1\n\t"
        "blt    .Lw_line%=\n\t"
        "str    lr, %[slot]\n\t"
        ".Lw_done%=:\n\t"
        "ldr    r12, %[s_x]\n\t"
        "add    r1, r1, r12\n\t"
        "strd   r0, r1, %[un]\n\t"
        /* this line's rotation record (lr); the next line's from its link */
        "ldr    lr, %[wp]\n\t"
        "ldr    r0, [lr, #28]\n\t"
        "str    r0, %[wp]\n\t"
        "ldrd   r10, r11, %[rd]\n\t"
        "ldr    r12, %[qe]\n\t"
        "cmp    r12, #256\n\t"
        "blo    .Ldw3l_rest%=\n\t"
        /* four outputs i .. i + 3 (accumulators r0, r1, r8, r9) from three words per
         * kernel line, (in[i], in[i+1]), (in[i+2], in[i+3]), (in[i+4], in[i+5]) */
        ".Ldw3l_quad%=:\n\t"
        "ldm    lr, {r3, r4, r5, r6, r7}\n\t"
        "ldrd   r2, r9, [r10], #8\n\t"
        "smlad  r0, r2, r4, r3\n\t"
        "smlatb r1, r2, r4, r3\n\t"
        "smlabt r0, r9, r5, r0\n\t"
        "smlad  r1, r9, r5, r1\n\t"
        "smlad  r8, r9, r4, r3\n\t"
        "smlatb r9, r9, r4, r3\n\t"
        "ldr    r2, [r10]\n\t"
        "smlabt r8, r2, r5, r8\n\t"
        "smlad  r9, r2, r5, r9\n\t"
        "ldrd   r2, r3, [r10, #120]\n\t"
        "smlad  r0, r2, r6, r0\n\t"
        "smlatb r1, r2, r6, r1\n\t"
        "smlabt r0, r3, r7, r0\n\t"
        "smlad  r1, r3, r7, r1\n\t"
        "smlatb r9, r3, r6, r9\n\t"
        "smlad  r8, r3, r6, r8\n\t"
        "ldr    r2, [r10, #128]\n\t"
        "smlabt r8, r2, r7, r8\n\t"
        "smlad  r9, r2, r7, r9\n\t"
        "ldrd   r4, r5, [lr, #20]\n\t"
        "ldrd   r2, r3, [r10, #248]\n\t"
        "smlad  r0, r2, r4, r0\n\t"
        "smlatb r1, r2, r4, r1\n\t"
        "smlabt r0, r3, r5, r0\n\t"
        "smlad  r1, r3, r5, r1\n\t"
        "smlatb r9, r3, r4, r9\n\t"
        "smlad  r8, r3, r4, r8\n\t"
        "ldr    r2, [r10, #256]\n\t"
        "smlabt r8, r2, r5, r8\n\t"
        "smlad  r9, r2, r5, r9\n\t"
        "ldrd   r2, r3, %[mr]\n\t"
        "smmlar r4, r0, r2, r3\n\t"
        "add    r4, r4, r0, asr #31\n\t"
        "smmlar r5, r1, r2, r3\n\t"
        "add    r5, r5, r1, asr #31\n\t"
        "smmlar r6, r8, r2, r3\n\t"
        "add    r6, r6, r8, asr #31\n\t"
        "smmlar r7, r9, r2, r3\n\t"
        "add    r7, r7, r9, asr #31\n\t"
        "ldrd   r2, r3, %[step]\n\t"
        "asr    r4, r4, r12\n\t"
        "asr    r5, r5, r12\n\t"
        "asr    r6, r6, r12\n\t"
        "asr    r7, r7, r12\n\t"
        "ssat   r4, #8, r4\n\t"
        "ssat   r5, #8, r5\n\t"
        "ssat   r6, #8, r6\n\t"
        "ssat   r7, #8, r7\n\t"
        "strb   r4, [r11]\n\t"
        "strb   r5, [r11, r2]\n\t"
        "strb   r6, [r11, r2, lsl #1]\n\t"
        "strb   r7, [r11, r3]\n\t"
        "add    r11, r11, r2, lsl #2\n\t"
        "adds   r12, r12, #256\n\t"
        "bcc    .Ldw3l_quad%=\n\t"
        /* the weights of slots 0, 1, 2 in r4-r9 for the rest of the line */
        ".Ldw3l_rest%=:\n\t"
        "ldm    lr, {r3, r4, r5, r6, r7, r8, r9}\n\t"
        "ldr    r12, %[pe]\n\t"
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
        /* the outputs taken one at a time (stride 2, or the last of a line) */
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
        "ldrd   r0, r1, %[rd]\n\t"
        "ldrd   r2, r3, %[ox]\n\t"
        "add    r1, r1, r2\n\t"
        "strd   r0, r1, %[rd]\n\t"
        "subs   r3, r3, #1\n\t"
        "str    r3, %[lines]\n\t"
        "bne    .Ldw3l_line%=\n\t"
        : [un] "+m"(k->un), [slot] "+m"(k->slot), [wp] "+m"(k->wp), [rd] "+m"(k->rd),
          [lines] "+m"(k->ox.lines)
        : [xn] "m"(k->xn), [sx] "m"(k->sx), [af] "m"(k->af), [shape] "m"(k->shape),
          [words] "m"(k->words), [ring_end] "m"(k->ring_end), [s_x] "m"(k->s_x),
          [qe] "m"(k->qe), [pe] "m"(k->pe), [ones] "m"(k->ones), [b2] "m"(k->b2),
          [mr] "m"(k->mr), [step] "m"(k->step), [ox] "m"(k->ox)
        : "r0", "r1", "r2", "r3", "r4", "r5", "r6", "r7", "r8", "r9", "r10", "r11", "r12",
          "lr", "cc", "memory");
}

#else /* the same lines in C (the host, and builds without optimisation) */

static void td_dw3l_line(td_dw3l_chan_t *k)
{
    for (; k->un.u < k->un.end; ++k->un.u) {
        td_word_t *d = k->slot;
        if ((uint32_t)k->un.u >= (uint32_t)k->xn.n_x) {
            for (int32_t i = 0; i < k->words; ++i) {
                d[i] = k->xn.neg2;
            }
        } else {
            const int32_t e = k->af.e_a;
            const int8_t *s = k->sx.src + k->un.u * k->sx.e_x;
            d += k->af.first4 / 4;
            if (k->shape & 1) {
                *d++ = td_pkhbt16(k->xn.neg2, s[0]);
                s += e;
            }
            for (int32_t i = 0; i < k->shape >> 2; ++i, s += 2 * e) {
                *d++ = td_pkhbt16(s[0], s[e]);
            }
            if (k->shape & 2) {
                *d = td_pkhbt16(s[0], k->xn.neg2);
            }
        }
        k->slot += TD_DW3L_WORDS;
        k->slot = k->slot == k->ring_end ? k->rd.ring : k->slot;
    }
    k->un.end += k->s_x;
    const int32_t *w = k->wp->w;
    k->wp = k->wp->next;
    const td_word_t *r = k->rd.ring;
    int8_t *o = k->rd.dst;
    const int32_t bias = k->b2.w[0], m = k->mr.w[0], rnd = k->mr.w[1], step = k->step.w[0];
    const int32_t e = k->qe & 0xFF;
    for (int32_t n = -(k->qe >> 8); n > 0; --n, r += 2) {
        int32_t a[4] = {bias, bias, bias, bias};
        for (int32_t s = 0; s < 3; ++s) {
            const td_word_t *l = r + s * TD_DW3L_WORDS;
            const int32_t ws = w[2 * s], vs = w[2 * s + 1];
            a[0] = td_smlabt(l[1], vs, td_smlad(l[0], ws, a[0]));
            a[1] = td_smlad(l[1], vs, td_smlatb(l[0], ws, a[1]));
            a[2] = td_smlabt(l[2], vs, td_smlad(l[1], ws, a[2]));
            a[3] = td_smlad(l[2], vs, td_smlatb(l[1], ws, a[3]));
        }
        for (int32_t i = 0; i < 4; ++i, o += step) {
            *o = (int8_t)td_dw3l_out(a[i], m, e, rnd);
        }
    }
    for (int32_t n = -(k->pe >> 8); n > 0; --n, ++r, o += 2 * step) {
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
    k->rd.dst += k->ox.o_x;
}

static void td_dw3l_lines(td_dw3l_chan_t *k)
{
    for (; k->ox.lines > 0; --k->ox.lines) {
        td_dw3l_line(k);
    }
}

#endif

void td_dwconv2d_3x3_lines_s8_dsp(const td_dwconv2d_params_t *p, const int8_t *in0,
                                  int8_t *out0)
{
    td_word_t ring[3 * TD_DW3L_WORDS] __attribute__((aligned(8)));
    td_dw3l_chan_t k;
    const int32_t ch = p->in_c, off = p->input_offset;
    int32_t n_a, pad_a, s_a, out_a, pad_x, out_x, t_a, t_x;
    if (p->out_w >= p->out_h) {   /* lines along the rows */
        n_a = p->in_w, pad_a = p->pad_w, s_a = p->stride_w, out_a = p->out_w;
        k.xn.n_x = p->in_h, pad_x = p->pad_h, k.s_x = p->stride_h, out_x = p->out_h;
        k.af.e_a = ch, k.sx.e_x = p->in_w * ch;
        k.step.w[0] = ch, k.ox.o_x = p->out_w * ch;
        t_a = 1, t_x = 3;
    } else {                      /* along the columns */
        n_a = p->in_h, pad_a = p->pad_h, s_a = p->stride_h, out_a = p->out_h;
        k.xn.n_x = p->in_w, pad_x = p->pad_w, k.s_x = p->stride_w, out_x = p->out_w;
        k.af.e_a = p->in_w * ch, k.sx.e_x = ch;
        k.step.w[0] = p->out_w * ch, k.ox.o_x = ch;
        t_a = 3, t_x = 1;
    }
    k.step.w[1] = 3 * k.step.w[0];
    /* (out_a - 1) * s_a + 3 values read, one word more by the last output, rounded to words;
     * the image's values lie at positions [p0, p1) of a line */
    const int32_t width = ((out_a - 1) * s_a + 4 + 1) & ~1;
    const int32_t p0 = pad_a < width ? pad_a : width;
    const int32_t p1 = pad_a + n_a < width ? pad_a + n_a : width;
    k.words = width / 2;
    k.af.first4 = 4 * (p0 >> 1);
    const int32_t lead = p0 < p1 ? p0 & 1 : 0, q0 = p0 + lead;
    k.shape = p1 > q0 ? ((p1 - q0) >> 1 << 2) | ((p1 - q0) & 1) << 1 | lead : lead;
    k.xn.neg2 = td_pack_off(-off);
    k.rd.ring = ring;
    k.ring_end = ring + 3 * TD_DW3L_WORDS;
    for (int32_t i = 0; i < 3; ++i) {   /* output line j + 1 takes rotation i - s_x */
        k.rot[i].next = &k.rot[i >= k.s_x ? i - k.s_x : i + 3 - k.s_x];
    }
    /* stride 1: fours, then at most a pair and a single; stride 2: singles (-count << 8) */
    const int32_t fours = s_a == 1 ? out_a >> 2 : 0, pairs = s_a == 1 ? (out_a >> 1) & 1 : 0;
    const int32_t qe = (int32_t)((uint32_t)-fours << 8), pe = (int32_t)((uint32_t)-pairs << 8);
    const int32_t ones = (int32_t)((uint32_t)-(out_a - 4 * fours - 2 * pairs) << 8);
    const int32_t fa = t_a * ch, fx = t_x * ch;   /* filter steps along and across */
    const int32_t off2 = td_pack_off(off);
    const int32_t zp2p1 = 2 * p->output_offset + 1;
    const int32_t lo = p->act_min, hi = p->act_max;
    const int clamp = lo != INT8_MIN || hi != INT8_MAX;
    const int32_t in_image = p->in_h * p->in_w * ch, out_image = p->out_h * p->out_w * ch;
    /* the last input line a channel widens lies below the image (so its slot is all padding) */
    const int reuse = pad_x == 1 && (out_x - 1) * k.s_x + 1 >= k.xn.n_x;
    k.slot = ring;
    /* the padding positions of every slot hold -input_offset from here on */
    for (int32_t i = 0; i < 3 * TD_DW3L_WORDS; ++i) {
        ring[i] = k.xn.neg2;
    }
    for (int32_t b = 0; b < p->batches; ++b) {
        for (int32_t c = 0; c < ch; ++c) {
            /* 2 * acc = 2 * bias + sum of 2w * (x + off)
             *         = (2 * bias + off * sum of 2w) + sum of 2w * x (the doubled taps) */
            const int8_t *f = p->filter + c, *g = f + fx, *h = g + fx;
            int32_t wa = td_dw3l_pack(f[0], f[fa]), va = td_dw3l_pack(f[fa], f[2 * fa]);
            int32_t wb = td_dw3l_pack(g[0], g[fa]), vb = td_dw3l_pack(g[fa], g[2 * fa]);
            int32_t wc = td_dw3l_pack(h[0], h[fa]), vc = td_dw3l_pack(h[fa], h[2 * fa]);
            wa = td_sadd16(wa, wa), va = td_sadd16(va, va), wb = td_sadd16(wb, wb);
            vb = td_sadd16(vb, vb), wc = td_sadd16(wc, wc), vc = td_sadd16(vc, vc);
            int32_t bias2 = (int32_t)(2u * (p->bias != 0 ? (uint32_t)p->bias[c] : 0u));
            bias2 = td_smlatb(va, off2, td_smlad(wa, off2, bias2));
            bias2 = td_smlatb(vb, off2, td_smlad(wb, off2, bias2));
            bias2 = td_smlatb(vc, off2, td_smlad(wc, off2, bias2));
            k.b2.w[0] = k.b2.w[1] = bias2;
            k.rot[0].b2 = k.rot[1].b2 = k.rot[2].b2 = bias2;
            k.rot[0].w[0] = wa, k.rot[0].w[1] = va, k.rot[0].w[2] = wb, k.rot[0].w[3] = vb;
            k.rot[0].w[4] = wc, k.rot[0].w[5] = vc;
            k.rot[1].w[0] = wb, k.rot[1].w[1] = vb, k.rot[1].w[2] = wc, k.rot[1].w[3] = vc;
            k.rot[1].w[4] = wa, k.rot[1].w[5] = va;
            k.rot[2].w[0] = wc, k.rot[2].w[1] = vc, k.rot[2].w[2] = wa, k.rot[2].w[3] = va;
            k.rot[2].w[4] = wb, k.rot[2].w[5] = vb;
            const int32_t e = -p->shift[c];
            k.mr.w[0] = p->mult[c];
            k.mr.w[1] = td_requant_rnd(zp2p1, e);
            k.qe = qe | e;
            k.pe = pe | e;
            k.ones = ones | e;
            /* line u in slot (u + pad_x) % 3: kernel line t of output line j in slot
             * (j * s_x + t) % 3, so slot s holds kernel line (s - j * s_x) % 3. With one
             * padding line on either side, the line above the image takes the slot before
             * the current one instead, which still holds the previous channel's last line,
             * all padding (or the call's fill), and is not filled again: rotation 1, 0, 2
             * when the current slot is 0, 1, 2. */
            if (reuse) {
                const int32_t cur = (int32_t)(k.slot - ring) / TD_DW3L_WORDS;
                k.wp = &k.rot[cur == 0 ? 1 : (cur == 1 ? 0 : 2)];
                k.un.u = 0;
            } else {
                k.wp = &k.rot[0];
                k.slot = ring;
                k.un.u = -pad_x;
            }
            k.un.end = 3 - pad_x;
            k.sx.src = in0 + b * in_image + c;
            k.rd.dst = out0 + b * out_image + c;
            k.ox.lines = out_x;
            td_dw3l_lines(&k);
            if (clamp) {   /* the activation range, on the channel's outputs */
                int8_t *o = out0 + b * out_image + c;
                for (int32_t j = 0; j < out_x; ++j, o += k.ox.o_x) {
                    for (int32_t i = 0; i < out_a; ++i) {
                        o[i * k.step.w[0]] = (int8_t)td_clamp_s32(o[i * k.step.w[0]], lo, hi);
                    }
                }
            }
        }
    }
}
