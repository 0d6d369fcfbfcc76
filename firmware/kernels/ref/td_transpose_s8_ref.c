/*
 * td_transpose_s8_ref.c - any permutation of up to 6 dimensions of an int8 tensor (a pure
 * copy). Serves TRANSPOSE, DEPTH_TO_SPACE and SPACE_TO_DEPTH: the host expresses each as
 * output dims plus, per output dim, the element stride of the input along it (the block
 * ops become 6-D permutations of their NHWC tensors seen with the block split out).
 * Output elements are written in row-major order. Not in place.
 */
#include "td_kernels.h"

void td_transpose_s8_ref(const td_transpose_params_t *p, const int8_t *in0, int8_t *out0)
{
    const int32_t *d = p->out_dims;
    const int32_t *s = p->in_strides;
    int8_t *out = out0;
    for (int32_t i0 = 0; i0 < d[0]; ++i0) {
        for (int32_t i1 = 0; i1 < d[1]; ++i1) {
            for (int32_t i2 = 0; i2 < d[2]; ++i2) {
                for (int32_t i3 = 0; i3 < d[3]; ++i3) {
                    for (int32_t i4 = 0; i4 < d[4]; ++i4) {
                        const int8_t *src = in0 + i0 * s[0] + i1 * s[1] + i2 * s[2]
                                            + i3 * s[3] + i4 * s[4];
                        for (int32_t i5 = 0; i5 < d[5]; ++i5) {
                            *out++ = src[i5 * s[5]];
                        }
                    }
                }
            }
        }
    }
}
