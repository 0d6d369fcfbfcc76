/*
 * td_transpose_s8_ref.c - any permutation of up to 6 dimensions of an int8 tensor (a pure
 * copy). Serves TRANSPOSE, DEPTH_TO_SPACE and SPACE_TO_DEPTH: the host expresses each as
 * output dims plus, per output dim, the element stride of the input along it (the block
 * ops become 6-D permutations of their NHWC tensors seen with the block split out).
 * The loop is td_transpose_body.h's. Not in place.
 */
#include "td_kernels.h"

#define TD_ELEM_T int8_t
#include "td_transpose_body.h"

void td_transpose_s8_ref(const td_transpose_params_t *p, const int8_t *in0, int8_t *out0)
{
    td_transpose_body(p, in0, out0);
}
