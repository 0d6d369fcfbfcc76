/*
 * td_lstm_s8_ref.c - int8 UNIDIRECTIONAL_SEQUENCE_LSTM (8-bit activations and weights,
 * 16-bit cell state), bit-exact with TFLite Micro's integer LSTM (lstm_eval.h); the step is
 * td_lstm_body.h's (int32 accumulators, int32 bias).
 */
#include "td_kernels.h"

#define TD_ACCUM TD_ACCUM_S8
#include "td_lstm_body.h"

void td_lstm_s8_ref(const td_lstm_params_t *p, const int8_t *in0, const int8_t *hidden,
                    const int16_t *cell, int8_t *out0, void *scratch)
{
    td_lstm_body(p, in0, hidden, cell, out0, scratch);
}
