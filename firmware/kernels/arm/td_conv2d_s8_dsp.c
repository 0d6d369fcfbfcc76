/*
 * td_conv2d_s8_dsp.c - int8 2-D convolution (any kernel size, stride, dilation, padding and
 * channel count, one input channel included; no groups) as im2col + a SIMD matrix product,
 * bit-exact with td_conv2d_s8_ref.
 *
 * For each group of TD_IM2COL_ROWS (4) output pixels (flat batch, y, x order) the
 * receptive fields are copied into four int8 columns of k = filter_h * filter_w * in_c
 * bytes, in the filter's [ky][kx][i] order, widened with the input offset into the rows
 * buffer and multiplied with every int8 filter row (see td_gemm_s8_dsp.h). Taps outside the
 * image are filled with the input zero point (-input_offset), which widens to 0: exactly what
 * the reference's skipping of padded taps contributes. Scratch is a small multiple of k,
 * never of the input. A 1x1 filter (pointwise layers deeper than td_conv2d_1x1_s8_dsp's 64
 * channels) needs no im2col: the rows are widened from the input pixels in place.
 *
 * Parameters: td_conv2d_params_t as for td_conv2d_s8_ref with filter_c = in_c (no groups);
 * filter, bias, mult and shift are the reference's; requant_form as chosen on the host.
 * scratch: td_conv2d_s8_dsp_scratch_size(p) bytes (0 when the work fits the frame buffer),
 * 4-byte aligned, contents not preserved.
 *
 * td_conv2d_frame_s8_dsp: the same product for layers whose work of four rows exceeds the
 * frame buffer, with three, two or one row per pass so that it fits: no scratch at all, for
 * arenas with no room for it (the host's selector weighs the two). Requires the work of one
 * row to fit TD_GEMM_STACK_BYTES (checked on the host).
 */
#include "td_kernels.h"

#include "td_gemm_s8_dsp.h"

/* im2col column pitch: k rounded up to a multiple of 4 */
static int32_t td_col_pitch(const td_conv2d_params_t *p)
{
    return (p->filter_h * p->filter_w * p->in_c + 3) & ~3;
}

/* A 1x1 filter without padding reads each pixel's in_c input bytes in place: no im2col. */
static int32_t td_is_pointwise(const td_conv2d_params_t *p)
{
    return p->filter_h == 1 && p->filter_w == 1 && p->pad_h == 0 && p->pad_w == 0;
}

/* Rows buffer and im2col columns of `rows` rows (none for a pointwise layer). */
static int32_t td_conv_work_bytes(const td_conv2d_params_t *p, int32_t rows)
{
    return td_rows_bytes(rows, p->filter_h * p->filter_w * p->in_c)
           + (td_is_pointwise(p) ? 0 : rows * td_col_pitch(p));
}

/* The work is in the kernel's stack frame when it fits TD_GEMM_STACK_BYTES (the pointwise
 * kernels' frame buffer, so a build with both does not deepen its stack), else in arena
 * scratch; four rows, not the pointwise product's six: two thirds of the scratch. A first
 * layer (3x3 x 3 channels: 336 B) then takes no arena at the op where the model's input and
 * first output are both live. */
int32_t td_conv2d_s8_dsp_scratch_size(const td_conv2d_params_t *p)
{
    const int32_t need = td_conv_work_bytes(p, TD_IM2COL_ROWS);
    return need <= TD_GEMM_STACK_BYTES ? 0 : need;
}

/* Short copies and fills, inline (the C library's are calls with per-call set-up costing
 * more than the few bytes an im2col row moves). */
static inline void td_copy_s8(int8_t *dst, const int8_t *src, int32_t n)
{
    for (; n >= 4; n -= 4, dst += 4, src += 4) {
        memcpy(dst, src, 4);
    }
    for (; n > 0; --n) {
        *dst++ = *src++;
    }
}

static inline void td_fill_s8(int8_t *dst, int8_t v, int32_t n)
{
    const uint32_t word = (uint32_t)(uint8_t)v * 0x01010101u;
    for (; n >= 4; n -= 4, dst += 4) {
        memcpy(dst, &word, 4);
    }
    for (; n > 0; --n) {
        *dst++ = v;
    }
}

/* Copies the receptive field of output pixel (b, oy, ox) into col (k bytes). The parameters
 * are read into locals first: the int8 stores into col may alias *p as far as C knows, and
 * would otherwise force a reload of every field after each store. */
static void td_im2col(const td_conv2d_params_t *p, const int8_t *in0, int32_t b, int32_t oy,
                      int32_t ox, int8_t *col)
{
    const int8_t pad = (int8_t)(-p->input_offset);
    const int32_t c = p->in_c, in_h = p->in_h, in_w = p->in_w;
    const int32_t fh = p->filter_h, fw = p->filter_w, dh = p->dilation_h, dw = p->dilation_w;
    const int32_t row_bytes = fw * c;
    const int32_t iy0 = oy * p->stride_h - p->pad_h;
    const int32_t ix0 = ox * p->stride_w - p->pad_w;
    const int32_t inside_w = dw == 1 && ix0 >= 0 && ix0 + fw <= in_w;
    const int8_t *image = in0 + b * in_h * in_w * c;
    for (int32_t ky = 0; ky < fh; ++ky, col += row_bytes) {
        const int32_t iy = iy0 + ky * dh;
        if (iy < 0 || iy >= in_h) {
            td_fill_s8(col, pad, row_bytes);
            continue;
        }
        const int8_t *row = image + iy * in_w * c;
        if (inside_w) {
            td_copy_s8(col, row + ix0 * c, row_bytes);
            continue;
        }
        for (int32_t kx = 0; kx < fw; ++kx) {
            const int32_t ix = ix0 + kx * dw;
            if (ix < 0 || ix >= in_w) {
                td_fill_s8(col + kx * c, pad, c);
            } else {
                td_copy_s8(col + kx * c, row + ix * c, c);
            }
        }
    }
}

/* The groups of `rows` output pixels with the work (rows buffer, then the im2col columns)
 * at work. */
static inline __attribute__((always_inline)) void
td_conv_groups(const td_conv2d_params_t *p, const int8_t *in0, int8_t *out0, void *work,
               const int32_t rows)
{
    const int32_t k = p->filter_h * p->filter_w * p->in_c;
    const int32_t oc = p->out_c;
    const int32_t pixels = p->batches * p->out_h * p->out_w;
    td_word_t *buf = (td_word_t *)work;
    int8_t *col0 = (int8_t *)work + td_rows_bytes(rows, k);
    const int32_t pitch = td_col_pitch(p);
    const int32_t pointwise = td_is_pointwise(p);
    int32_t b = 0, oy = 0, ox = 0;
    for (int32_t px = 0; px < pixels; px += rows) {
        const int32_t n = pixels - px < rows ? pixels - px : rows;
        const int8_t *cols[TD_IM2COL_ROWS];
        for (int32_t j = 0; j < n; ++j) {
            if (pointwise) {
                cols[j] = td_pw_pixel(p, in0, b, oy, ox);
            } else {
                int8_t *col = col0 + j * pitch;
                td_im2col(p, in0, b, oy, ox, col);
                cols[j] = col;
            }
            td_next_pixel(p, &b, &oy, &ox);
        }
        td_extend_rows(cols, n, k, p->input_offset, buf, rows);
        td_rows_times_filter(buf, n, p->filter, k, oc, p->bias, p->mult, p->shift,
                             p->output_offset, p->act_min, p->act_max, out0 + px * oc, oc,
                             p->requant_form, rows);
    }
}

void td_conv2d_s8_dsp(const td_conv2d_params_t *p, const int8_t *in0, int8_t *out0,
                      void *scratch)
{
    td_word_t frame[TD_GEMM_STACK_BYTES / 4];
    const int32_t fits = td_conv_work_bytes(p, TD_IM2COL_ROWS) <= TD_GEMM_STACK_BYTES;
    td_conv_groups(p, in0, out0, fits ? (void *)frame : scratch, TD_IM2COL_ROWS);
}

/* td_conv2d_frame_s8_dsp: the layers whose work of four rows does not fit the frame, with
 * no scratch: the most rows (3, 2 or 1) whose work does (checked on the host: at least
 * one). Slower per multiply-accumulate than four rows in scratch, for arenas that have no
 * room for that scratch. */
static int32_t td_conv_frame_rows(const td_conv2d_params_t *p)
{
    int32_t rows = TD_IM2COL_ROWS - 1;
    while (rows > 1 && td_conv_work_bytes(p, rows) > TD_GEMM_STACK_BYTES) {
        --rows;
    }
    return rows;
}

int32_t td_conv2d_frame_s8_dsp_scratch_size(const td_conv2d_params_t *p)
{
    (void)p;
    return 0;
}

void td_conv2d_frame_s8_dsp(const td_conv2d_params_t *p, const int8_t *in0, int8_t *out0)
{
    td_word_t frame[TD_GEMM_STACK_BYTES / 4];
    const int32_t rows = td_conv_frame_rows(p);
    if (rows == 3) {
        td_conv_groups(p, in0, out0, frame, 3);
    } else if (rows == 2) {
        td_conv_groups(p, in0, out0, frame, 2);
    } else {
        td_conv_groups(p, in0, out0, frame, 1);
    }
}
