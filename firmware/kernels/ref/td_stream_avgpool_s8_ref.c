/*
 * td_stream_avgpool_s8_ref.c - the streamed model's time reduction: an average pool over
 * all rows of a window, from exact per-row sums kept across steps (td_kernels.h).
 *
 * A row's sum (at most cols * 128 in magnitude, cols <= 255: the host checks) is exact in
 * int16, the total (at most rows * cols * 128) in int32, so the total equals the full
 * window's sum over the same taps and the result is the reference pool's: divided by the
 * count, rounded half away from zero, clamped. The ring is circular (no row moves) and
 * its total is kept: a step adds its new rows' sums and drops the oldest. Channels go in
 * blocks of TD_STREAM_BLOCK with their sums on the stack. No scratch memory.
 */
#include "td_kernels.h"

#define TD_STREAM_BLOCK 64

/* acc[0..n) += the sum over cols of rows [0, rows) of `in` at channels c0..c0+n */
static void td_add_rows(int32_t *acc, const int8_t *in, int32_t rows, int32_t cols,
                        int32_t ch, int32_t c0, int32_t n)
{
    for (int32_t r = 0; r < rows * cols; ++r) {
        const int8_t *px = in + r * ch + c0;
        for (int32_t c = 0; c < n; ++c) {
            acc[c] += px[c];
        }
    }
}

void td_stream_avgpool_s8_ref(const td_stream_avgpool_params_t *p, const int8_t *top,
                              const int8_t *tail, void *state, int8_t *out0)
{
    const int32_t ch = p->channels, row = p->cols * p->channels;
    int32_t *total = (int32_t *)state;                 /* [channels]: the ring's sum */
    int32_t *pos = total + ch;                         /* the oldest slot */
    int16_t *ring = (int16_t *)(void *)(pos + 1);      /* [ring_rows][channels] */
    int32_t acc[TD_STREAM_BLOCK];
    for (int32_t c0 = 0; c0 < ch; c0 += TD_STREAM_BLOCK) {
        const int32_t n = ch - c0 < TD_STREAM_BLOCK ? ch - c0 : TD_STREAM_BLOCK;
        /* each new row's sums replace the oldest slot's in the ring and in its total */
        int32_t slot = *pos;
        for (int32_t r = 0; r < p->new_rows; ++r) {
            for (int32_t c = 0; c < n; ++c) {
                acc[c] = 0;
            }
            td_add_rows(acc, tail + r * row, 1, p->cols, ch, c0, n);
            int16_t *s = ring + slot * ch + c0;
            for (int32_t c = 0; c < n; ++c) {
                total[c0 + c] += acc[c] - s[c];
                s[c] = (int16_t)acc[c];
            }
            slot = slot + 1 == p->ring_rows ? 0 : slot + 1;
        }
        for (int32_t c = 0; c < n; ++c) {
            acc[c] = total[c0 + c];
        }
        td_add_rows(acc, top, p->top_rows, p->cols, ch, c0, n);
        td_add_rows(acc, tail + p->new_rows * row, p->bottom_rows, p->cols, ch, c0, n);
        for (int32_t c = 0; c < n; ++c) {
            const int32_t cnt = p->count;
            int32_t v = acc[c] > 0 ? (acc[c] + cnt / 2) / cnt : (acc[c] - cnt / 2) / cnt;
            v = v < p->act_min ? p->act_min : v;
            v = v > p->act_max ? p->act_max : v;
            out0[c0 + c] = (int8_t)v;
        }
    }
    if (p->ring_rows > 0) {
        *pos = (*pos + p->new_rows) % p->ring_rows;
    }
}
