/*
 * td_simd.h - the few Armv7E-M DSP (SIMD) instructions the dsp kernels use, with exact
 * portable C twins.
 *
 * On a core with the DSP extension (__ARM_FEATURE_DSP: Cortex-M4/M7/M33/M55) every function
 * compiles to one instruction through <arm_acle.h>. Elsewhere (the host, where the golden
 * tests compile the same kernels with sanitizers) each function is plain C that gives the same
 * 32 bits for every input, so a bit-exact host run implies a bit-exact device run as long as
 * the twins are exact; tests/golden/test_dsp_target.py runs the same check program
 * (kernels/arm/test/td_simd_check.c) through both and requires identical results.
 *
 * Packed types (as in ACLE): an int32_t holding two int16 lanes (bits 0-15 = bottom, 16-31 =
 * top) or four int8 lanes (byte 0 = lowest address, little-endian).
 * Accumulations wrap modulo 2^32, as the instructions do (the Q flag they may set is never
 * read); the C twins compute in uint32_t so that no signed overflow (undefined in C) occurs.
 */
#ifndef TD_SIMD_H
#define TD_SIMD_H

#include <stdint.h>
#include <string.h>

#if defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP
#include <arm_acle.h>
#define TD_SIMD_NATIVE 1
#else
#define TD_SIMD_NATIVE 0
#endif

/* An int32 that may alias any other type (packed int8/int16 data is read as words). */
typedef int32_t __attribute__((__may_alias__)) td_word_t;
typedef struct {
    int32_t w[2];
} __attribute__((__may_alias__)) td_word2_t;

/* Four int8 values from p (any alignment: Armv7-M LDR tolerates unaligned addresses and
 * memcpy compiles to one LDR there). */
static inline int32_t td_read_s8x4(const int8_t *p)
{
    int32_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

#if TD_SIMD_NATIVE

/* bytes 0 and 2 sign-extended to the bottom and top int16 lanes */
static inline int32_t td_sxtb16(int32_t x)
{
    return __sxtb16(x);
}

/* bytes 1 and 3 sign-extended to the bottom and top int16 lanes (SXTB16 with ROR #8) */
static inline int32_t td_sxtb16_ror8(int32_t x)
{
    int32_t r;
    __asm__("sxtb16 %0, %1, ror #8" : "=r"(r) : "r"(x));
    return r;
}

/* acc + bytes 0 and 2 of x, lane-wise (each int16 lane wraps modulo 2^16) */
static inline int32_t td_sxtab16(int32_t acc, int32_t x)
{
    return __sxtab16(acc, x);
}

/* acc + bytes 1 and 3 of x, lane-wise (SXTAB16 with ROR #8) */
static inline int32_t td_sxtab16_ror8(int32_t acc, int32_t x)
{
    int32_t r;
    __asm__("sxtab16 %0, %1, %2, ror #8" : "=r"(r) : "r"(acc), "r"(x));
    return r;
}

/* x saturated to int8 (SSAT #8) */
static inline int32_t td_ssat8(int32_t x)
{
    return __ssat(x, 8);
}

/* acc + bot(x) * bot(y) + top(x) * top(y) */
static inline int32_t td_smlad(int32_t x, int32_t y, int32_t acc)
{
    return __smlad(x, y, acc);
}

/* acc + bot(x) * bot(y) */
static inline int32_t td_smlabb(int32_t x, int32_t y, int32_t acc)
{
    return __smlabb(x, y, acc);
}

/* acc + top(x) * top(y) */
static inline int32_t td_smlatt(int32_t x, int32_t y, int32_t acc)
{
    return __smlatt(x, y, acc);
}

/* lane-wise x + y, each lane wrapping modulo 2^16 */
static inline int32_t td_sadd16(int32_t x, int32_t y)
{
    return __sadd16(x, y);
}

/* Two consecutive words from p (4-byte aligned) into *a and *b; returns p + 2. One LDRD with
 * post-increment (the compiler does not pair the loads itself). */
static inline const td_word_t *td_load2(const td_word_t *p, int32_t *a, int32_t *b)
{
    int32_t x, y;
    __asm__("ldrd %0, %1, [%2], #8"
            : "=&r"(x), "=&r"(y), "+r"(p)
            : "m"(*(const td_word2_t *)p));
    *a = x;
    *b = y;
    return p;
}

#else /* portable twins */

static inline const td_word_t *td_load2(const td_word_t *p, int32_t *a, int32_t *b)
{
    *a = p[0];
    *b = p[1];
    return p + 2;
}

static inline int32_t td_lane_bot(int32_t x)
{
    return (int32_t)(int16_t)(uint16_t)((uint32_t)x & 0xFFFFu);
}

static inline int32_t td_lane_top(int32_t x)
{
    return (int32_t)(int16_t)(uint16_t)((uint32_t)x >> 16);
}

static inline int32_t td_pack16(int32_t bot, int32_t top)
{
    return (int32_t)(((uint32_t)top << 16) | ((uint32_t)bot & 0xFFFFu));
}

static inline int32_t td_byte(int32_t x, int k)
{
    return (int32_t)(int8_t)(uint8_t)(((uint32_t)x >> (8 * k)) & 0xFFu);
}

static inline int32_t td_sxtb16(int32_t x)
{
    return td_pack16(td_byte(x, 0), td_byte(x, 2));
}

static inline int32_t td_sxtb16_ror8(int32_t x)
{
    return td_pack16(td_byte(x, 1), td_byte(x, 3));
}

static inline int32_t td_ssat8(int32_t x)
{
    return x < -128 ? -128 : (x > 127 ? 127 : x);
}

static inline int32_t td_sxtab16(int32_t acc, int32_t x)
{
    return td_pack16((int32_t)(int16_t)(uint16_t)(td_lane_bot(acc) + td_byte(x, 0)),
                     (int32_t)(int16_t)(uint16_t)(td_lane_top(acc) + td_byte(x, 2)));
}

static inline int32_t td_sxtab16_ror8(int32_t acc, int32_t x)
{
    return td_pack16((int32_t)(int16_t)(uint16_t)(td_lane_bot(acc) + td_byte(x, 1)),
                     (int32_t)(int16_t)(uint16_t)(td_lane_top(acc) + td_byte(x, 3)));
}

static inline int32_t td_smlad(int32_t x, int32_t y, int32_t acc)
{
    uint32_t s = (uint32_t)acc + (uint32_t)(td_lane_bot(x) * td_lane_bot(y))
                 + (uint32_t)(td_lane_top(x) * td_lane_top(y));
    return (int32_t)s;
}

static inline int32_t td_smlabb(int32_t x, int32_t y, int32_t acc)
{
    return (int32_t)((uint32_t)acc + (uint32_t)(td_lane_bot(x) * td_lane_bot(y)));
}

static inline int32_t td_smlatt(int32_t x, int32_t y, int32_t acc)
{
    return (int32_t)((uint32_t)acc + (uint32_t)(td_lane_top(x) * td_lane_top(y)));
}

static inline int32_t td_sadd16(int32_t x, int32_t y)
{
    return td_pack16((int32_t)(int16_t)(uint16_t)(td_lane_bot(x) + td_lane_bot(y)),
                     (int32_t)(int16_t)(uint16_t)(td_lane_top(x) + td_lane_top(y)));
}

#endif /* TD_SIMD_NATIVE */

/* a + b modulo 2^32 (no signed-overflow undefined behaviour on any target) */
static inline int32_t td_add_wrap(int32_t a, int32_t b)
{
    return (int32_t)((uint32_t)a + (uint32_t)b);
}

/* v in both int16 lanes (the input offset that SXTAB16 adds while widening) */
static inline int32_t td_pack_off(int32_t v)
{
    return (int32_t)(((uint32_t)v << 16) | ((uint32_t)v & 0xFFFFu));
}

/* the bottom halves of x and y as one word: bottom = x's, top = y's (PKHBT x, y, LSL #16;
 * plain C, which the compiler turns into that one instruction) */
static inline int32_t td_pkhbt16(int32_t x, int32_t y)
{
    return (int32_t)(((uint32_t)x & 0xFFFFu) | ((uint32_t)y << 16));
}

/* the top halves of x and y as one word: bottom = x's, top = y's (PKHTB y, y, x, ASR #16) */
static inline int32_t td_pkhtb16(int32_t y, int32_t x)
{
    return (int32_t)(((uint32_t)y & 0xFFFF0000u) | ((uint32_t)x >> 16));
}

/* acc + bot(x) * top(y) (SMLABT) and acc + top(x) * bot(y) (SMLATB): the cross products of
 * two int16 pairs (the 3x3 depthwise lines kernel's neighbouring outputs) */
#if TD_SIMD_NATIVE
static inline int32_t td_smlabt(int32_t x, int32_t y, int32_t acc)
{
    return __smlabt(x, y, acc);
}

static inline int32_t td_smlatb(int32_t x, int32_t y, int32_t acc)
{
    return __smlatb(x, y, acc);
}
#else
static inline int32_t td_smlabt(int32_t x, int32_t y, int32_t acc)
{
    return (int32_t)((uint32_t)acc + (uint32_t)(td_lane_bot(x) * td_lane_top(y)));
}

static inline int32_t td_smlatb(int32_t x, int32_t y, int32_t acc)
{
    return (int32_t)((uint32_t)acc + (uint32_t)(td_lane_top(x) * td_lane_bot(y)));
}
#endif

#endif /* TD_SIMD_H */
