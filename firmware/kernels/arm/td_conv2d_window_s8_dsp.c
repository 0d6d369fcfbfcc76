/*
 * td_conv2d_window_s8_dsp.c - int8 2-D convolution whose kernel rows are whole blocks of four
 * values (filter_w * in_c a multiple of 4: a keyword-spotting first layer, 10x4 on 49x10x1;
 * any layer of a multiple of four channels) and whose dot-product depth k = filter_h *
 * filter_w * in_c fits the pointwise rows buffer (k <= TD_GEMM_STACK_DEPTH); any stride,
 * dilation and padding. Bit-exact with td_conv2d_s8_ref. No scratch.
 *
 * Output pixels are taken TD_GEMM_ROWS (6) at a time in flat (batch, y, x) order, as by the
 * pointwise kernels: each pixel's receptive field is widened with the input offset straight
 * from the input into one row of the rows buffer of a td_pw_frame_t in this kernel's frame
 * (no im2col copy), and the group is multiplied with every int8 filter row by td_pw_product
 * (td_gemm_s8_dsp.c: the assembly channel loop, 18 instructions per 24 multiply-accumulates
 * under the host-proven rounding form; a partial group widens and multiplies five rows,
 * td_pw_rows_for). A kernel row inside the image is one td_widen_row
 * (LDR, SXTAB16, SXTAB16 ROR #8, STRD per block); a row outside it is stored as 0, what the
 * reference's skipped taps contribute; a one-block row (four taps of one channel) across the
 * left or right border is one LDR of the image row's first or last four bytes, shifted into
 * place with the input zero point (which widens to 0) in the lanes outside. Other rows across
 * a border, dilated rows and image rows narrower than four bytes are gathered tap by tap. A
 * group's input is read entirely before any of its outputs is written
 * (tinydeploy/kernels/access.py: conv_rows_order).
 *
 * Parameters: td_conv2d_params_t as for td_conv2d_s8_ref with filter_c = in_c (no groups),
 * (filter_w * in_c) % 4 == 0 and k <= TD_GEMM_STACK_DEPTH (checked on the host); filter,
 * bias, mult and shift the reference's; requant_form as chosen on the host.
 */
#include "td_kernels.h"

#include "td_gemm_s8_dsp.h"

int32_t td_conv2d_window_s8_dsp_scratch_size(const td_conv2d_params_t *p)
{
    (void)p;
    return 0;
}

/* n blocks of zeros from *dst (advanced past them; words: the rows buffer's words per
 * block, 2 * its rows) */
static inline void td_zero_blocks(td_word_t **dst, int32_t n, int32_t words)
{
    td_word_t *d = *dst;
    const td_word_t z = 0;
    for (; n > 0; --n, d += words) {
        d[0] = z;
        d[1] = z;
    }
    *dst = d;
}

/* The block of a window row whose first value is value i of the row (taps ix0 + kx * dw,
 * tap-by-tap: a dilated row, or an image row narrower than four bytes). */
static uint32_t td_gathered_block(const td_conv2d_params_t *p, const int8_t *row, int32_t ix0,
                                  int32_t i, uint32_t padw)
{
    const int32_t c = p->in_c;
    uint32_t v = 0;
    for (int32_t t = 0; t < 4; ++t) {
        const int32_t kx = (i + t) / c, ix = ix0 + kx * p->dilation_w;
        const uint32_t x = ix >= 0 && ix < p->in_w ? (uint8_t)row[ix * c + (i + t - kx * c)]
                                                   : padw & 0xFFu;
        v |= x << (8 * t);
    }
    return v;
}

/* The receptive field of the output pixel whose window starts at (iy0, ix0) of image (one
 * batch) widened with the input offset (off2 in both lanes) into one row of the rows buffer
 * whose first block is at dst: the kernel rows outside the image as 0 (what the reference's
 * skipped taps contribute), those inside it by td_widen_row when the window row lies inside
 * the image row, one block across a border by shifts of one LDR, else tap by tap. */
static __attribute__((noinline)) void td_widen_window(const td_conv2d_params_t *p,
                                                      const int8_t *image, int32_t iy0,
                                                      int32_t ix0, td_word_t *dst,
                                                      int32_t off2, int32_t words)
{
    const int32_t c = p->in_c, in_h = p->in_h, fh = p->filter_h, dh = p->dilation_h;
    const int32_t row_bytes = p->filter_w * c, image_row = p->in_w * c;
    const int32_t blocks = row_bytes >> 2, s0 = ix0 * c;
    /* the kernel rows inside the image: ky in [lo, hi) */
    int32_t lo = 0, hi = fh;
    while (lo < fh && iy0 + lo * dh < 0) {
        ++lo;
    }
    while (hi > lo && iy0 + (hi - 1) * dh >= in_h) {
        --hi;
    }
    td_zero_blocks(&dst, lo * blocks, words);
    const int8_t *row = image + (iy0 + lo * dh) * image_row;
    const int32_t step = dh * image_row;
    if (p->dilation_w == 1 && s0 >= 0 && s0 + row_bytes <= image_row) {
        if (words == 2 * TD_GEMM_ROWS) {   /* the six-row buffer: the assembly loop */
            for (int32_t ky = lo; ky < hi; ++ky, row += step) {
                const int8_t *src = row + s0;
                td_widen_row(&src, src + row_bytes, &dst, off2, TD_GEMM_ROWS);
            }
        } else if (words == 2 * TD_PW_SHORT_ROWS) {   /* ... and the five-row one */
            for (int32_t ky = lo; ky < hi; ++ky, row += step) {
                const int8_t *src = row + s0;
                td_widen_row(&src, src + row_bytes, &dst, off2, TD_PW_SHORT_ROWS);
            }
        } else {
            for (int32_t ky = lo; ky < hi; ++ky, row += step) {
                const int8_t *src = row + s0;
                for (int32_t i = 0; i < blocks; ++i, dst += words) {
                    const int32_t v = td_read_s8x4(src + 4 * i);
                    dst[0] = td_sxtab16(off2, v);
                    dst[1] = td_sxtab16_ror8(off2, v);
                }
            }
        }
    } else {
        const uint32_t padw = (uint32_t)(uint8_t)(-p->input_offset) * 0x01010101u;
        const int32_t contiguous = p->dilation_w == 1 && image_row >= 4;
        if (contiguous && blocks == 1 && s0 + 4 > 0 && s0 < image_row) {
            /* one block across a border (four taps of one channel: a first layer): the same
             * shifts for every kernel row, (LDR << l) >> r with the padding's lanes or'ed in */
            int32_t off = 0, l = 0, r = 0;
            uint32_t pad;
            if (s0 < 0) {
                l = 8 * -s0;
                pad = padw >> (32 - l);
            } else {
                off = image_row - 4;
                r = 32 - 8 * (image_row - s0);
                pad = padw << (8 * (image_row - s0));
            }
            for (int32_t ky = lo; ky < hi; ++ky, row += step, dst += words) {
                const uint32_t v = (((uint32_t)td_read_s8x4(row + off) << l) >> r) | pad;
                dst[0] = td_sxtab16(off2, (int32_t)v);
                dst[1] = td_sxtab16_ror8(off2, (int32_t)v);
            }
            td_zero_blocks(&dst, (fh - hi) * blocks, words);
            return;
        }
        for (int32_t ky = lo; ky < hi; ++ky, row += step) {
            for (int32_t i = 0; i < row_bytes; i += 4, dst += words) {
                const uint32_t v = td_gathered_block(p, row, ix0, i, padw);
                dst[0] = td_sxtab16(off2, (int32_t)v);
                dst[1] = td_sxtab16_ror8(off2, (int32_t)v);
            }
        }
    }
    td_zero_blocks(&dst, (fh - hi) * blocks, words);
}

/* The receptive fields of the next group of n (1..rows) output pixels, from (*b, *oy, *ox)
 * on (advanced to the next group's first), widened into the rows buffer buf of `rows` rows;
 * its rows n.. repeat row n - 1. */
static inline __attribute__((always_inline)) void
td_widen_group(const td_conv2d_params_t *p, const int8_t *in0, td_word_t *buf,
               int32_t rows, int32_t n, int32_t *b, int32_t *oy, int32_t *ox)
{
    const int32_t off2 = td_pack_off(p->input_offset);
    const int32_t image = p->in_h * p->in_w * p->in_c;
    for (int32_t j = 0; j < rows; ++j) {
        td_widen_window(p, in0 + *b * image, *oy * p->stride_h - p->pad_h,
                        *ox * p->stride_w - p->pad_w, buf + 2 * j, off2, 2 * rows);
        if (j < n - 1 || j == rows - 1) {
            td_next_pixel(p, b, oy, ox);
        }
    }
}

void td_conv2d_window_s8_dsp(const td_conv2d_params_t *p, const int8_t *in0, int8_t *out0)
{
    const int32_t k = p->filter_h * p->filter_w * p->in_c;
    const int32_t pixels = p->batches * p->out_h * p->out_w;
    td_pw_frame_t f;
    int32_t b = 0, oy = 0, ox = 0;
    for (int32_t px = 0; px < pixels; px += TD_GEMM_ROWS) {
        const int32_t n = pixels - px < TD_GEMM_ROWS ? pixels - px : TD_GEMM_ROWS;
        const int32_t rows = td_pw_rows_for(p, n);   /* five for a partial group */
        td_widen_group(p, in0, td_pw_rows(&f, k, rows), rows, n, &b, &oy, &ox);
        td_pw_product(p, k, &f, n, out0 + px * p->out_c);
    }
}

/* td_conv2d_window_frame_s8_dsp: the same windows for depths above TD_GEMM_STACK_DEPTH, with
 * the most rows (4, 3, 2 or 1) whose rows buffer fits the frame buffer (at least one: depth
 * <= 384, checked on the host), multiplied with every filter row by the C product
 * (td_rows_times_filter). No scratch and no im2col copy. */
static inline __attribute__((always_inline)) void
td_window_groups(const td_conv2d_params_t *p, const int8_t *in0, int8_t *out0, td_word_t *buf,
                 const int32_t rows)
{
    const int32_t k = p->filter_h * p->filter_w * p->in_c;
    const int32_t pixels = p->batches * p->out_h * p->out_w;
    int32_t b = 0, oy = 0, ox = 0;
    for (int32_t px = 0; px < pixels; px += rows) {
        const int32_t n = pixels - px < rows ? pixels - px : rows;
        td_widen_group(p, in0, buf, rows, n, &b, &oy, &ox);
        td_rows_times_filter(buf, n, p->filter, k, p->out_c, p->bias, p->mult, p->shift,
                             p->output_offset, p->act_min, p->act_max, out0 + px * p->out_c,
                             p->out_c, p->requant_form, rows);
    }
}

int32_t td_conv2d_window_frame_s8_dsp_scratch_size(const td_conv2d_params_t *p)
{
    (void)p;
    return 0;
}

void td_conv2d_window_frame_s8_dsp(const td_conv2d_params_t *p, const int8_t *in0,
                                   int8_t *out0)
{
    td_word_t buf[TD_GEMM_STACK_BYTES / 4];
    const int32_t blocks = td_blocks(p->filter_h * p->filter_w * p->in_c);
    const int32_t fit = TD_GEMM_STACK_BYTES / (8 * blocks);
    if (fit >= TD_IM2COL_ROWS) {
        td_window_groups(p, in0, out0, buf, TD_IM2COL_ROWS);
    } else if (fit == 3) {
        td_window_groups(p, in0, out0, buf, 3);
    } else if (fit == 2) {
        td_window_groups(p, in0, out0, buf, 2);
    } else {
        td_window_groups(p, in0, out0, buf, 1);
    }
}
