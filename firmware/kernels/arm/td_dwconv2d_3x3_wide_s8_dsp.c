/*
 * td_dwconv2d_3x3_wide_s8_dsp.c - int8 3x3 depthwise convolution (depth multiplier 1,
 * channels a multiple of 4, stride and dilation any, the rounding form of the requantization)
 * with the DSP extension, no scratch, and the weights widened on the host: built for short
 * maps such as one output row of a streamed step (5 pixels x 64 channels), where the
 * per-pixel work of the unrolled kernel (tap pointers, widening the weights, the rounding
 * constant from the shift) is a large part of the whole. Bit-exact with td_dwconv2d_s8_ref.
 *
 * The host stores, per group of four channels, one table of 31 words (124 bytes, in `filter`;
 * `bias`, `mult` and `shift` are not read):
 *   words  0..3   2 * (bias + input_offset * sum of the channel's nine taps): the input
 *                 offset folded into the bias, so the taps multiply the raw int8 inputs;
 *   words  4..19  four tap pairs (t, u) of td_dww_taps, for channels c0..c3 one word each:
 *                 int16 (2 w_t, 2 w_u) (bottom, top);
 *   words 20, 21  tap 6 (row 2, column 0): int16 (2 w c0, 2 w c2), (2 w c1, 2 w c3);
 *   words 22..29  per channel (mult, r): r = (2 * output_zp + 1) * 2^(e - 1), e = -shift;
 *   word  30      per channel the byte e - 1.
 * Doubled weights give the doubled accumulator that SMMLAR wants (no shift per output); the
 * host proved the rounding form exact (|acc| < 2^30, every e >= 1).
 *
 * A tap outside the image reads the input zero point (what input_offset cancels: x + offset
 * = 0, the reference's skipped tap). On the Cortex-M, the pixels of an output row whose three
 * kernel rows are inside the image run in one asm loop per run of pixels with the same
 * columns outside: none, the left one or the right one (a PAD folded into the layer: the
 * border pixels of the feature axis), the latter two reading a word of zero points from the
 * frame for those taps. Per group and pixel: 2 loads of bias, 64 instructions for the 36
 * multiply-accumulates, 27 for the four requantizations, 5 for the activation range
 * (bytewise; none when it is all of int8) and 5 for the store and the loop; the three
 * row pointers post-increment on their last tap, the columns are register offsets
 * (dilation_w * ch and twice that). Other pixels (padded kernel rows, two padded columns)
 * and builds without the asm take the C loop, on the same table with the same arithmetic
 * (td_simd.h; about 270 instructions per group of four channels on the Cortex-M).
 *
 * Parameters: td_dwconv2d_params_t as for td_dwconv2d_s8_ref with filter_h = filter_w = 3,
 * depth_multiplier = 1, in_c % 4 == 0, requant_form = 1, filter the table above (16-byte
 * aligned: LDRD).
 */
#include "td_kernels.h"

#include "td_simd.h"

/* word offsets in a group's table */
#define TD_DWW_BIAS 0
#define TD_DWW_PAIR 4
#define TD_DWW_TAP6 20
#define TD_DWW_REQ 22
#define TD_DWW_SHIFT 30
#define TD_DWW_WORDS 31

/* the tap pairs (tap = 3 * row + column), in table order, then the single tap 6: a pairing
 * in which each asm variant can load every row's post-incremented tap last */
static const uint8_t td_dww_taps[9] = {1, 2, 0, 4, 5, 3, 7, 8, 6};

int32_t td_dwconv2d_3x3_wide_s8_dsp_scratch_size(const td_dwconv2d_params_t *p)
{
    (void)p;
    return 0;
}

/* One output of a group (j = 0..3) from the doubled accumulator acc2: the rounding form
 * (td_requant_round_form_acc on 2 * acc: SMMULR plus the rounding constant r and the sign,
 * shifted by e - 1 and 1), clamped to [lo, hi]. */
static inline int8_t td_dww_out(int32_t acc2, const int32_t *g, int32_t j, int32_t lo,
                                int32_t hi)
{
    const int32_t m = g[TD_DWW_REQ + 2 * j], r = g[TD_DWW_REQ + 2 * j + 1];
    const int32_t em1 = ((const int8_t *)&g[TD_DWW_SHIFT])[j];
    const int32_t x = (int32_t)(((int64_t)acc2 * m + ((int64_t)1 << 31)) >> 32);
    const int32_t k = (int32_t)((uint32_t)x + (uint32_t)r + (uint32_t)(acc2 >> 31));
    const int32_t v = (k >> em1) >> 1;
    return (int8_t)(v < lo ? lo : (v > hi ? hi : v));
}

/* Every group of one pixel in C, the asm's arithmetic through td_simd.h (its instructions
 * on the Cortex-M, their exact twins elsewhere): tap[k] tap k's word of channels 0..3 (the
 * zero-point word when outside the image, then step[k] = 0, else 4). */
static void td_dww_pixel_c(const int8_t *tap[9], const int32_t step[9], const int32_t *g,
                           int32_t ch, int32_t lo, int32_t hi, int8_t *dst)
{
    for (int32_t c = 0; c < ch; c += 4, g += TD_DWW_WORDS) {
        int32_t a0 = g[TD_DWW_BIAS], a1 = g[TD_DWW_BIAS + 1];
        int32_t a2 = g[TD_DWW_BIAS + 2], a3 = g[TD_DWW_BIAS + 3];
        for (int32_t i = 0; i < 4; ++i) {
            const int32_t x = td_read_s8x4(tap[td_dww_taps[2 * i]]);
            const int32_t y = td_read_s8x4(tap[td_dww_taps[2 * i + 1]]);
            const int32_t q = td_pkhbt16(x, y), r = td_pkhtb16(y, x);
            const int32_t *w = g + TD_DWW_PAIR + 4 * i;
            a0 = td_smlad(td_sxtb16(q), w[0], a0);
            a1 = td_smlad(td_sxtb16_ror8(q), w[1], a1);
            a2 = td_smlad(td_sxtb16(r), w[2], a2);
            a3 = td_smlad(td_sxtb16_ror8(r), w[3], a3);
        }
        const int32_t x6 = td_read_s8x4(tap[6]);
        const int32_t e = td_sxtb16(x6), o = td_sxtb16_ror8(x6);
        a0 = td_smlabb(e, g[TD_DWW_TAP6], a0);
        a2 = td_smlatt(e, g[TD_DWW_TAP6], a2);
        a1 = td_smlabb(o, g[TD_DWW_TAP6 + 1], a1);
        a3 = td_smlatt(o, g[TD_DWW_TAP6 + 1], a3);
        dst[c] = td_dww_out(a0, g, 0, lo, hi);
        dst[c + 1] = td_dww_out(a1, g, 1, lo, hi);
        dst[c + 2] = td_dww_out(a2, g, 2, lo, hi);
        dst[c + 3] = td_dww_out(a3, g, 3, lo, hi);
        for (int32_t t = 0; t < 9; ++t) {
            tap[t] += step[t];
        }
    }
}

#if TD_SIMD_NATIVE && defined(__OPTIMIZE__) && !defined(TD_FRAME_POINTER)
/* tap t of a pair into x, tap u into y (in the order given: a row pointer's post-increment
 * comes after its other taps) */
#define TD_DWW_X(addr) "ldr %[x], " addr "\n\t"
#define TD_DWW_Y(addr) "ldr %[y], " addr "\n\t"
#define TD_DWW_ZP "%[zpw]"

/* Taps t (x) and u (y) of the four channels, loaded by LOADS, against table words i .. i+3
 * (byte offsets from w, which has already moved past the group: negative). */
#define TD_DWW_PAIR_ASM(LOADS, i)                                                          \
    LOADS                                                                                  \
    "pkhbt %[q], %[x], %[y], lsl #16\n\t"                                                  \
    "pkhtb %[y], %[y], %[x], asr #16\n\t"                                                  \
    "ldrd %[v], %[u], [%[w], #" #i " - 124]\n\t"                                           \
    "sxtb16 %[x], %[q]\n\t"                                                                \
    "smlad %[a0], %[x], %[v], %[a0]\n\t"                                                   \
    "sxtb16 %[x], %[q], ror #8\n\t"                                                        \
    "smlad %[a1], %[x], %[u], %[a1]\n\t"                                                   \
    "ldrd %[v], %[u], [%[w], #" #i " + 8 - 124]\n\t"                                       \
    "sxtb16 %[x], %[y]\n\t"                                                                \
    "smlad %[a2], %[x], %[v], %[a2]\n\t"                                                   \
    "sxtb16 %[x], %[y], ror #8\n\t"                                                        \
    "smlad %[a3], %[x], %[u], %[a3]\n\t"

/* tap 6 (loaded into x from addr): SMLABB / SMLATT per channel */
#define TD_DWW_TAP6_ASM(addr)                                                              \
    TD_DWW_X(addr)                                                                         \
    "ldrd %[v], %[u], [%[w], #80 - 124]\n\t"                                               \
    "sxtb16 %[q], %[x]\n\t"                                                                \
    "smlabb %[a0], %[q], %[v], %[a0]\n\t"                                                  \
    "smlatt %[a2], %[q], %[v], %[a2]\n\t"                                                  \
    "sxtb16 %[q], %[x], ror #8\n\t"                                                        \
    "smlabb %[a1], %[q], %[u], %[a1]\n\t"                                                  \
    "smlatt %[a3], %[q], %[u], %[a3]\n\t"

/* the pairs {1, 2} (16), {0, 4} (32), {5, 3} (48), {7, 8} (64) and tap 6 of a pixel whose
 * columns are all inside the image (p at column 0) */
#define TD_DWW_TAPS_MID                                                                    \
    TD_DWW_PAIR_ASM(TD_DWW_X("[%[p0], %[C]]") TD_DWW_Y("[%[p0], %[C], lsl #1]"), 16)       \
    TD_DWW_PAIR_ASM(TD_DWW_X("[%[p0]], #4") TD_DWW_Y("[%[p1], %[C]]"), 32)                 \
    TD_DWW_PAIR_ASM(TD_DWW_X("[%[p1], %[C], lsl #1]") TD_DWW_Y("[%[p1]], #4"), 48)         \
    TD_DWW_PAIR_ASM(TD_DWW_X("[%[p2], %[C]]") TD_DWW_Y("[%[p2], %[C], lsl #1]"), 64)       \
    TD_DWW_TAP6_ASM("[%[p2]], #4")

/* column 0 outside (p at column 1): taps 0, 3, 6 read the zero points */
#define TD_DWW_TAPS_LEFT                                                                   \
    TD_DWW_PAIR_ASM(TD_DWW_Y("[%[p0], %[C]]") TD_DWW_X("[%[p0]], #4"), 16)                 \
    TD_DWW_PAIR_ASM(TD_DWW_X("[%[p1], %[C]]") TD_DWW_Y(TD_DWW_ZP), 48)                     \
    TD_DWW_PAIR_ASM(TD_DWW_X(TD_DWW_ZP) TD_DWW_Y("[%[p1]], #4"), 32)                       \
    TD_DWW_PAIR_ASM(TD_DWW_Y("[%[p2], %[C]]") TD_DWW_X("[%[p2]], #4"), 64)                 \
    TD_DWW_TAP6_ASM(TD_DWW_ZP)

/* column 2 outside (p at column 0): taps 2, 5, 8 read the zero points */
#define TD_DWW_TAPS_RIGHT                                                                  \
    TD_DWW_PAIR_ASM(TD_DWW_X("[%[p0], %[C]]") TD_DWW_Y(TD_DWW_ZP), 16)                     \
    TD_DWW_PAIR_ASM(TD_DWW_X("[%[p0]], #4") TD_DWW_Y("[%[p1], %[C]]"), 32)                 \
    TD_DWW_PAIR_ASM(TD_DWW_X(TD_DWW_ZP) TD_DWW_Y("[%[p1]], #4"), 48)                       \
    TD_DWW_PAIR_ASM(TD_DWW_X("[%[p2], %[C]]") TD_DWW_Y(TD_DWW_ZP), 64)                     \
    TD_DWW_TAP6_ASM("[%[p2]], #4")

/* output j of the group (accumulator a, 2 * acc) into byte j of a0: SMMLAR gives
 * SMMULR(2 acc, m) + r, plus the sign of acc, shifted by e - 1 and (in SSAT) by 1 */
#define TD_DWW_REQ_ASM(j, a)                                                               \
    "ldrd %[y], %[x], [%[w], #88 + 8 * " #j " - 124]\n\t"                                  \
    "ldrsb %[q], [%[w], #120 + " #j " - 124]\n\t"                                          \
    "smmlar %[x], %[" #a "], %[y], %[x]\n\t"                                               \
    "add %[x], %[x], %[" #a "], asr #31\n\t"                                               \
    "asr %[x], %[x], %[q]\n\t"

/* the group's four bytes clamped to [lo, hi] (SSUB8 sets GE where a0 >= lo) */
#define TD_DWW_CLAMP_ASM                                                                   \
    "ldrd %[v], %[u], %[lohi]\n\t"                                                         \
    "ssub8 %[x], %[a0], %[v]\n\t"                                                          \
    "sel %[a0], %[a0], %[v]\n\t"                                                           \
    "ssub8 %[x], %[u], %[a0]\n\t"                                                          \
    "sel %[a0], %[a0], %[u]\n\t"

/* One pixel's groups and the run's next pixels (TAPS: one of the three above; CLAMP:
 * TD_DWW_CLAMP_ASM or nothing when the activation range is all of int8): the bias, the
 * taps, the four requantizations, the clamp, the store at p0 + (dst - p0 - 4) (p0 has moved
 * past the group), the loop over the groups (until w reaches the table's end), then the next
 * pixel: the table again, the row pointers moved by (stride_w - 1) * ch (they have moved by
 * ch), doff by as much back. */
#define TD_DWW_RUN_ASM(TAPS, CLAMP)                                                        \
    "1:\n\t"                                                                               \
    "ldrd %[a0], %[a1], [%[w]], #124\n\t"                                                  \
    "ldrd %[a2], %[a3], [%[w], #8 - 124]\n\t"                                              \
    TAPS                                                                                   \
    TD_DWW_REQ_ASM(0, a0)                                                                  \
    "ssat %[a0], #8, %[x], asr #1\n\t"                                                     \
    TD_DWW_REQ_ASM(1, a1)                                                                  \
    "ssat %[x], #8, %[x], asr #1\n\t"                                                      \
    "bfi %[a0], %[x], #8, #8\n\t"                                                          \
    TD_DWW_REQ_ASM(2, a2)                                                                  \
    "ssat %[x], #8, %[x], asr #1\n\t"                                                      \
    "bfi %[a0], %[x], #16, #8\n\t"                                                         \
    TD_DWW_REQ_ASM(3, a3)                                                                  \
    "ssat %[x], #8, %[x], asr #1\n\t"                                                      \
    "bfi %[a0], %[x], #24, #8\n\t"                                                         \
    CLAMP                                                                                  \
    "ldr %[x], %[doff]\n\t"                                                                \
    "str %[a0], [%[p0], %[x]]\n\t"                                                         \
    "ldr %[x], %[wend]\n\t"                                                                \
    "cmp %[w], %[x]\n\t"                                                                   \
    "bne 1b\n\t"                                                                           \
    "ldr %[w], %[table]\n\t"                                                               \
    "ldr %[x], %[pstep]\n\t"                                                               \
    "add %[p0], %[p0], %[x]\n\t"                                                           \
    "add %[p1], %[p1], %[x]\n\t"                                                           \
    "add %[p2], %[p2], %[x]\n\t"                                                           \
    "ldr %[y], %[doff]\n\t"                                                                \
    "sub %[y], %[y], %[x]\n\t"                                                             \
    "str %[y], %[doff]\n\t"                                                                \
    "ldr %[x], %[count]\n\t"                                                               \
    "subs %[x], %[x], #1\n\t"                                                              \
    "str %[x], %[count]\n\t"                                                               \
    "bne 1b"

/* Per-call and per-run values the asm reads from the frame (no register is left). */
typedef struct {
    uint32_t lohi[2];      /* act_min, act_max in four bytes each */
    int32_t doff;          /* dst - p0 - 4 */
    int32_t count;         /* pixels left */
    int32_t pstep;         /* (stride_w - 1) * ch */
    uint32_t zpw;          /* four input zero points */
    const int32_t *table;  /* the first group's table */
    const int32_t *wend;   /* past the last group's */
} td_dww_frame_t;

#define TD_DWW_OPERANDS                                                                    \
    : [p0] "+r"(p0), [p1] "+r"(p1), [p2] "+r"(p2), [w] "+r"(w), [a0] "=&r"(a0),           \
      [a1] "=&r"(a1), [a2] "=&r"(a2), [a3] "=&r"(a3), [x] "=&r"(x), [y] "=&r"(y),         \
      [q] "=&r"(q), [v] "=&r"(v), [u] "=&r"(u), [doff] "+m"(fr->doff),                   \
      [count] "+m"(fr->count)                                                              \
    : [C] "r"(cs), [lohi] "m"(fr->lohi), [pstep] "m"(fr->pstep), [table] "m"(fr->table),  \
      [wend] "m"(fr->wend), [zpw] "m"(fr->zpw)                                             \
    : "cc", "memory"

/* The columns of a pixel the asm runs: all inside, the left one or the right one outside. */
enum { TD_DWW_MID = 0, TD_DWW_LEFT = 1, TD_DWW_RIGHT = 2, TD_DWW_OTHER = 3 };

/* n >= 1 consecutive output pixels of one kind (cols), every group: p0 the first one's
 * top-left tap inside the image, rs / cs the steps between kernel rows / columns. */
static inline __attribute__((always_inline)) void
td_dww_run_asm(const int8_t *p0, int32_t rs, int32_t cs, int8_t *dst, int32_t n,
               td_dww_frame_t *fr, int32_t cols, int clamp)
{
    const int8_t *p1 = p0 + rs, *p2 = p1 + rs;
    const int32_t *w = fr->table;
    int32_t a0, a1, a2, a3, x, y, q, v, u;
    fr->doff = (int32_t)((uintptr_t)dst - (uintptr_t)p0 - 4u);
    fr->count = n;
    if (clamp) {
        if (cols == TD_DWW_MID) {
            __asm__ volatile(TD_DWW_RUN_ASM(TD_DWW_TAPS_MID, TD_DWW_CLAMP_ASM) TD_DWW_OPERANDS);
        } else if (cols == TD_DWW_LEFT) {
            __asm__ volatile(TD_DWW_RUN_ASM(TD_DWW_TAPS_LEFT, TD_DWW_CLAMP_ASM)
                             TD_DWW_OPERANDS);
        } else {
            __asm__ volatile(TD_DWW_RUN_ASM(TD_DWW_TAPS_RIGHT, TD_DWW_CLAMP_ASM)
                             TD_DWW_OPERANDS);
        }
    } else if (cols == TD_DWW_MID) {
        __asm__ volatile(TD_DWW_RUN_ASM(TD_DWW_TAPS_MID, ) TD_DWW_OPERANDS);
    } else if (cols == TD_DWW_LEFT) {
        __asm__ volatile(TD_DWW_RUN_ASM(TD_DWW_TAPS_LEFT, ) TD_DWW_OPERANDS);
    } else {
        __asm__ volatile(TD_DWW_RUN_ASM(TD_DWW_TAPS_RIGHT, ) TD_DWW_OPERANDS);
    }
}
#define TD_DWW_HAVE_ASM 1
#else
#define TD_DWW_HAVE_ASM 0
#endif

#define TD_DWW_RUNS 8

/* The kind of output column ox (TD_DWW_MID, _LEFT, _RIGHT or _OTHER). */
static inline int32_t td_dww_cols(const td_dwconv2d_params_t *p, int32_t ox)
{
    const int32_t x = ox * p->stride_w - p->pad_w, d = p->dilation_w, n = p->in_w;
    const int in0 = x >= 0 && x < n, in1 = x + d >= 0 && x + d < n;
    const int in2 = x + 2 * d >= 0 && x + 2 * d < n;
    if (in0 && in1 && in2) {
        return 0;
    }
    if (!in0 && in1 && in2) {
        return 1;
    }
    return in0 && in1 && !in2 ? 2 : 3;
}

/* Pixels [ox0, ox1) of the output row whose top taps are on input row iy0, in C. */
static void td_dww_pixels_c(const td_dwconv2d_params_t *p, const int8_t *image, int32_t iy0,
                            int32_t ox0, int32_t ox1, int8_t *dst, const int8_t *zp)
{
    const int32_t ch = p->in_c, in_h = p->in_h, in_w = p->in_w;
    const int32_t *table = (const int32_t *)(const void *)p->filter;
    for (int32_t ox = ox0; ox < ox1; ++ox) {
        const int32_t ix0 = ox * p->stride_w - p->pad_w;
        const int8_t *tap[9];
        int32_t step[9];
        for (int32_t t = 0; t < 9; ++t) {
            const int32_t y = iy0 + (t / 3) * p->dilation_h;
            const int32_t x = ix0 + (t % 3) * p->dilation_w;
            const int inside = y >= 0 && y < in_h && x >= 0 && x < in_w;
            tap[t] = inside ? image + (y * in_w + x) * ch : zp;
            step[t] = inside ? 4 : 0;
        }
        td_dww_pixel_c(tap, step, table, ch, p->act_min, p->act_max, dst + ox * ch);
    }
}

void td_dwconv2d_3x3_wide_s8_dsp(const td_dwconv2d_params_t *p, const int8_t *in0,
                                 int8_t *out0)
{
    const int32_t ch = p->in_c, in_h = p->in_h, rs = p->in_w * ch, out_w = p->out_w;
    const uint32_t zpw = 0x01010101u * (uint8_t)(int8_t)(-p->input_offset);
#if TD_DWW_HAVE_ASM
    td_dww_frame_t fr;
    fr.lohi[0] = 0x01010101u * (uint8_t)(int8_t)p->act_min;
    fr.lohi[1] = 0x01010101u * (uint8_t)(int8_t)p->act_max;
    fr.pstep = (p->stride_w - 1) * ch;
    fr.zpw = zpw;
    fr.table = (const int32_t *)(const void *)p->filter;
    fr.wend = fr.table + (ch / 4) * TD_DWW_WORDS;
    const int32_t drs = p->dilation_h * rs, dcs = p->dilation_w * ch;
    const int clamp = !(p->act_min == INT8_MIN && p->act_max == INT8_MAX);
    /* the runs of output columns of one kind, the same in every row: the columns outside
     * the image on either side change monotonically along the row, so at most 7 runs */
    int32_t run_start[TD_DWW_RUNS + 1], run_kind[TD_DWW_RUNS], nruns = 0;
    for (int32_t ox = 0; ox < out_w; ++ox) {
        const int32_t kind = td_dww_cols(p, ox);
        if (nruns == 0 || run_kind[nruns - 1] != kind) {
            run_start[nruns] = ox;
            run_kind[nruns++] = kind;
        }
    }
    run_start[nruns] = out_w;
#endif
    int8_t *dst = out0;
    for (int32_t b = 0; b < p->batches; ++b) {
        const int8_t *image = in0 + b * in_h * rs;
        for (int32_t oy = 0; oy < p->out_h; ++oy, dst += out_w * ch) {
            const int32_t iy0 = oy * p->stride_h - p->pad_h;
#if TD_DWW_HAVE_ASM
            if (iy0 >= 0 && iy0 + 2 * p->dilation_h < in_h) {
                for (int32_t r = 0; r < nruns; ++r) {
                    const int32_t ox = run_start[r], end = run_start[r + 1];
                    if (run_kind[r] == TD_DWW_OTHER) {
                        td_dww_pixels_c(p, image, iy0, ox, end, dst, (const int8_t *)&zpw);
                    } else {
                        /* the first pixel's leftmost column inside the image */
                        const int32_t ix = ox * p->stride_w - p->pad_w
                                           + (run_kind[r] == TD_DWW_LEFT ? p->dilation_w : 0);
                        td_dww_run_asm(image + iy0 * rs + ix * ch, drs, dcs, dst + ox * ch,
                                       end - ox, &fr, run_kind[r], clamp);
                    }
                }
                continue;
            }
#endif
            td_dww_pixels_c(p, image, iy0, 0, out_w, dst, (const int8_t *)&zpw);
        }
    }
}
