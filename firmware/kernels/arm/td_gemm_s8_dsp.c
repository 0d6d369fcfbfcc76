/*
 * td_gemm_s8_dsp.c - the out-of-line pieces of td_gemm_s8_dsp.h, one copy per build:
 * the general (not proven, or clamped) requantization of one output, and the pointwise
 * layers' group product (td_pw_group) with its channel loop in assembly.
 *
 * The channel loop (td_pw_channels): for every output channel, one inline-assembly block
 * runs the depth loop over the four widened rows and the four branch-free requantizations,
 * with every loop-invariant value in a small state record read with LDM/LDRD when needed:
 * the fourteen usable registers are all taken by the depth loop (4 accumulators, 4 row words
 * loaded by one LDM, the weight word and its two widenings, 3 pointers and the channel index).
 * Per block of four values: one LDR and two SXTB16 of the weights, two LDM of four row words,
 * eight SMLAD (13 instructions for 16 multiply-accumulates); four blocks per loop iteration,
 * entered at the block that leaves a multiple of four (an address computed once per call).
 * The depth loop ends when the rows pointer reaches the state record, which sits right after
 * the rows buffer (td_pw_frame_t), so no counter is needed. Per output: LSL, SMMLAR
 * (x + r), ADD of the accumulator's sign, ASR, SSAT, STRB (td_requant_round_form_acc).
 * The channel index counts from -out_c up to 0, the per-channel arrays and the output rows
 * are addressed from their ends, so one ADDS ends the loop.
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

/* What td_pw_channels reads; the offsets are the assembly's. Pointers marked "end" point
 * past their last element (indexed by o in [-out_c, -1]). */
typedef struct {
    int8_t *d[TD_GEMM_ROWS];   /* [0..12]  end of each output row's out_c bytes */
    const td_word_t *rows;     /* [16]     first word of the rows buffer in use */
    const int32_t *bias;       /* [20]     end of bias[out_c] */
    const int32_t *mult;       /* [24]     end of mult[out_c] */
    const int8_t *shift;       /* [28]     end of shift[out_c] */
    int32_t zp2p1;             /* [32]     2 * output_offset + 1 */
    int32_t entry;             /* [36]     the block of four to start at: (-blocks) & 3 */
    const int8_t *filter;      /* [40]     out_c filter rows of 4 * blocks bytes each */
    int32_t neg_out_c;         /* [44]     -out_c */
    uint32_t entry_pc;         /* [48]     the entry block's address (set by the loop) */
} td_pw_state_t;

/* The rows buffer and, right after it, the state: the end of the rows is the state's
 * address (the depth loop's sentinel). The rows in use are the last td_rows_bytes(4, k). */
typedef struct {
    td_word_t rows[TD_GEMM_STACK_BYTES / 4];
    td_pw_state_t st;
} td_pw_frame_t;

#if TD_SIMD_NATIVE && defined(__OPTIMIZE__)

/* one block of four values: weights widened once, four rows (two LDM of two rows each) */
#define TD_PW_BLOCK                                      \
    "ldr    r5, [r7], #4\n\t"                            \
    "sxtb16 r6, r5\n\t"                                  \
    "sxtb16 r5, r5, ror #8\n\t"                          \
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
        /* the entry block's address, once: 48 bytes per block (checked below) */
        "ldr    r0, [r12, #36]\n\t"
        "adr.w  r1, .Lpw_loop%=\n\t"
        "add    r0, r0, r0, lsl #1\n\t"
        "add    r1, r1, r0, lsl #4\n\t"
        "orr    r1, r1, #1\n\t"
        "str    r1, [r12, #48]\n\t"
        "ldr    r7, [r12, #40]\n\t"
        "ldr    lr, [r12, #44]\n\t"
        ".Lpw_chan%=:\n\t"
        "ldrd   r4, r5, [r12, #16]\n\t"
        "ldr    r8, [r5, lr, lsl #2]\n\t"
        "mov    r9, r8\n\t"
        "mov    r10, r8\n\t"
        "mov    r11, r8\n\t"
        "ldr    pc, [r12, #48]\n\t"
        /* the computed entry is .Lpw_loop + 48 * entry: the label must be word aligned for
         * ADR's Align(PC, 4) base whatever the code before it (-Os places it off a word) */
        ".p2align 2\n\t"
        ".Lpw_loop%=:\n\t"
        TD_PW_BLOCK
        ".Lpw_b1%=:\n\t"
        TD_PW_BLOCK
        TD_PW_BLOCK
        TD_PW_BLOCK
        ".Lpw_end%=:\n\t"
        ".if (.Lpw_b1%= - .Lpw_loop%=) != 48 || (.Lpw_end%= - .Lpw_loop%=) != 192\n\t"
        ".error \"td_pw_channels: a block must be 48 bytes\"\n\t"
        ".endif\n\t"
        "cmp    r4, r12\n\t"
        "bne    .Lpw_loop%=\n\t"
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
        "bne    .Lpw_chan%=\n\t"
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

void td_pw_group(const td_conv2d_params_t *p, const int8_t *const rows[TD_GEMM_ROWS],
                 int32_t n, int8_t *dst)
{
    static const int32_t zero_bias = 0;
    const int32_t k = p->in_c, oc = p->out_c;
    const int32_t blocks = td_blocks(k);
    td_pw_frame_t f;
    td_word_t *buf = f.rows + TD_GEMM_STACK_BYTES / 4 - 2 * TD_GEMM_ROWS * blocks;
    int8_t *d[TD_GEMM_ROWS];
    for (int32_t j = 0; j < TD_GEMM_ROWS; ++j) {
        d[j] = dst + (j < n ? j : n - 1) * oc;
    }
    td_extend_rows(rows, n, k, p->input_offset, buf);
    /* Under the branch-free requantization, the assembly loop: over every channel at once,
     * or one channel per call when the filter rows are not a whole number of words apart
     * (the loop reads the next rows' first bytes, times zero lanes) or there is no bias (a
     * one-element zero bias). The C product takes the rest: the last channels of a depth
     * with a partial block (whose reads would pass the filter's end) and every channel
     * under the general requantization. */
    int32_t o = 0;
    if (td_fast_requant(p->requant_form, p->act_min, p->act_max)) {
        const int32_t whole = (k & 3) == 0 && p->bias != 0;
        const int32_t step = whole ? oc : 1;
        /* the channels whose 4 * blocks bytes of filter lie inside the filter */
        const int32_t last = oc * k >= 4 * blocks ? (oc * k - 4 * blocks) / k + 1 : 0;
        f.st.rows = buf;
        f.st.zp2p1 = 2 * p->output_offset + 1;
        f.st.entry = -blocks & 3;
        f.st.neg_out_c = -step;
        for (; o < last; o += step) {
            for (int32_t j = 0; j < TD_GEMM_ROWS; ++j) {
                f.st.d[j] = d[j] + o + step;
            }
            f.st.bias = p->bias != 0 ? p->bias + o + step : &zero_bias + 1;
            f.st.mult = p->mult + o + step;
            f.st.shift = p->shift + o + step;
            f.st.filter = p->filter + o * k;
            td_pw_channels(&f.st);
        }
    }
    if (o < oc) {
        for (int32_t j = 0; j < TD_GEMM_ROWS; ++j) {
            d[j] += o;
        }
        td_rows_times_filter_body(buf, p->filter + o * k, k, oc - o,
                                  p->bias != 0 ? p->bias + o : 0, p->mult + o, p->shift + o,
                                  p->output_offset, p->act_min, p->act_max, d,
                                  p->requant_form, 0);
    }
}
