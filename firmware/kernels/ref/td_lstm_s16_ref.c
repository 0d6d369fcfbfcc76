/*
 * td_lstm_s16_ref.c - 16x8 UNIDIRECTIONAL_SEQUENCE_LSTM (int16 input, hidden state and
 * output with zero point 0, int8 weights, int64 bias, int16 cell state), bit-exact with
 * TFLite Micro's EvalLstm<int16, int8, int16, int64>; the step is td_lstm_body.h's (int64
 * gate accumulators requantized as TFLite's int64 MultiplyByQuantizedMultiplier).
 */
#include "td_kernels.h"

#define TD_ACCUM TD_ACCUM_S16
#include "td_lstm_body.h"

void td_lstm_s16_ref(const td_lstm_params_t *p, const int16_t *in0, const int16_t *hidden,
                     const int16_t *cell, int16_t *out0, void *scratch)
{
    td_lstm_body(p, in0, hidden, cell, out0, scratch);
}
