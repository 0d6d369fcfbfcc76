/*
 * td_simd_check.c - runs every td_simd.h function on the same operands and prints the results
 * as hex, one line per function. Built for the host (portable C twins, with sanitizers) and for
 * the Cortex-M4 (the DSP instructions) by tests/golden/test_dsp_target.py, which requires the
 * two outputs to be identical. The last two lines are the rounding form of the requantization
 * (td_requant.h: SMMULR on the device) on operands inside its preconditions, including exact
 * ties of both roundings, and the number of them where it, or its variant with the
 * accumulator's sign (td_requant_round_form_acc), differs from td_requantize + zp (which must
 * be 0).
 */
#include <stdint.h>
#include <string.h>

#include "td_requant.h"
#include "td_simd.h"

#ifdef TD_SIMD_CHECK_HOST
#include <stdio.h>
static void put_hex(const void *data, uint32_t n)
{
    const uint8_t *p = (const uint8_t *)data;
    for (uint32_t i = 0; i < n; ++i) {
        printf("%02x", p[i]);
    }
    printf("\n");
}
#define FINISH() return 0
#else
#include "td_dsp_test_rt.h"
#define put_hex td_rt_put_hex
#define FINISH() td_rt_puts("end\n"); return 0
#endif

/* corner words: lane extremes in every position, then pseudo-random ones */
#define N_OPS 24
static int32_t ops[N_OPS] = {
    0, -1, 1, (int32_t)0x7FFFFFFF, (int32_t)0x80000000, (int32_t)0x7F7F7F7F,
    (int32_t)0x80808080, (int32_t)0x80007FFF, (int32_t)0x7FFF8000, (int32_t)0x00FF00FF,
    (int32_t)0xFF00FF00, (int32_t)0x807F807F, (int32_t)0x7F807F80, (int32_t)0x00010001,
    (int32_t)0xFFFF0000, (int32_t)0x0000FFFF,
};

static int32_t results[N_OPS * N_OPS];

int main(void)
{
    uint32_t s = 12345u;
    for (int i = 16; i < N_OPS; ++i) {
        s = s * 1664525u + 1013904223u;
        ops[i] = (int32_t)s;
    }
    for (int i = 0; i < N_OPS; ++i) {
        results[i] = td_sxtb16(ops[i]);
        results[N_OPS + i] = td_sxtb16_ror8(ops[i]);
        int8_t b[4];
        memcpy(b, &ops[i], 4);
        results[2 * N_OPS + i] = td_read_s8x4(b);
    }
    put_hex(results, sizeof(int32_t) * 3 * N_OPS);
    for (int f = 4; f < 6; ++f) {
        for (int i = 0; i < N_OPS; ++i) {
            for (int j = 0; j < N_OPS; ++j) {
                results[i * N_OPS + j] = f == 4 ? td_sxtab16(ops[i], ops[j])
                                                : td_sxtab16_ror8(ops[i], ops[j]);
            }
        }
        put_hex(results, sizeof results);
    }
    {
        int32_t mismatches = 0;
        for (int i = 0; i < N_OPS * N_OPS; ++i) {
            s = s * 1664525u + 1013904223u;
            int32_t e = 1 + (int32_t)(s % 31u);
            const int32_t zp = (int32_t)((s >> 8) & 0xFFu) - 128;
            while ((int64_t)(zp < 0 ? -(2 * zp + 1) : 2 * zp + 1) << e > INT32_MAX) {
                --e;
            }
            const int32_t r = td_requant_rnd(2 * zp + 1, e);
            const int64_t lim = (int64_t)INT32_MAX - 2 - (r < 0 ? -(int64_t)r : r);
            const int32_t a = (int32_t)(lim < (1 << 30) - 1 ? lim : (1 << 30) - 1);
            const uint32_t t = s * 1664525u + 1013904223u;
            s = t;
            int32_t m, acc;
            switch (i % 4) {
            case 0: /* m = 2^30: every odd accumulator is a tie of the doubling high multiply */
                m = 1 << 30;
                acc = (int32_t)(t % (2u * (uint32_t)a + 1u)) - a;
                break;
            case 1: /* a tie of the divide by 2^e: x = q * 2^e +- 2^(e-1), acc = 2x, m = 2^30 */
                m = 1 << 30;
                acc = 2 * ((int32_t)((t >> 4) % ((uint32_t)(a / 2 >> e) + 1u)) << e);
                acc += (t & 1u) ? (1 << e) : -(1 << e);
                acc = (t & 2u) ? -acc : acc;
                if (acc > a || acc < -a) {
                    acc = 0;
                }
                break;
            case 2: /* the largest multiplier, accumulators at the bound */
                m = INT32_MAX;
                acc = (t & 1u) ? a : -a;
                break;
            default:
                m = (int32_t)((1u << 30) | (t >> 2));
                acc = (int32_t)((t * 2654435761u) % (2u * (uint32_t)a + 1u)) - a;
                break;
            }
            results[i] = td_requant_round_form(acc, m, e, r);
            mismatches += results[i] != td_requantize(acc, m, -e) + zp;
            mismatches += td_requant_round_fold(acc, m, e, r) != results[i];
            mismatches += td_requant_round_form_acc(acc, m, e, r) != results[i];
        }
        put_hex(results, sizeof results);
        put_hex(&mismatches, sizeof mismatches);
    }
    for (int f = 0; f < 6; ++f) {
        for (int i = 0; i < N_OPS; ++i) {
            for (int j = 0; j < N_OPS; ++j) {
                const int32_t acc = ops[(i * 7 + j * 3) % N_OPS];
                int32_t r;
                switch (f) {
                case 0: r = td_smlad(ops[i], ops[j], acc); break;
                case 1: r = td_smlabb(ops[i], ops[j], acc); break;
                case 2: r = td_smlatt(ops[i], ops[j], acc); break;
                case 3: r = td_sadd16(ops[i], ops[j]); break;
                case 4: r = td_smlabt(ops[i], ops[j], acc); break;
                default: r = td_smlatb(ops[i], ops[j], acc); break;
                }
                results[i * N_OPS + j] = r;
            }
        }
        put_hex(results, sizeof results);
    }
    {
        const td_word_t words[4] = { ops[3], ops[4], ops[5], ops[6] };
        int32_t a, b, c, d;
        const td_word_t *p = td_load2(words, &a, &b);
        p = td_load2(p, &c, &d);
        const int32_t got[5] = { a, b, c, d, (int32_t)(p - words) };
        put_hex(got, sizeof got);
    }
    FINISH();
}
