/*
 * td_dwconv2d_3x3_s8_dsp.c - int8 3x3 depthwise convolution (depth multiplier 1, channels a
 * multiple of 4, any stride, dilation and padding) with the DSP extension and no scratch,
 * bit-exact with td_dwconv2d_s8_ref.
 *
 * Channels go four at a time, taps two at a time: the words of taps t and u (four channels
 * each, contiguous in NHWC) are repacked by PKHBT / PKHTB into (c0 c1 of t, c0 c1 of u) and
 * (c2 c3 of t, c2 c3 of u); SXTAB16 / SXTAB16 ROR #8 add the input offset and give each
 * channel's (t, u) pair in the int16 lanes, against the filter pair (regrouped on the host,
 * the same bytes as the model's) widened by SXTB16: one SMLAD per channel and tap pair. The
 * ninth tap is one word, SMLABB / SMLATT per channel. Per pixel and four channels: 83
 * instructions for 36 multiply-accumulates (on the Cortex-M, one LDRD for two tap pointers,
 * one for two filter words). A tap in the padding reads a word of four input zero points (a local
 * variable, not scratch), which widens to 0: exactly what the reference's skipping of that
 * tap contributes; so every pixel runs the same code.
 *
 * Parameters: td_dwconv2d_params_t as for td_dwconv2d_s8_ref with filter_h = filter_w = 3,
 * depth_multiplier = 1 (out_c = in_c), in_c % 4 == 0, and
 *   filter: int8 [in_c / 4][36]: per group of channels 4g .. 4g+3, for the tap pairs
 *           (0, 1), (2, 3), (4, 5), (6, 7) two words [c0 t, c1 t, c0 u, c1 u]
 *           [c2 t, c3 t, c2 u, c3 u], then tap 8 as [c0, c1, c2, c3] (tap = 3 * ky + kx),
 *           4-byte aligned (LDRD; the generated constants are 16-byte aligned);
 *   bias, mult: the reference's; shift: the reference's, or with requant_form = 1 (the
 *           rounding form, every shift <= -1) e - 1 = ~shift for e = -shift;
 *   requant_form as chosen on the host. No scratch.
 *
 * On the Cortex-M, for the rounding form (with a bias), one asm loop runs every group of a
 * pixel: bias, taps and the four requantizations (8 instructions each: SMMLAR folds in the
 * rounding constant, SSAT the last shift; the four bytes clamped together by SSUB8 / SEL
 * when the activation range is not all of int8, one STR), about 136 instructions per pixel
 * and four channels. The general requantization takes the taps' asm block and C.
 */
#include "td_kernels.h"

#include "td_dwconv2d_dsp.h"
#include "td_simd.h"

int32_t td_dwconv2d_3x3_s8_dsp_scratch_size(const td_dwconv2d_params_t *p)
{
    (void)p;
    return 0;
}

/* a0..a3 += the nine taps of channels c .. c+3, every tap inside the image: tap[t] + c is
 * tap t's word, w the group's 36 filter bytes (advanced past them). */
#if TD_SIMD_NATIVE && defined(__OPTIMIZE__)
/* Taps t and t + 1 of channels c .. c+3, i = 4 * t the byte offset of tap t's pointer (asm
 * operands: tap, c, w, k = the input offset in both lanes, the accumulators a0..a3 and the
 * temporaries x, y, v, q, t, and TD_DW_WU): one LDRD for the two tap pointers; the two filter
 * words by TD_DW_W0 / TD_DW_W1 into v and TD_DW_WU: TD_DW_PAIR14 one LDRD into v, u (a 14th
 * register), TD_DW_PAIR13 two LDR into v. */
#define TD_DW_PAIR(i, TD_DW_W0, TD_DW_W1, TD_DW_WU)                                        \
    "ldrd %[x], %[y], [%[tap], #" #i "]\n\t"                                               \
    "ldr %[x], [%[x], %[c]]\n\t"                                                           \
    "ldr %[y], [%[y], %[c]]\n\t"                                                           \
    TD_DW_W0                                                                               \
    "pkhbt %[q], %[x], %[y], lsl #16\n\t"                                                  \
    "pkhtb %[y], %[y], %[x], asr #16\n\t"                                                  \
    "sxtab16 %[x], %[k], %[q]\n\t"                                                         \
    "sxtb16 %[t], %[v]\n\t"                                                                \
    "smlad %[a0], %[x], %[t], %[a0]\n\t"                                                   \
    "sxtab16 %[x], %[k], %[q], ror #8\n\t"                                                 \
    "sxtb16 %[t], %[v], ror #8\n\t"                                                        \
    "smlad %[a1], %[x], %[t], %[a1]\n\t"                                                   \
    TD_DW_W1                                                                               \
    "sxtab16 %[x], %[k], %[y]\n\t"                                                         \
    "sxtb16 %[t], %[" TD_DW_WU "]\n\t"                                                     \
    "smlad %[a2], %[x], %[t], %[a2]\n\t"                                                   \
    "sxtab16 %[x], %[k], %[y], ror #8\n\t"                                                 \
    "sxtb16 %[t], %[" TD_DW_WU "], ror #8\n\t"                                             \
    "smlad %[a3], %[x], %[t], %[a3]\n\t"

/* Tap 8 of channels c .. c+3: one word, SMLABB / SMLATT per channel. */
#define TD_DW_TAP8                                                                         \
    "ldr %[x], [%[tap], #32]\n\t"                                                          \
    "ldr %[x], [%[x], %[c]]\n\t"                                                           \
    "ldr %[v], [%[w]], #4\n\t"                                                             \
    "sxtab16 %[q], %[k], %[x]\n\t"                                                         \
    "sxtb16 %[t], %[v]\n\t"                                                                \
    "smlabb %[a0], %[q], %[t], %[a0]\n\t"                                                  \
    "smlatt %[a2], %[q], %[t], %[a2]\n\t"                                                  \
    "sxtab16 %[q], %[k], %[x], ror #8\n\t"                                                 \
    "sxtb16 %[t], %[v], ror #8\n\t"                                                        \
    "smlabb %[a1], %[q], %[t], %[a1]\n\t"                                                  \
    "smlatt %[a3], %[q], %[t], %[a3]\n\t"

#define TD_DW_PAIR13(i) TD_DW_PAIR(i, "ldr %[v], [%[w]], #4\n\t", "ldr %[v], [%[w]], #4\n\t", "v")
#define TD_DW_PAIR14(i) TD_DW_PAIR(i, "ldrd %[v], %[u], [%[w]], #8\n\t", "", "u")

/* (13 registers: the filter words by two LDR) */
#define TD_DW9(tp_, c_, w_, k_, r0_, r1_, r2_, r3_)                                        \
    do {                                                                                   \
        int32_t x_, y_, v_, q_, t_;                                                        \
        __asm__(TD_DW_PAIR13(0) TD_DW_PAIR13(8) TD_DW_PAIR13(16) TD_DW_PAIR13(24) TD_DW_TAP8 \
                : [a0] "+r"(r0_), [a1] "+r"(r1_), [a2] "+r"(r2_), [a3] "+r"(r3_),          \
                  [w] "+r"(w_), [x] "=&r"(x_), [y] "=&r"(y_), [v] "=&r"(v_),              \
                  [q] "=&r"(q_), [t] "=&r"(t_)                                             \
                : [tap] "r"(tp_), [c] "r"(c_), [k] "r"(k_)                                 \
                : "memory");                                                               \
    } while (0)
#else
#define TD_DW9(tp_, c_, w_, k_, r0_, r1_, r2_, r3_)                                        \
    do {                                                                                   \
        for (int32_t i_ = 0; i_ < 8; i_ += 2, w_ += 8) {                                   \
            const int32_t x_ = td_read_s8x4((tp_)[i_] + (c_));                             \
            const int32_t y_ = td_read_s8x4((tp_)[i_ + 1] + (c_));                         \
            const int32_t q_ = td_pkhbt16(x_, y_), r_ = td_pkhtb16(y_, x_);                \
            const int32_t v_ = td_read_s8x4(w_), u_ = td_read_s8x4(w_ + 4);                \
            r0_ = td_smlad(td_sxtab16(k_, q_), td_sxtb16(v_), r0_);                        \
            r1_ = td_smlad(td_sxtab16_ror8(k_, q_), td_sxtb16_ror8(v_), r1_);              \
            r2_ = td_smlad(td_sxtab16(k_, r_), td_sxtb16(u_), r2_);                        \
            r3_ = td_smlad(td_sxtab16_ror8(k_, r_), td_sxtb16_ror8(u_), r3_);              \
        }                                                                                  \
        const int32_t x_ = td_read_s8x4((tp_)[8] + (c_)), v_ = td_read_s8x4(w_);           \
        w_ += 4;                                                                           \
        const int32_t e_ = td_sxtab16(k_, x_), o_ = td_sxtab16_ror8(k_, x_);               \
        const int32_t we_ = td_sxtb16(v_), wo_ = td_sxtb16_ror8(v_);                       \
        r0_ = td_smlabb(e_, we_, r0_);                                                     \
        r2_ = td_smlatt(e_, we_, r2_);                                                     \
        r1_ = td_smlabb(o_, wo_, r1_);                                                     \
        r3_ = td_smlatt(o_, wo_, r3_);                                                     \
    } while (0)
#endif

/* The taps of one output pixel (tap[t] + c: tap t's word of channels c .. c+3), with those in
 * the padding pointing at zp - c: zpw, a word of four input zero points, which widen to 0
 * (what the reference's skipping of that tap contributes). The padded taps' pointers are
 * moved back by c for every group of channels; pad lists their byte offsets in tap. The
 * fields after tap serve the asm loop below (fixed offsets). */
typedef struct {
    const int8_t *tap[9];       /* 0 */
    const int32_t *mult;        /* 36 */
    const int8_t *shift;        /* 40 */
    const int32_t *bias;        /* 44 */
    int8_t *dst;                /* 48: the pixel's outputs */
    int32_t zp2p1;              /* 52: 2 * output_offset + 1 */
    int32_t off2;               /* 56: the input offset in both int16 lanes */
    int32_t ch;                 /* 60 */
    int32_t npad;               /* 64 */
    const int8_t *zp;           /* 68: &zpw */
    uint8_t pad[12];            /* 72: 4 * t of the padded taps */
    uint32_t lo4, hi4;          /* 84: act_min, act_max in four bytes */
    int32_t clamp;              /* 92: 1 unless [act_min, act_max] is all of int8 */
} td_dw3x3_ctx_t;

/* One pixel's taps into x: p0 the address of its (possibly padded) top-left tap, off[t] tap
 * t's byte offset from there, rows / cols the bits of the kernel rows / columns inside the
 * image (all 7 for a pixel away from the border: nine additions). */
static inline void td_dw3x3_pixel(uintptr_t p0, const int32_t off[9], int32_t rows,
                                  int32_t cols, td_dw3x3_ctx_t *x)
{
    if (rows == 7 && cols == 7) {
#pragma GCC unroll 9
        for (int32_t t = 0; t < 9; ++t) {
            x->tap[t] = (const int8_t *)(p0 + (uintptr_t)off[t]);
        }
        x->npad = 0;
        return;
    }
    int32_t n = 0;
    for (int32_t t = 0; t < 9; ++t) {
        if ((rows >> (t / 3)) & (cols >> (t % 3)) & 1) {
            x->tap[t] = (const int8_t *)(p0 + (uintptr_t)off[t]);
        } else {
            x->pad[n++] = (uint8_t)(4 * t);
        }
    }
    x->npad = n;
}

/* Bit k set when position origin + k * d (k = 0, 1, 2) lies in [0, n). */
static inline int32_t td_dw3x3_inside(int32_t origin, int32_t d, int32_t n)
{
    const uint32_t u = (uint32_t)n;
    return (int32_t)((uint32_t)origin < u) | (int32_t)((uint32_t)(origin + d) < u) << 1
           | (int32_t)((uint32_t)(origin + 2 * d) < u) << 2;
}

/* The padded taps' pointers for channels c .. c+3 (an address, not an object: only ever
 * read back at + c). */
static inline void td_dw3x3_repad(td_dw3x3_ctx_t *x, int32_t c)
{
    const int8_t *const zc = (const int8_t *)((uintptr_t)x->zp - (uintptr_t)c);
    for (int32_t i = 0; i < x->npad; ++i) {
        x->tap[x->pad[i] >> 2] = zc;
    }
}

/* The per-pixel asm loop takes 14 registers: all of r0-r12 and lr, none left for a frame
 * pointer. A build that keeps one in r7 (-fno-omit-frame-pointer, which none of tinydeploy's
 * builds uses) defines TD_FRAME_POINTER and gets the taps' asm block (13 registers) and the C
 * requantization instead. */
#if TD_SIMD_NATIVE && defined(__OPTIMIZE__) && !defined(TD_FRAME_POINTER)
/* One output in the rounding form (td_requant.h; the host proved every channel shifts right,
 * e = -shift >= 1) saturated to int8 into byte j of a0 (the four outputs, clamped to the
 * activation range with SSUB8 / SEL and stored with one STR after the fourth), channel c + j,
 * its multiplier in register m: t = e - 1 (stored so); r = zp2p1 << (e - 1) (td_requant_rnd);
 * SMMLAR(2 * acc, m, r) = SMMULR(2 * acc, m) + r exactly; plus the sign of acc (that of
 * SMMULR's x, except where x = 0 and acc < 0: then r - 1 and r give the same quotient, as
 * r mod 2^e = 2^(e-1)); shifted right by e - 1 and, inside SSAT, by 1. 8 instructions plus
 * half an LDRD of multipliers. y: the shifts at c, v: zp2p1. */
#define TD_DW_REQ1(j, a, m)                                                                \
    "ldrsb %[t], [%[y], #" #j "]\n\t"                                                      \
    "lsl %[k], %[v], %[t]\n\t"                                                             \
    "lsl %[" #a "], %[" #a "], #1\n\t"                                                     \
    "smmlar %[k], %[" #a "], %[" #m "], %[k]\n\t"                                          \
    "add %[k], %[k], %[" #a "], asr #31\n\t"

#define TD_DW_REQ_END(j)                                                                   \
    "asr %[k], %[k], %[t]\n\t"                                                             \
    "ssat %[k], #8, %[k], asr #1\n\t"                                                      \
    "bfi %[a0], %[k], #8 * " #j ", #8\n\t"

/* Every group of channels of one pixel: bias, nine taps, four outputs, in 14 registers. */
static inline void td_dw3x3_groups_asm(td_dw3x3_ctx_t *ctx, const int8_t *w)
{
    int32_t c, a0, a1, a2, a3, x, y, v, q, t, k, u;
    __asm__ volatile(
        "mov %[c], #0\n\t"
        "1:\n\t"
        "ldr %[t], [%[tap], #64]\n\t"          /* the padded taps at zp - c */
        "cmp %[t], #0\n\t"
        "beq 3f\n\t"
        "ldr %[q], [%[tap], #68]\n\t"
        "sub %[q], %[q], %[c]\n\t"
        "add %[x], %[tap], #72\n\t"
        "4:\n\t"
        "ldrb %[y], [%[x]], #1\n\t"
        "str %[q], [%[tap], %[y]]\n\t"
        "subs %[t], %[t], #1\n\t"
        "bne 4b\n\t"
        "3:\n\t"
        "ldr %[t], [%[tap], #44]\n\t"          /* the bias */
        "add %[t], %[t], %[c], lsl #2\n\t"
        "ldrd %[a0], %[a1], [%[t]]\n\t"
        "ldrd %[a2], %[a3], [%[t], #8]\n\t"
        "ldr %[k], [%[tap], #56]\n\t"
        TD_DW_PAIR14(0) TD_DW_PAIR14(8) TD_DW_PAIR14(16) TD_DW_PAIR14(24) TD_DW_TAP8
        "ldr %[x], [%[tap], #36]\n\t"          /* the four outputs */
        "add %[x], %[x], %[c], lsl #2\n\t"
        "ldrd %[q], %[u], [%[x]]\n\t"
        "ldr %[y], [%[tap], #40]\n\t"
        "add %[y], %[y], %[c]\n\t"
        "ldr %[v], [%[tap], #52]\n\t"
        TD_DW_REQ1(0, a0, q)
        "asr %[k], %[k], %[t]\n\t"
        "ssat %[a0], #8, %[k], asr #1\n\t"
        TD_DW_REQ1(1, a1, u) TD_DW_REQ_END(1)
        "ldrd %[q], %[u], [%[x], #8]\n\t"
        TD_DW_REQ1(2, a2, q) TD_DW_REQ_END(2)
        TD_DW_REQ1(3, a3, u) TD_DW_REQ_END(3)
        "ldr %[t], [%[tap], #92]\n\t"         /* the activation range, bytewise */
        "cmp %[t], #0\n\t"
        "beq 5f\n\t"
        "ldrd %[q], %[u], [%[tap], #84]\n\t"
        "ssub8 %[t], %[a0], %[q]\n\t"
        "sel %[a0], %[a0], %[q]\n\t"
        "ssub8 %[t], %[u], %[a0]\n\t"
        "sel %[a0], %[a0], %[u]\n\t"
        "5:\n\t"
        "ldr %[t], [%[tap], #48]\n\t"
        "str %[a0], [%[t], %[c]]\n\t"
        "add %[c], %[c], #4\n\t"
        "ldr %[t], [%[tap], #60]\n\t"
        "cmp %[c], %[t]\n\t"
        "bne 1b"
        : [c] "=&r"(c), [a0] "=&r"(a0), [a1] "=&r"(a1), [a2] "=&r"(a2), [a3] "=&r"(a3),
          [x] "=&r"(x), [y] "=&r"(y), [v] "=&r"(v), [q] "=&r"(q), [t] "=&r"(t),
          [k] "=&r"(k), [u] "=&r"(u), [w] "+r"(w)
        : [tap] "r"(ctx)
        : "cc", "memory");
}
#define TD_DW_HAVE_ASM 1
#else
#define TD_DW_HAVE_ASM 0
static inline void td_dw3x3_groups_asm(td_dw3x3_ctx_t *ctx, const int8_t *w)
{
    (void)ctx;
    (void)w;
}
#endif

void td_dwconv2d_3x3_s8_dsp(const td_dwconv2d_params_t *p, const int8_t *in0, int8_t *out0)
{
    const int32_t ch = p->in_c;
    const int32_t *bias = p->bias, *mult = p->mult;
    const int8_t *shift = p->shift;
    const int32_t out_off = p->output_offset, lo = p->act_min, hi = p->act_max;
    const int32_t round_form = p->requant_form != 0, full_range = lo == INT8_MIN && hi == INT8_MAX;
    const int32_t zp2p1 = 2 * out_off + 1;
    const int32_t off2 = td_pack_off(p->input_offset);
    const uint32_t zpw = 0x01010101u * (uint8_t)(int8_t)(-p->input_offset);
    /* the whole pixel in one asm loop: the rounding form, with a bias */
    const int fast = TD_DW_HAVE_ASM && round_form && bias != 0;
    td_dw3x3_ctx_t ctx;
    ctx.mult = mult;
    ctx.shift = shift;
    ctx.bias = bias;
    ctx.zp2p1 = zp2p1;
    ctx.off2 = off2;
    ctx.ch = ch;
    ctx.lo4 = 0x01010101u * (uint8_t)(int8_t)lo;
    ctx.hi4 = 0x01010101u * (uint8_t)(int8_t)hi;
    ctx.clamp = !full_range;
    ctx.zp = (const int8_t *)&zpw;
    const int32_t in_h = p->in_h, in_w = p->in_w, sh = p->stride_h, sw = p->stride_w;
    const int32_t dh = p->dilation_h, dw = p->dilation_w;
    int32_t off[9];
    for (int32_t t = 0; t < 9; ++t) {
        off[t] = ((t / 3) * dh * in_w + (t % 3) * dw) * ch;
    }
    int8_t *dst = out0;
    for (int32_t b = 0; b < p->batches; ++b) {
        const int8_t *image = in0 + b * in_h * in_w * ch;
        for (int32_t oy = 0; oy < p->out_h; ++oy) {
            const int32_t iy0 = oy * sh - p->pad_h;
            const int32_t rows = td_dw3x3_inside(iy0, dh, in_h);
            for (int32_t ox = 0; ox < p->out_w; ++ox, dst += ch) {
                const int32_t ix0 = ox * sw - p->pad_w;
                const int32_t cols = td_dw3x3_inside(ix0, dw, in_w);
                /* (an address: only the taps inside the image are ever read) */
                const uintptr_t p0 = (uintptr_t)image + (uintptr_t)((iy0 * in_w + ix0) * ch);
                td_dw3x3_pixel(p0, off, rows, cols, &ctx);
                if (fast) {
                    ctx.dst = dst;
                    td_dw3x3_groups_asm(&ctx, p->filter);
                    continue;
                }
                const int8_t *w = p->filter;
                for (int32_t c = 0; c < ch; c += 4) {
                    int32_t a0, a1, a2, a3;
                    td_dw_bias4(bias, c, &a0, &a1, &a2, &a3);
                    td_dw3x3_repad(&ctx, c);
                    TD_DW9(ctx.tap, c, w, off2, a0, a1, a2, a3);
                    /* (the rounding form's shifts are stored as ~shift) */
                    const int32_t s0 = round_form ? ~shift[c] : shift[c];
                    const int32_t s1 = round_form ? ~shift[c + 1] : shift[c + 1];
                    const int32_t s2 = round_form ? ~shift[c + 2] : shift[c + 2];
                    const int32_t s3 = round_form ? ~shift[c + 3] : shift[c + 3];
                    dst[c] = td_dw_out(a0, mult[c], s0, zp2p1, out_off, lo, hi, round_form,
                                       full_range);
                    dst[c + 1] = td_dw_out(a1, mult[c + 1], s1, zp2p1, out_off, lo, hi,
                                           round_form, full_range);
                    dst[c + 2] = td_dw_out(a2, mult[c + 2], s2, zp2p1, out_off, lo, hi,
                                           round_form, full_range);
                    dst[c + 3] = td_dw_out(a3, mult[c + 3], s3, zp2p1, out_off, lo, hi,
                                           round_form, full_range);
                }
            }
        }
    }
}
