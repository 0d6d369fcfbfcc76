/*
 * td_svdf_s8_s16_ref.c - int8 SVDF with an int16 activation state and int16 time weights,
 * as TFLite Micro's integer reference (EvalIntegerSvdfReference<int16_t>); see
 * td_svdf_body.h for the steps.
 */
#define TD_SVDF_NAME td_svdf_s8_s16_ref
#define TD_SVDF_STATE_T int16_t
#define TD_SVDF_STATE_MIN INT16_MIN
#define TD_SVDF_STATE_MAX INT16_MAX
#include "td_svdf_body.h"
