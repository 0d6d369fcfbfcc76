/*
 * td_conv2d_1x1_back_s8_ref.c - reference int8 pointwise (1x1) convolution without groups,
 * output pixels taken from the last to the first; bit-exact with td_conv2d_s8_ref.
 *
 * out[b, y, x, o] = clamp(requant(sum over i of (in[b, y*sy, x*sx, i] + input_offset)
 *                   * filter[o, i] + bias[o], mult[o], shift[o]) + output_offset,
 *                   act_min, act_max), the same sums in the same order as td_conv2d_s8_ref.
 * Only the pixel order differs: every output pixel is computed after every later one, so
 * its input pixel, read while its outputs are written, is the lowest not yet overwritten;
 * the output may overlap the input shifted up by at least one pixel's outputs (the in-place
 * planner puts it there when the layer before, processed front to back, moved its own
 * output down). Parameters: td_conv2d_params_t with filter_h = filter_w = 1, filter_c =
 * in_c, no padding, any stride. No scratch memory.
 */
#include "td_kernels.h"

void td_conv2d_1x1_back_s8_ref(const td_conv2d_params_t *p, const int8_t *in0, int8_t *out0)
{
    const int32_t per_image = p->out_h * p->out_w;
    for (int32_t px = p->batches * per_image - 1; px >= 0; --px) {
        const int32_t b = px / per_image;
        const int32_t oy = (px - b * per_image) / p->out_w;
        const int32_t ox = px - b * per_image - oy * p->out_w;
        const int8_t *src =
            in0 + ((b * p->in_h + oy * p->stride_h) * p->in_w + ox * p->stride_w) * p->in_c;
        for (int32_t o = 0; o < p->out_c; ++o) {
            const int8_t *w = p->filter + o * p->in_c;
            int32_t acc = 0;
            for (int32_t i = 0; i < p->in_c; ++i) {
                acc += ((int32_t)src[i] + p->input_offset) * (int32_t)w[i];
            }
            if (p->bias != 0) {
                acc += p->bias[o];
            }
            acc = td_requantize(acc, p->mult[o], p->shift[o]) + p->output_offset;
            out0[px * p->out_c + o] = (int8_t)td_clamp_s32(acc, p->act_min, p->act_max);
        }
    }
}
