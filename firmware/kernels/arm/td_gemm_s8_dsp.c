/*
 * td_gemm_s8_dsp.c - the out-of-line pieces of td_gemm_s8_dsp.h, one copy per build:
 * the general (not proven, or clamped) requantization of one output, and the pointwise
 * layers' group product (td_pw_product) with its channel loop in assembly.
 *
 * The channel loop (td_pw_channels): for every output channel, one inline-assembly block
 * runs the depth loop over the six widened rows and the six branch-free requantizations,
 * with every loop-invariant value in a small state record read when needed: the fourteen
 * usable registers are all taken by the depth loop (6 accumulators, 4 row words loaded by
 * one LDM, a weight word and its widening, the rows and filter pointers; the channel index
 * waits in the record meanwhile). Per block of four values: one LDR of a weight word, two
 * SXTB16, three LDM of four row words, twelve SMLAD (18 instructions for 24
 * multiply-accumulates). No register is left for a loop bound, so the depth loop is
 * unrolled to the deepest rows buffer (TD_GEMM_STACK_DEPTH / 4 = 16 blocks) and entered at
 * the block that leaves `blocks` (from a table, once per call); it ends where the rows end,
 * at the state record (td_pw_frame_t), whose address the rows pointer then holds. Per
 * output: LSL, SMMLAR (x + r), ADD of the accumulator's sign, ASR, SSAT, STRB
 * (td_requant_round_form_acc). The channel index counts from -out_c up to 0, the
 * per-channel arrays and the output rows are addressed from their ends, so one ADDS ends
 * the loop. The filter rows must be word-aligned whole words; other layers run it one
 * channel per call on a copy of the row.
 *
 * A partial group (fewer than six pixels: the last of a layer, and every group of a
 * streamed step whose output row is five pixels wide) runs the same loop over five rows
 * (td_pw_rows_for): five accumulators leave r11 for a fifth row word, so a block is one LDR,
 * two SXTB16, two LDM of five row words and ten SMLAD (15 instructions for 20
 * multiply-accumulates), and five outputs per channel: 5/6 of a full group's work, where a
 * group of five computed six rows before (the sixth a repeat).
 */
#include "td_gemm_s8_dsp.h"

#include <stddef.h>

int8_t td_gemm_out_general(int32_t acc, int32_t m, int32_t shift, int32_t out_off, int32_t lo,
                           int32_t hi, int32_t round_form)
{
    const int32_t es = round_form ? -shift : shift;
    const int32_t r = round_form ? td_requant_rnd(2 * out_off + 1, es) : 0;
    return td_gemm_clamp(td_gemm_value(acc, m, es, r, out_off, round_form), lo, hi, 0);
}

#if TD_SIMD_NATIVE && defined(__OPTIMIZE__)

/* One block of four values: the weight word widened (into r4, lr), six rows (three LDM of
 * two rows each). */
#define TD_PW_BLOCK6                                     \
    "ldr    lr, [r12], #4\n\t"                           \
    "sxtb16 r4, lr\n\t"                                  \
    "sxtb16 lr, lr, ror #8\n\t"                          \
    "ldmia  r5!, {r0, r1, r2, r3}\n\t"                   \
    "smlad  r6, r0, r4, r6\n\t"                          \
    "smlad  r6, r1, lr, r6\n\t"                          \
    "smlad  r7, r2, r4, r7\n\t"                          \
    "smlad  r7, r3, lr, r7\n\t"                          \
    "ldmia  r5!, {r0, r1, r2, r3}\n\t"                   \
    "smlad  r8, r0, r4, r8\n\t"                          \
    "smlad  r8, r1, lr, r8\n\t"                          \
    "smlad  r9, r2, r4, r9\n\t"                          \
    "smlad  r9, r3, lr, r9\n\t"                          \
    "ldmia  r5!, {r0, r1, r2, r3}\n\t"                   \
    "smlad  r10, r0, r4, r10\n\t"                        \
    "smlad  r10, r1, lr, r10\n\t"                        \
    "smlad  r11, r2, r4, r11\n\t"                        \
    "smlad  r11, r3, lr, r11\n\t"

/* ... five rows: one accumulator less frees r11 for a fifth row word, so two LDM of five
 * words (the ten words of five rows) */
#define TD_PW_BLOCK5                                     \
    "ldr    lr, [r12], #4\n\t"                           \
    "sxtb16 r4, lr\n\t"                                  \
    "sxtb16 lr, lr, ror #8\n\t"                          \
    "ldmia  r5!, {r0, r1, r2, r3, r11}\n\t"              \
    "smlad  r6, r0, r4, r6\n\t"                          \
    "smlad  r6, r1, lr, r6\n\t"                          \
    "smlad  r7, r2, r4, r7\n\t"                          \
    "smlad  r7, r3, lr, r7\n\t"                          \
    "smlad  r8, r11, r4, r8\n\t"                         \
    "ldmia  r5!, {r0, r1, r2, r3, r11}\n\t"              \
    "smlad  r8, r0, lr, r8\n\t"                          \
    "smlad  r9, r1, r4, r9\n\t"                          \
    "smlad  r9, r2, lr, r9\n\t"                          \
    "smlad  r10, r3, r4, r10\n\t"                        \
    "smlad  r10, r11, lr, r10\n\t"

/* one output: accumulator a, output row j's end pointer loaded into r4 (m = r0, e = r1,
 * r = r2, o = lr, state = r5) */
#define TD_PW_OUT(a, j)                                  \
    "ldr    r4, [r5, #" #j "]\n\t"                        \
    "lsl    r3, " a ", #1\n\t"                           \
    "smmlar r3, r3, r0, r2\n\t"                          \
    "add    r3, r3, " a ", asr #31\n\t"                  \
    "asr    r3, r3, r1\n\t"                              \
    "ssat   r3, #8, r3\n\t"                              \
    "strb   r3, [r4, lr]\n\t"

/* the entry block of each depth: 16 - blocks, Thumb addresses */
#define TD_PW_ENTRIES(l)                                                           \
    ".word " l "0%= + 1, " l "1%= + 1, " l "2%= + 1, " l "3%= + 1\n\t"

/* The channel loop over the rows whose accumulators `init` copies from r6 (the bias), whose
 * block is `block` and whose outputs `outs` writes (the labels are numbered per asm
 * statement by %=, so the two loops below share them). */
#define TD_PW_LOOP(init, block, outs)                                              \
    /* once: the entry block's address, the filter, the first channel index */    \
    "ldr    r0, [r5, #44]\n\t"                                                     \
    "adr.w  r1, .Lpw_tab%=\n\t"                                                    \
    "ldr    r1, [r1, r0, lsl #2]\n\t"                                              \
    "str    r1, [r5, #56]\n\t"                                                     \
    "ldr    r12, [r5, #48]\n\t"                                                    \
    "ldr    lr, [r5, #52]\n\t"                                                     \
    ".Lpw_chan%=:\n\t"                                                             \
    "str    lr, [r5, #60]\n\t"   /* the channel index; lr holds weights below */   \
    "ldr    r0, [r5, #28]\n\t"                                                     \
    "ldr    r6, [r0, lr, lsl #2]\n\t"                                              \
    init                                                                           \
    "ldr    r0, [r5, #56]\n\t"                                                     \
    "ldr    r5, [r5, #24]\n\t"                                                     \
    "bx     r0\n\t"                                                                \
    ".Lpw_a0%=:\n\t" block ".Lpw_a1%=:\n\t" block                                  \
    ".Lpw_a2%=:\n\t" block ".Lpw_a3%=:\n\t" block                                  \
    ".Lpw_b0%=:\n\t" block ".Lpw_b1%=:\n\t" block                                  \
    ".Lpw_b2%=:\n\t" block ".Lpw_b3%=:\n\t" block                                  \
    ".Lpw_c0%=:\n\t" block ".Lpw_c1%=:\n\t" block                                  \
    ".Lpw_c2%=:\n\t" block ".Lpw_c3%=:\n\t" block                                  \
    ".Lpw_d0%=:\n\t" block ".Lpw_d1%=:\n\t" block                                  \
    ".Lpw_d2%=:\n\t" block ".Lpw_d3%=:\n\t" block                                  \
    /* r5: the end of the rows, the state */                                       \
    "ldr    lr, [r5, #60]\n\t"                                                     \
    "ldrd   r0, r1, [r5, #32]\n\t"                                                 \
    "ldr    r0, [r0, lr, lsl #2]\n\t"                                              \
    "ldrsb  r1, [r1, lr]\n\t"                                                      \
    "ldr    r2, [r5, #40]\n\t"                                                     \
    "rsb    r1, r1, #0\n\t"                                                        \
    "lsl    r2, r2, r1\n\t"                                                        \
    "asr    r2, r2, #1\n\t"                                                        \
    outs                                                                           \
    "adds   lr, lr, #1\n\t"                                                        \
    "bne    .Lpw_chan%=\n\t"                                                       \
    "b      .Lpw_out%=\n\t"                                                        \
    /* word aligned, which also makes the section so: ADR's Align(PC, 4) base is   \
     * then the one the assembler computed (at -Os the function may otherwise sit  \
     * off a word) */                                                              \
    ".p2align 2\n\t"                                                               \
    ".Lpw_tab%=:\n\t"                                                              \
    TD_PW_ENTRIES(".Lpw_a") TD_PW_ENTRIES(".Lpw_b") TD_PW_ENTRIES(".Lpw_c")        \
    TD_PW_ENTRIES(".Lpw_d")                                                        \
    ".Lpw_out%=:\n\t"

#define TD_PW_CLOBBERS                                                                    \
    "r0", "r1", "r2", "r3", "r4", "r6", "r7", "r8", "r9", "r10", "r11", "r12", "lr", "cc", \
        "memory"

/* The channel loop function `name` (its state pointer in r5, as TD_PW_LOOP expects). */
#define TD_PW_CHANNELS(name, init, block, outs)                                    \
    static __attribute__((noinline)) void name(td_pw_state_t *s)                  \
    {                                                                              \
        register td_pw_state_t *st __asm__("r5") = s;                              \
        __asm__ volatile(TD_PW_LOOP(init, block, outs)                             \
                         : "+r"(st)                                                \
                         :                                                         \
                         : TD_PW_CLOBBERS);                                        \
    }

TD_PW_CHANNELS(td_pw_channels6,
               "mov    r7, r6\n\t"
               "mov    r8, r6\n\t"
               "mov    r9, r6\n\t"
               "mov    r10, r6\n\t"
               "mov    r11, r6\n\t",
               TD_PW_BLOCK6,
               TD_PW_OUT("r6", 0) TD_PW_OUT("r7", 4) TD_PW_OUT("r8", 8)
               TD_PW_OUT("r9", 12) TD_PW_OUT("r10", 16) TD_PW_OUT("r11", 20))

TD_PW_CHANNELS(td_pw_channels5,
               "mov    r7, r6\n\t"
               "mov    r8, r6\n\t"
               "mov    r9, r6\n\t"
               "mov    r10, r6\n\t",
               TD_PW_BLOCK5,
               TD_PW_OUT("r6", 0) TD_PW_OUT("r7", 4) TD_PW_OUT("r8", 8)
               TD_PW_OUT("r9", 12) TD_PW_OUT("r10", 16))

/* the channel loop of `rows` (TD_GEMM_ROWS or TD_PW_SHORT_ROWS) rows */
static void td_pw_channels(td_pw_state_t *s, int32_t rows)
{
    if (!TD_PW_SHORT_GROUPS || rows == TD_GEMM_ROWS) {
        td_pw_channels6(s);
    } else {
        td_pw_channels5(s);
    }
}

#undef TD_PW_BLOCK6
#undef TD_PW_BLOCK5
#undef TD_PW_OUT
#undef TD_PW_ENTRIES
#undef TD_PW_LOOP
#undef TD_PW_CLOBBERS
#undef TD_PW_CHANNELS

#else /* the same loops in C (the host, and builds without optimisation) */

static __attribute__((noinline)) void td_pw_channels(td_pw_state_t *s, int32_t rows)
{
    const td_pw_frame_t *f =
        (const td_pw_frame_t *)(const void *)((char *)s - offsetof(td_pw_frame_t, st));
    const td_word_t *end = f->rows + TD_GEMM_STACK_BYTES / 4;
    const int8_t *w = s->filter;
    for (int32_t o = s->neg_out_c; o < 0; ++o) {
        const int32_t b = s->bias[o];
        int32_t a[TD_GEMM_ROWS];
        for (int32_t j = 0; j < rows; ++j) {
            a[j] = b;
        }
        for (const td_word_t *x = s->rows; x != end; x += 2 * rows) {
            const int32_t wv = td_read_s8x4(w);
            const int32_t we = td_sxtb16(wv), wo = td_sxtb16_ror8(wv);
            w += 4;
            for (int32_t j = 0; j < rows; ++j) {
                a[j] = td_smlad(x[2 * j + 1], wo, td_smlad(x[2 * j], we, a[j]));
            }
        }
        const int32_t m = s->mult[o], e = -s->shift[o];
        const int32_t r = td_requant_rnd(s->zp2p1, e);
        for (int32_t j = 0; j < rows; ++j) {
            s->d[j][o] = (int8_t)td_ssat8(td_requant_round_form_acc(a[j], m, e, r));
        }
    }
}

#endif

void td_pw_product(const td_conv2d_params_t *p, int32_t k, td_pw_frame_t *f, int32_t n,
                   int8_t *dst)
{
    static const int32_t zero_bias = 0;
    const int32_t oc = p->out_c;
    const int32_t blocks = td_blocks(k), full = k >> 2;
    const int32_t rows = td_pw_rows_for(p, n);
    const td_word_t *buf = td_pw_rows(f, k, rows);
    int8_t *d[TD_GEMM_ROWS];
    for (int32_t j = 0; j < TD_GEMM_ROWS; ++j) {
        d[j] = dst + (j < n ? j : n - 1) * oc;
    }
    /* The assembly loop over every channel at once when the filter rows are whole words,
     * word-aligned, and there is a bias; else one channel per call, its row copied into a
     * word-aligned buffer (the partial last word padded with 0; the rows buffer's words
     * before the rows in use, if the copy fits there) and a one-element zero bias when there
     * is none. The C product takes the general requantization and copies that do not fit
     * (six rows only: td_pw_rows_for gives five rows only under the fast requantization, and
     * a copy always fits before five rows of at most TD_GEMM_STACK_DEPTH values). */
    const int32_t whole = (k & 3) == 0 && ((uintptr_t)p->filter & 3) == 0 && p->bias != 0;
    if (TD_PW_GENERAL && (!td_fast_requant(p->requant_form, p->act_min, p->act_max)
                          || (!whole && (2 * rows + 1) * blocks > TD_GEMM_STACK_BYTES / 4))) {
        td_rows_times_filter_body(buf, p->filter, k, oc, p->bias, p->mult, p->shift,
                                  p->output_offset, p->act_min, p->act_max, d,
                                  p->requant_form, 0, TD_GEMM_ROWS);
        return;
    }
    f->st.rows = buf;
    f->st.zp2p1 = 2 * p->output_offset + 1;
    f->st.entry = TD_GEMM_STACK_DEPTH / 4 - blocks;
    const int32_t step = whole ? oc : 1;
    td_word_t *const wrow = f->rows;
    f->st.neg_out_c = -step;
    for (int32_t o = 0; o < oc; o += step) {
        for (int32_t j = 0; j < TD_GEMM_ROWS; ++j) {
            f->st.d[j] = d[j] + o + step;
        }
        f->st.bias = p->bias != 0 ? p->bias + o + step : &zero_bias + 1;
        f->st.mult = p->mult + o + step;
        f->st.shift = p->shift + o + step;
        f->st.filter = p->filter;
        if (!whole) {
            const int8_t *row = p->filter + o * k;
            for (int32_t i = 0; i < full; ++i) {
                wrow[i] = td_read_s8x4(row + 4 * i);
            }
            if (k & 3) {
                wrow[full] = td_read_partial_s8(row + 4 * full, k & 3);
            }
            f->st.filter = (const int8_t *)wrow;
        }
        td_pw_channels(&f->st, rows);
    }
}

void td_pw_group(const td_conv2d_params_t *p, const int8_t *const rows[TD_GEMM_ROWS],
                 int32_t n, int8_t *dst)
{
    td_pw_frame_t f;
    const int32_t k = p->in_c;
    if (td_pw_rows_for(p, n) == TD_GEMM_ROWS) {
        td_extend_rows(rows, n, k, p->input_offset, td_pw_rows(&f, k, TD_GEMM_ROWS),
                       TD_GEMM_ROWS);
    } else {
        td_extend_rows(rows, n, k, p->input_offset, td_pw_rows(&f, k, TD_PW_SHORT_ROWS),
                       TD_PW_SHORT_ROWS);
    }
    td_pw_product(p, k, &f, n, dst);
}
