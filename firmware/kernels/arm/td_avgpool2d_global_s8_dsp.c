/*
 * td_avgpool2d_global_s8_dsp.c - int8 average pooling over the whole image (one output pixel
 * per batch: the window covers the input, no padding), bit-exact with td_avgpool2d_s8_ref.
 *
 * Channels go four at a time: one load per pixel gives four channels, SXTAB16 / SXTAB16
 * ROR #8 add them to two words of int16 lane sums (channels c0, c2 and c1, c3). An int16
 * lane holds the sum of up to 255 int8 values exactly (|sum| <= 255 * 128 < 2^15), so pixels
 * are summed in runs of at most 255 and each run is added to int32 totals. The average is
 * the reference's: rounded half away from zero by C's truncating division, then clamped.
 *
 * Parameters: td_pool2d_params_t as for td_avgpool2d_s8_ref with out_h = out_w = 1,
 * pad_h = pad_w = 0, filter_h >= in_h and filter_w >= in_w. No scratch.
 */
#include "td_kernels.h"

#include "td_simd.h"

int32_t td_avgpool2d_global_s8_dsp_scratch_size(const td_pool2d_params_t *p)
{
    (void)p;
    return 0;
}

static int8_t td_average(int32_t acc, int32_t count, int32_t lo, int32_t hi)
{
    acc = acc > 0 ? (acc + count / 2) / count : (acc - count / 2) / count;
    return (int8_t)td_clamp_s32(acc, lo, hi);
}

static int32_t td_lane(int32_t word, int top)
{
    return top ? (int32_t)(int16_t)(uint16_t)((uint32_t)word >> 16)
               : (int32_t)(int16_t)(uint16_t)((uint32_t)word & 0xFFFFu);
}

void td_avgpool2d_global_s8_dsp(const td_pool2d_params_t *p, const int8_t *in0, int8_t *out0)
{
    const int32_t ch = p->channels, ch4 = ch & ~3;
    const int32_t count = p->in_h * p->in_w;
    for (int32_t b = 0; b < p->batches; ++b) {
        const int8_t *image = in0 + b * count * ch;
        int8_t *dst = out0 + b * ch;
        for (int32_t c = 0; c < ch4; c += 4) {
            int32_t t0 = 0, t1 = 0, t2 = 0, t3 = 0;
            const int8_t *s = image + c;
            for (int32_t done = 0; done < count;) {
                const int32_t run = count - done < 255 ? count - done : 255;
                int32_t even = 0, odd = 0;
                for (int32_t i = 0; i < run; ++i, s += ch) {
                    const int32_t x = td_read_s8x4(s);
                    even = td_sxtab16(even, x);
                    odd = td_sxtab16_ror8(odd, x);
                }
                t0 += td_lane(even, 0);
                t2 += td_lane(even, 1);
                t1 += td_lane(odd, 0);
                t3 += td_lane(odd, 1);
                done += run;
            }
            dst[c] = td_average(t0, count, p->act_min, p->act_max);
            dst[c + 1] = td_average(t1, count, p->act_min, p->act_max);
            dst[c + 2] = td_average(t2, count, p->act_min, p->act_max);
            dst[c + 3] = td_average(t3, count, p->act_min, p->act_max);
        }
        for (int32_t c = ch4; c < ch; ++c) {
            int32_t acc = 0;
            for (int32_t i = 0; i < count; ++i) {
                acc += image[i * ch + c];
            }
            dst[c] = td_average(acc, count, p->act_min, p->act_max);
        }
    }
}
