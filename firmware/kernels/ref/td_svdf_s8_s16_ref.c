/*
 * td_svdf_s8_s16_ref.c - int8 SVDF with an int16 activation state and int16 time weights,
 * as TFLite Micro's integer reference (EvalIntegerSvdfReference<int16_t>); see
 * td_svdf_body.h for the steps.
 */
#define TD_SVDF_STATE_BITS 16
#include "td_svdf_body.h"

void td_svdf_s8_s16_ref(const td_svdf_params_t *p, const int8_t *in0, const int16_t *state,
                        int8_t *out0, void *scratch)
{
    td_svdf_body(p, in0, state, out0, scratch);
}
