/*
 * td_dwconv2d_c1_s8_dsp.c - int8 depthwise convolution of ONE input channel with any depth
 * multiplier M (out_c = M: in effect a convolution with M output channels), any kernel size,
 * stride, padding and dilation, with the DSP extension and no scratch; bit-exact with
 * td_dwconv2d_s8_ref. (TFLM's micro_speech model: 10x8 kernel, stride 2, M = 8.)
 *
 * Output channels go four at a time (a group). For an output pixel whose kernel rows lie
 * whole inside the image (dilation_w = 1), each kernel row is a run of contiguous input
 * bytes: four of them are one LDR, widened with the input offset by SXTAB16 / SXTAB16 ROR #8
 * once for the four channels, whose four filter values each are one LDR and two SXTB16,
 * accumulated by two SMLAD (one asm loop: 23 instructions per 16 multiply-accumulates). The
 * filter is regrouped on the host so that this loop reads it front to back (below). Rows
 * clipped at the left or right border, other dilations and the last M % 4 channels take the
 * taps one by one (taps outside the image are skipped, as in the reference).
 *
 * Parameters: td_dwconv2d_params_t as for td_dwconv2d_s8_ref with in_c = 1, and
 *   filter: int8, the model's [1][kh][kw][M] bytes regrouped per group of four channels
 *           (group g: channels 4g .. 4g+3, at 4g * kh * kw), with F = kw / 4, T = kw % 4:
 *           per kernel row ky (4 * kw bytes): F blocks [4 channels][4 taps], then when T >= 2
 *           taps 4F, 4F+1 as two words [c0 t0, c1 t0, c0 t1, c1 t1][c2 t0, c3 t0, c2 t1, c3 t1]
 *           (SXTB16 pairs one channel's two taps), then when T is odd the last tap as
 *           [c0, c1, c2, c3]; the last M % 4 channels as [channel][kh][kw];
 *   bias, mult, shift: the reference's; requant_form as chosen on the host. No scratch.
 */
#include "td_kernels.h"

#include "td_dot4_s8_dsp.h"
#include "td_dwconv2d_dsp.h"
#include "td_simd.h"

int32_t td_dwconv2d_c1_s8_dsp_scratch_size(const td_dwconv2d_params_t *p)
{
    (void)p;
    return 0;
}

/* Offset of tap kx of channel j (< 4) in one kernel row of a whole group (layout above). */
static inline int32_t td_c1_tap(int32_t kx, int32_t j, int32_t fw)
{
    const int32_t f4 = fw & ~3, r = kx - f4;
    if (r < 0) {
        return (kx >> 2) * 16 + j * 4 + (kx & 3);
    }
    if (r < 2 && fw - f4 >= 2) {
        return 4 * f4 + (j >> 1) * 4 + (j & 1) + 2 * r;
    }
    return 4 * f4 + (fw - f4 >= 2 ? 8 : 0) + j;
}

/* a[0..3] += one block of four taps: xv the four input bytes (a tap outside the image holds
 * the input zero point, which widens to 0), *w its [4 channels][4 taps] (advanced). */
static inline __attribute__((always_inline)) void
td_c1_block(int32_t xv, const int8_t **wp, int32_t off2, int32_t a[4])
{
    const int8_t *w = *wp;
    const int32_t xe = td_sxtab16(off2, xv), xo = td_sxtab16_ror8(off2, xv);
    for (int32_t j = 0; j < 4; ++j) {
        const int32_t v = td_read_s8x4(w + 4 * j);
        a[j] = td_smlad(xo, td_sxtb16_ror8(v), td_smlad(xe, td_sxtb16(v), a[j]));
    }
    *wp = w + 16;
}

/* The four input bytes of a block whose taps [s, e) (0 <= s < e <= 4) are inside the row:
 * those read from x + s .. x + e - 1 (no byte outside), the others the zero point zpw. */
static inline int32_t td_c1_masked(const int8_t *x, int32_t s, int32_t e, uint32_t zpw)
{
    uint32_t v = 0;
    for (int32_t i = s; i < e; ++i) {
        v |= (uint32_t)(uint8_t)x[i] << (8 * i);
    }
    const uint32_t mask = (e == 4 ? 0xFFFFFFFFu : (1u << (8 * e)) - 1u) & ~((1u << (8 * s)) - 1u);
    return (int32_t)(v | (zpw & ~mask));
}

/* a[0..3] += one kernel row of a whole group: x the input at tap 0 of the row (only taps
 * [kx0, kx1) are read), w the row's filter bytes (layout above); dilation_w = 1. */
static inline __attribute__((always_inline)) void
td_c1_row(const int8_t *x, const int8_t *w, int32_t kx0, int32_t kx1, int32_t fw, int32_t off,
          int32_t off2, uint32_t zpw, int32_t a[4])
{
    const int32_t f4 = fw & ~3, tail = fw - f4;
    const int32_t bend = kx1 < f4 ? kx1 : f4;     /* taps [kx0, bend) lie in the blocks */
    int32_t q = kx0 >> 2;
    const int8_t *wb = w + 16 * q;
    if (kx0 < bend) {
        const int32_t qe = bend >> 2;                /* blocks [q0, qe) wholly inside */
        if (kx0 & 3) {
            const int32_t e = bend - 4 * q < 4 ? bend - 4 * q : 4;
            td_c1_block(td_c1_masked(x + 4 * q, kx0 & 3, e, zpw), &wb, off2, a);
            ++q;
        }
        if (q < qe) {
            td_dot4_blocks(x + 4 * q, &wb, qe - q, off2, a);
            q = qe;
        }
        if (4 * q < bend) {
            td_c1_block(td_c1_masked(x + 4 * q, 0, bend - 4 * q, zpw), &wb, off2, a);
        }
    }
    if (tail == 0 || kx1 <= f4) {
        return;
    }
    const int8_t *wt = w + 4 * f4, *xt = x + f4;
    int32_t r = 0;
    if (tail >= 2) {
        if (kx0 <= f4 && kx1 >= f4 + 2) {
            /* (x0, x1) with the offset, against (t0, t1) per channel */
            uint16_t h;
            memcpy(&h, xt, sizeof h);
            const int32_t xp =
                td_sxtab16(off2, (int32_t)(h | ((uint32_t)h << 8 & 0x00FF0000u)));
            const int32_t v0 = td_read_s8x4(wt), v1 = td_read_s8x4(wt + 4);
            a[0] = td_smlad(xp, td_sxtb16(v0), a[0]);
            a[1] = td_smlad(xp, td_sxtb16_ror8(v0), a[1]);
            a[2] = td_smlad(xp, td_sxtb16(v1), a[2]);
            a[3] = td_smlad(xp, td_sxtb16_ror8(v1), a[3]);
        } else {
            for (int32_t t = 0; t < 2; ++t) {
                if (f4 + t >= kx0 && f4 + t < kx1) {
                    const int32_t xv = xt[t] + off;
                    a[0] += xv * wt[2 * t];
                    a[1] += xv * wt[2 * t + 1];
                    a[2] += xv * wt[2 * t + 4];
                    a[3] += xv * wt[2 * t + 5];
                }
            }
        }
        wt += 8;
        r = 2;
    }
    if ((tail & 1) && fw - 1 >= kx0 && fw - 1 < kx1) {
        const int32_t xv = xt[r] + off;
        a[0] += xv * wt[0];
        a[1] += xv * wt[1];
        a[2] += xv * wt[2];
        a[3] += xv * wt[3];
    }
}

static void
td_c1_body(const td_dwconv2d_params_t *p, const int8_t *in0, int8_t *out0, const int round_form,
           const int full_range)
{
    const int32_t m_count = p->out_c, m4 = m_count & ~3;
    const int32_t fh = p->filter_h, fw = p->filter_w, dh = p->dilation_h, dw = p->dilation_w;
    const int32_t in_h = p->in_h, in_w = p->in_w, taps = fh * fw, tail = fw & 3;
    const int32_t off = p->input_offset, off2 = td_pack_off(off);
    const uint32_t zpw = 0x01010101u * (uint8_t)(int8_t)(-off);
    const int32_t out_off = p->output_offset, lo = p->act_min, hi = p->act_max;
    const int32_t zp2p1 = 2 * out_off + 1;
    const int32_t *bias = p->bias, *mult = p->mult;
    const int8_t *shift = p->shift;
    int8_t *dst = out0;
    for (int32_t b = 0; b < p->batches; ++b) {
        const int8_t *image = in0 + b * in_h * in_w;
        for (int32_t oy = 0; oy < p->out_h; ++oy) {
            td_dw_window_t win;
            td_dw_rows(p, oy, &win);
            for (int32_t ox = 0; ox < p->out_w; ++ox, dst += m_count) {
                td_dw_cols(p, ox, &win);
                const int32_t iy0 = win.iy0, ix0 = win.ix0, ky0 = win.ky0, ky1 = win.ky1;
                const int32_t kx0 = win.kx0, kx1 = win.kx1;
                for (int32_t m = 0; m < m_count; m += 4) {
                    const int32_t cnt = m < m4 ? 4 : m_count - m;
                    const int8_t *wg = p->filter + m * taps;
                    int32_t a[4] = { 0, 0, 0, 0 };
                    if (bias != 0) {
                        a[0] = bias[m];
                        a[1] = cnt > 1 ? bias[m + 1] : 0;
                        a[2] = cnt > 2 ? bias[m + 2] : 0;
                        a[3] = cnt > 3 ? bias[m + 3] : 0;
                    }
                    if (dw == 1 && cnt == 4 && kx0 == 0 && kx1 == fw && tail == 0) {
                        /* whole rows of whole blocks: one asm loop over all of them */
                        if (ky1 > ky0) {
                            const int8_t *w = wg + ky0 * 4 * fw;
                            td_dot4_runs(image + (iy0 + ky0 * dh) * in_w + ix0, &w,
                                         ky1 - ky0, fw, dh * in_w, off2, a);
                        }
                    } else if (dw == 1 && cnt == 4) {
                        for (int32_t ky = ky0; ky < ky1; ++ky) {
                            td_c1_row(image + (iy0 + ky * dh) * in_w + ix0, wg + ky * 4 * fw,
                                      kx0, kx1, fw, off, off2, zpw, a);
                        }
                    } else {
                        /* tap by tap: dilation_w > 1 (whole groups) or the last M % 4
                         * channels ([channel][kh][kw]) */
                        for (int32_t ky = ky0; ky < ky1; ++ky) {
                            const int8_t *x = image + (iy0 + ky * dh) * in_w + ix0;
                            for (int32_t kx = kx0; kx < kx1; ++kx) {
                                const int32_t xv = x[kx * dw] + off;
                                for (int32_t j = 0; j < cnt; ++j) {
                                    const int32_t t = cnt == 4
                                        ? ky * 4 * fw + td_c1_tap(kx, j, fw)
                                        : j * taps + ky * fw + kx;
                                    a[j] += xv * wg[t];
                                }
                            }
                        }
                    }
                    for (int32_t j = 0; j < cnt; ++j) {
                        dst[m + j] = td_dw_out(a[j], mult[m + j], shift[m + j], zp2p1, out_off,
                                               lo, hi, round_form, full_range);
                    }
                }
            }
        }
    }
}

void td_dwconv2d_c1_s8_dsp(const td_dwconv2d_params_t *p, const int8_t *in0, int8_t *out0)
{
    /* one body (kh * kw multiply-accumulates per output: the requantization form is a
     * branch per output, not worth a specialised copy of the code) */
    td_c1_body(p, in0, out0, p->requant_form != 0,
               p->act_min == INT8_MIN && p->act_max == INT8_MAX);
}
