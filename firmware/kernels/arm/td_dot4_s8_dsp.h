/*
 * td_dot4_s8_dsp.h - four int8 dot products against one int8 run, with the DSP extension
 * (static inline, private to td_fully_connected_s8_dsp.c and td_dwconv2d_c1_s8_dsp.c).
 *
 * Per block of four values: one LDR of the run, widened with the offset by SXTAB16 /
 * SXTAB16 ROR #8 into the int16 lanes (v0, v2) and (v1, v3), once for the four rows; per row
 * one LDR of its four int8 values, widened by SXTB16 / SXTB16 ROR #8, and two SMLAD. The rows
 * are interleaved per block ([blocks][4 rows][4 values]), so they are read front to back:
 * 23 instructions per 16 multiply-accumulates.
 */
#ifndef TD_DOT4_S8_DSP_H
#define TD_DOT4_S8_DSP_H

#include "td_simd.h"

/* The asm takes 12 registers; a Cortex-M build that keeps a frame pointer in r7
 * (-fno-omit-frame-pointer, which none of tinydeploy's builds uses) defines TD_FRAME_POINTER
 * and gets the C below. */
#if TD_SIMD_NATIVE && defined(__OPTIMIZE__) && !defined(TD_FRAME_POINTER)
/* One block in asm, for an asm statement with the operands a0..a3 (accumulators), x (the
 * run), w (the rows), k (the offset in both lanes) and the temporaries xe, xo, v, t. */
#define TD_DOT4_S8_BLOCK                                                                      \
    "ldr %[v], [%[x]], #4\n\t"                                                             \
    "sxtab16 %[xe], %[k], %[v]\n\t"                                                        \
    "sxtab16 %[xo], %[k], %[v], ror #8\n\t"                                                \
    "ldr %[v], [%[w]], #4\n\t"                                                             \
    "sxtb16 %[t], %[v]\n\t"                                                                \
    "smlad %[a0], %[xe], %[t], %[a0]\n\t"                                                  \
    "sxtb16 %[v], %[v], ror #8\n\t"                                                        \
    "smlad %[a0], %[xo], %[v], %[a0]\n\t"                                                  \
    "ldr %[v], [%[w]], #4\n\t"                                                             \
    "sxtb16 %[t], %[v]\n\t"                                                                \
    "smlad %[a1], %[xe], %[t], %[a1]\n\t"                                                  \
    "sxtb16 %[v], %[v], ror #8\n\t"                                                        \
    "smlad %[a1], %[xo], %[v], %[a1]\n\t"                                                  \
    "ldr %[v], [%[w]], #4\n\t"                                                             \
    "sxtb16 %[t], %[v]\n\t"                                                                \
    "smlad %[a2], %[xe], %[t], %[a2]\n\t"                                                  \
    "sxtb16 %[v], %[v], ror #8\n\t"                                                        \
    "smlad %[a2], %[xo], %[v], %[a2]\n\t"                                                  \
    "ldr %[v], [%[w]], #4\n\t"                                                             \
    "sxtb16 %[t], %[v]\n\t"                                                                \
    "smlad %[a3], %[xe], %[t], %[a3]\n\t"                                                  \
    "sxtb16 %[v], %[v], ror #8\n\t"                                                        \
    "smlad %[a3], %[xo], %[v], %[a3]\n\t"

/* a[0..3] += the four rows' dot products with `runs` runs of nb bytes (nb a multiple of 4,
 * >= 4) plus the offset: run r at x + r * stride (runs >= 1); *wp: the rows' blocks of all
 * the runs, front to back, advanced past them. One asm loop in 12 registers (the compiler's
 * own allocation spills), its per-run bookkeeping in memory operands. */
static inline __attribute__((always_inline)) void
td_dot4_runs(const int8_t *x, const int8_t **wp, int32_t runs, int32_t nb, int32_t stride,
             int32_t off2, int32_t a[4])
{
    const int32_t skip = stride - nb;
    const int8_t *const last = x + runs * stride;
    const int8_t *end, *w = *wp;
    int32_t a0 = a[0], a1 = a[1], a2 = a[2], a3 = a[3];
    int32_t xe, xo, v, t;
    __asm__ volatile(
        "2:\n\t"
        "ldr %[t], %[nb]\n\t"
        "add %[end], %[x], %[t]\n\t"
        "1:\n\t"
        TD_DOT4_S8_BLOCK
        "cmp %[x], %[end]\n\t"
        "bne 1b\n\t"
        "ldr %[t], %[skip]\n\t"
        "add %[x], %[x], %[t]\n\t"
        "ldr %[t], %[last]\n\t"
        "cmp %[x], %[t]\n\t"
        "bne 2b"
        : [a0] "+r"(a0), [a1] "+r"(a1), [a2] "+r"(a2), [a3] "+r"(a3), [x] "+r"(x),
          [w] "+r"(w), [xe] "=&r"(xe), [xo] "=&r"(xo), [v] "=&r"(v), [t] "=&r"(t),
          [end] "=&r"(end)
        : [k] "r"(off2), [nb] "m"(nb), [skip] "m"(skip), [last] "m"(last)
        : "cc", "memory");
    *wp = w;
    a[0] = a0;
    a[1] = a1;
    a[2] = a2;
    a[3] = a3;
}
/* a[0..3] += the four rows' dot products with x + offset over n >= 1 blocks of four; *wp:
 * the rows' blocks, advanced past them (one run of td_dot4_runs, without its bookkeeping) */
static inline __attribute__((always_inline)) void
td_dot4_blocks(const int8_t *x, const int8_t **wp, int32_t n, int32_t off2, int32_t a[4])
{
    const int8_t *const end = x + 4 * n;
    const int8_t *w = *wp;
    int32_t a0 = a[0], a1 = a[1], a2 = a[2], a3 = a[3];
    int32_t xe, xo, v, t;
    __asm__ volatile("1:\n\t" TD_DOT4_S8_BLOCK "cmp %[x], %[end]\n\t"
                     "bne 1b"
                     : [a0] "+r"(a0), [a1] "+r"(a1), [a2] "+r"(a2), [a3] "+r"(a3),
                       [x] "+r"(x), [w] "+r"(w), [xe] "=&r"(xe), [xo] "=&r"(xo),
                       [v] "=&r"(v), [t] "=&r"(t)
                     : [end] "r"(end), [k] "r"(off2)
                     : "cc", "memory");
    *wp = w;
    a[0] = a0;
    a[1] = a1;
    a[2] = a2;
    a[3] = a3;
}
#else
/* the same through the td_simd.h functions */
static inline __attribute__((always_inline)) void
td_dot4_runs(const int8_t *x, const int8_t **wp, int32_t runs, int32_t nb, int32_t stride,
             int32_t off2, int32_t a[4])
{
    const int8_t *w = *wp;
    for (int32_t r = 0; r < runs; ++r) {
        const int8_t *xr = x + r * stride;
        for (int32_t q = 0; q < nb; q += 4) {
            const int32_t xv = td_read_s8x4(xr + q);
            const int32_t xe = td_sxtab16(off2, xv), xo = td_sxtab16_ror8(off2, xv);
            for (int32_t j = 0; j < 4; ++j, w += 4) {
                const int32_t v = td_read_s8x4(w);
                a[j] = td_smlad(xo, td_sxtb16_ror8(v), td_smlad(xe, td_sxtb16(v), a[j]));
            }
        }
    }
    *wp = w;
}

static inline __attribute__((always_inline)) void
td_dot4_blocks(const int8_t *x, const int8_t **wp, int32_t n, int32_t off2, int32_t a[4])
{
    td_dot4_runs(x, wp, 1, 4 * n, 4 * n, off2, a);
}
#endif

#endif /* TD_DOT4_S8_DSP_H */
