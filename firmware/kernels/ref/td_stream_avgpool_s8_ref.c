/*
 * td_stream_avgpool_s8_ref.c - the streamed model's time reduction: an average pool over
 * all rows of a window, from exact per-row sums kept across steps (td_kernels.h).
 *
 * A row's sum (at most cols * 128 in magnitude, cols <= 255: the host checks) is exact in
 * int16, the total (at most rows * cols * 128) in int32, so the total equals the full
 * window's sum over the same taps and the result is the reference pool's: divided
 * by the count, rounded half away from zero, clamped. No scratch memory.
 */
#include "td_kernels.h"

static int32_t td_row_sum(const int8_t *row, int32_t cols, int32_t channels, int32_t c)
{
    int32_t s = 0;
    for (int32_t x = 0; x < cols; ++x) {
        s += row[x * channels + c];
    }
    return s;
}

void td_stream_avgpool_s8_ref(const td_stream_avgpool_params_t *p, const int8_t *top,
                              const int8_t *tail, int16_t *ring, int8_t *out0)
{
    const int32_t ch = p->channels, row = p->cols * p->channels;
    const int32_t first_new = p->ring_rows - p->new_rows;
    for (int32_t c = 0; c < ch; ++c) {
        int32_t acc = 0;
        for (int32_t r = 0; r < p->new_rows; ++r) {
            int32_t s = td_row_sum(tail + r * row, p->cols, ch, c);
            if (first_new + r >= 0) {
                ring[(first_new + r) * ch + c] = (int16_t)s;
            }
        }
        for (int32_t r = 0; r < p->ring_rows; ++r) {
            acc += ring[r * ch + c];
        }
        for (int32_t r = 0; r < p->top_rows; ++r) {
            acc += td_row_sum(top + r * row, p->cols, ch, c);
        }
        for (int32_t r = 0; r < p->bottom_rows; ++r) {
            acc += td_row_sum(tail + (p->new_rows + r) * row, p->cols, ch, c);
        }
        const int32_t n = p->count;
        acc = acc > 0 ? (acc + n / 2) / n : (acc - n / 2) / n;
        if (acc < p->act_min) {
            acc = p->act_min;
        }
        if (acc > p->act_max) {
            acc = p->act_max;
        }
        out0[c] = (int8_t)acc;
    }
}
