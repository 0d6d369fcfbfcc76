/*
 * td_gemm_s8_dsp.c - the out-of-line pieces of td_gemm_s8_dsp.h, one copy per build:
 * the general (not proven, or clamped) requantization of one output, and the pointwise
 * layers' group product (td_pw_group) with its channel loop in assembly.
 *
 * The channel loop (td_pw_channels): for every output channel, one inline-assembly block
 * runs the depth loop over the four widened rows and the four branch-free requantizations,
 * with every loop-invariant value in a small state record read with LDM/LDRD when needed:
 * the fourteen usable registers are all taken by the depth loop (4 accumulators, 4 row words
 * loaded by one LDM, two weight words and the widening of one, the rows and filter pointers
 * and the state pointer; the channel index waits in the record meanwhile). Per pair of
 * blocks of four values: one LDRD of two weight words; per block two SXTB16 of a weight
 * word, two LDM of four row words, eight SMLAD (25 instructions for 32 multiply-accumulates);
 * two pairs per loop iteration, entered at the block that leaves a multiple of four (from a
 * table, once per call; an odd count enters through a single LDR). The depth loop ends when
 * the rows pointer reaches the state record, which sits right after the rows buffer
 * (td_pw_frame_t), so no counter is needed. Per output: LSL, SMMLAR (x + r), ADD of the
 * accumulator's sign, ASR, SSAT, STRB (td_requant_round_form_acc). The channel index counts
 * from -out_c up to 0, the per-channel arrays and the output rows are addressed from their
 * ends, so one ADDS ends the loop. The filter rows must be word-aligned whole words; other
 * layers run it one channel per call on a copy of the row.
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

/* one block of four values: the weight word w widened once (into r6, r5), four rows (two
 * LDM of two rows each) */
#define TD_PW_BLOCK(w)                                   \
    "sxtb16 r6, " w "\n\t"                               \
    "sxtb16 r5, " w ", ror #8\n\t"                       \
    "ldmia  r4!, {r0, r1, r2, r3}\n\t"                   \
    "smlad  r8, r0, r6, r8\n\t"                          \
    "smlad  r8, r1, r5, r8\n\t"                          \
    "smlad  r9, r2, r6, r9\n\t"                          \
    "smlad  r9, r3, r5, r9\n\t"                          \
    "ldmia  r4!, {r0, r1, r2, r3}\n\t"                   \
    "smlad  r10, r0, r6, r10\n\t"                        \
    "smlad  r10, r1, r5, r10\n\t"                        \
    "smlad  r11, r2, r6, r11\n\t"                        \
    "smlad  r11, r3, r5, r11\n\t"

/* one output: accumulator a, output row pointer d (m = r0, e = r1, r = r2, o = lr) */
#define TD_PW_OUT(a, d)                                  \
    "lsl    r3, " a ", #1\n\t"                           \
    "smmlar r3, r3, r0, r2\n\t"                          \
    "add    r3, r3, " a ", asr #31\n\t"                  \
    "asr    r3, r3, r1\n\t"                              \
    "ssat   r3, #8, r3\n\t"                              \
    "strb   r3, [" d ", lr]\n\t"

static __attribute__((noinline)) void td_pw_channels(td_pw_state_t *s)
{
    register td_pw_state_t *st __asm__("r12") = s;
    __asm__ volatile(
        /* once: the entry block's address, the filter, the first channel's bias */
        "ldr    r0, [r12, #36]\n\t"
        "adr.w  r1, .Lpw_tab%=\n\t"
        "ldr    r1, [r1, r0, lsl #2]\n\t"
        "str    r1, [r12, #48]\n\t"
        "ldr    r7, [r12, #40]\n\t"
        "ldr    lr, [r12, #44]\n\t"
        "ldrd   r4, r5, [r12, #16]\n\t"
        "ldr    r8, [r5, lr, lsl #2]\n\t"
        ".Lpw_chan%=:\n\t"
        "str    lr, [r12, #52]\n\t"      /* the channel index; lr holds weights below */
        "mov    r9, r8\n\t"
        "mov    r10, r8\n\t"
        "mov    r11, r8\n\t"
        "ldr    pc, [r12, #48]\n\t"
        ".Lpw_e1%=:\n\t"                 /* odd entries: the second word of a pair alone */
        "ldr    lr, [r7], #4\n\t"
        "b      .Lpw_b1%=\n\t"
        ".Lpw_e3%=:\n\t"
        "ldr    lr, [r7], #4\n\t"
        "b      .Lpw_b3%=\n\t"
        ".Lpw_loop%=:\n\t"               /* two pairs of blocks, one LDRD of weights each */
        "ldrd   r5, lr, [r7], #8\n\t"
        TD_PW_BLOCK("r5")
        ".Lpw_b1%=:\n\t"
        TD_PW_BLOCK("lr")
        ".Lpw_b2%=:\n\t"
        "ldrd   r5, lr, [r7], #8\n\t"
        TD_PW_BLOCK("r5")
        ".Lpw_b3%=:\n\t"
        TD_PW_BLOCK("lr")
        "cmp    r4, r12\n\t"
        "bne    .Lpw_loop%=\n\t"
        "ldr    lr, [r12, #52]\n\t"
        "ldrd   r0, r1, [r12, #24]\n\t"
        "ldr    r0, [r0, lr, lsl #2]\n\t"
        "ldrsb  r1, [r1, lr]\n\t"
        "ldr    r2, [r12, #32]\n\t"
        "rsb    r1, r1, #0\n\t"
        "lsl    r2, r2, r1\n\t"
        "asr    r2, r2, #1\n\t"
        "ldmia  r12, {r4, r5, r6}\n\t"
        TD_PW_OUT("r8", "r4")
        "ldr    r4, [r12, #12]\n\t"
        TD_PW_OUT("r9", "r5")
        TD_PW_OUT("r10", "r6")
        TD_PW_OUT("r11", "r4")
        "adds   lr, lr, #1\n\t"
        "beq    .Lpw_out%=\n\t"
        "ldrd   r4, r5, [r12, #16]\n\t"  /* the next channel's rows and bias */
        "ldr    r8, [r5, lr, lsl #2]\n\t"
        "b      .Lpw_chan%=\n\t"
        /* word aligned, which also makes the section so: ADR's Align(PC, 4) base is then the
         * one the assembler computed (at -Os the function may otherwise sit off a word) */
        ".p2align 2\n\t"
        ".Lpw_tab%=:\n\t"                /* entry by (-blocks) & 3, Thumb addresses */
        ".word  .Lpw_loop%= + 1, .Lpw_e1%= + 1, .Lpw_b2%= + 1, .Lpw_e3%= + 1\n\t"
        ".Lpw_out%=:\n\t"
        : "+r"(st)
        :
        : "r0", "r1", "r2", "r3", "r4", "r5", "r6", "r7", "r8", "r9", "r10", "r11", "lr",
          "cc", "memory");
}

#undef TD_PW_BLOCK
#undef TD_PW_OUT

#else /* the same loop in C (the host, and builds without optimisation) */

static __attribute__((noinline)) void td_pw_channels(td_pw_state_t *s)
{
    const td_pw_frame_t *f =
        (const td_pw_frame_t *)(const void *)((char *)s - offsetof(td_pw_frame_t, st));
    const td_word_t *end = f->rows + TD_GEMM_STACK_BYTES / 4;
    const int8_t *w = s->filter;
    for (int32_t o = s->neg_out_c; o < 0; ++o) {
        const int32_t b = s->bias[o];
        int32_t a[TD_GEMM_ROWS] = {b, b, b, b};
        for (const td_word_t *x = s->rows; x != end; x += 2 * TD_GEMM_ROWS) {
            const int32_t wv = td_read_s8x4(w);
            const int32_t we = td_sxtb16(wv), wo = td_sxtb16_ror8(wv);
            w += 4;
            for (int32_t j = 0; j < TD_GEMM_ROWS; ++j) {
                a[j] = td_smlad(x[2 * j + 1], wo, td_smlad(x[2 * j], we, a[j]));
            }
        }
        const int32_t m = s->mult[o], e = -s->shift[o];
        const int32_t r = td_requant_rnd(s->zp2p1, e);
        for (int32_t j = 0; j < TD_GEMM_ROWS; ++j) {
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
    const td_word_t *buf = td_pw_rows(f, k);
    int8_t *d[TD_GEMM_ROWS];
    for (int32_t j = 0; j < TD_GEMM_ROWS; ++j) {
        d[j] = dst + (j < n ? j : n - 1) * oc;
    }
    /* The assembly loop over every channel at once when the filter rows are whole words,
     * word-aligned, and there is a bias; else one channel per call, its row copied into a
     * word-aligned buffer (the partial last word padded with 0; the rows buffer's words
     * before the rows in use, if the copy fits there) and a one-element zero bias when there
     * is none. The C product takes the general requantization and copies that do not fit. */
    const int32_t whole = (k & 3) == 0 && ((uintptr_t)p->filter & 3) == 0 && p->bias != 0;
    if (!td_fast_requant(p->requant_form, p->act_min, p->act_max)
        || (!whole && (2 * TD_GEMM_ROWS + 1) * blocks > TD_GEMM_STACK_BYTES / 4)) {
        td_rows_times_filter_body(buf, p->filter, k, oc, p->bias, p->mult, p->shift,
                                  p->output_offset, p->act_min, p->act_max, d,
                                  p->requant_form, 0);
        return;
    }
    f->st.rows = buf;
    f->st.zp2p1 = 2 * p->output_offset + 1;
    f->st.entry = -blocks & 3;
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
        td_pw_channels(&f->st);
    }
}

void td_pw_group(const td_conv2d_params_t *p, const int8_t *const rows[TD_GEMM_ROWS],
                 int32_t n, int8_t *dst)
{
    td_pw_frame_t f;
    td_extend_rows(rows, n, p->in_c, p->input_offset, td_pw_rows(&f, p->in_c));
    td_pw_product(p, p->in_c, &f, n, dst);
}
