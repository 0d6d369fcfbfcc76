/*
 * td_svdf_s8_s8_ref.c - int8 SVDF with an int8 activation state and int8 time weights, as
 * TFLite Micro's integer reference (EvalIntegerSvdfReference<int8_t>); see td_svdf_body.h
 * for the steps.
 */
#define TD_SVDF_NAME td_svdf_s8_s8_ref
#define TD_SVDF_STATE_T int8_t
#define TD_SVDF_STATE_MIN INT8_MIN
#define TD_SVDF_STATE_MAX INT8_MAX
#include "td_svdf_body.h"
