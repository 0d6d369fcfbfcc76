/*
 * td_pad_s8_ref.c - int8 PAD / PADV2 (constant padding), as TFLite Micro's reference.
 *
 * The output is filled with the pad value, then each innermost input row is copied to its
 * place (td_pad_body.h). Shapes are right-aligned to TD_PAD_DIMS dims on the host. Not in
 * place.
 */
#include "td_kernels.h"

#define TD_ELEM_T int8_t
#include "td_pad_body.h"

void td_pad_s8_ref(const td_pad_params_t *p, const int8_t *in0, int8_t *out0)
{
    td_pad_body(p, in0, out0);
}
