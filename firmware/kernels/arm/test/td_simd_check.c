/*
 * td_simd_check.c - runs every td_simd.h function on the same operands and prints the results
 * as hex, one line per function. Built for the host (portable C twins, with sanitizers) and for
 * the Cortex-M4 (the DSP instructions) by tests/golden/test_dsp_target.py, which requires the
 * two outputs to be identical.
 */
#include <stdint.h>
#include <string.h>

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
    for (int f = 0; f < 4; ++f) {
        for (int i = 0; i < N_OPS; ++i) {
            for (int j = 0; j < N_OPS; ++j) {
                const int32_t acc = ops[(i * 7 + j * 3) % N_OPS];
                int32_t r;
                switch (f) {
                case 0: r = td_smlad(ops[i], ops[j], acc); break;
                case 1: r = td_smlabb(ops[i], ops[j], acc); break;
                case 2: r = td_smlatt(ops[i], ops[j], acc); break;
                default: r = td_sadd16(ops[i], ops[j]); break;
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
