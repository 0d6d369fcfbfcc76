"""Recurrent int8 ops with state kept between invocations: SVDF and
UNIDIRECTIONAL_SEQUENCE_LSTM.

SVDF (TFLM's integer reference, ``EvalIntegerSvdfReference``): int8 input and output, int8
feature weights, int16 (``td_svdf_s8_s16_ref``) or int8 (``td_svdf_s8_s8_ref``) time weights
and activation state, int32 bias. The activation state (input 4) is a *variable tensor*:

* its bytes must persist across invocations, so the planner must keep it live for the whole
  program and never overlap it (``tinydeploy/plan/lifetimes.py`` does this for
  ``is_variable`` tensors);
* it must start at TFLM's reset value before the first invocation: the zero point for an int8
  state, 0 for an int16 one (the value is returned by `variable_reset_value`), whatever the
  arena held before;
* the kernel receives it as an input argument (``in4``) and writes through it.

The fused activation of the options is ignored, as TFLM's integer SVDF ignores it.

UNIDIRECTIONAL_SEQUENCE_LSTM (``td_lstm_s8_ref``): TFLM's integer LSTM with int8 input,
output, hidden state and weights, int16 cell state and int32 biases; no peephole, projection
or layer norm (TFLM rejects them too). Its hidden (input 18) and cell (input 19) states are
variable tensors with the same rules as SVDF's state. The gate non-linearities interpolate
TFLM's 256-entry 16-bit sigmoid table `SIGMOID_TABLE_Q16`; that table was measured from the
tflite-micro interpreter's 16-bit TANH (``tinydeploy.testing.probes.probe_sigmoid_table``,
re-run by the golden tests).
"""

from __future__ import annotations

import numpy as np

from tinydeploy.fixedpoint import quantize_multiplier
from tinydeploy.kernels.activations import int8_io_reason, int8_per_tensor_reason
from tinydeploy.kernels.common import REF_DIR, f32, int16_reason, ref_variant
from tinydeploy.kernels.registry import ConstArray, KernelCall, KernelVariant, register
from tinydeploy.model.ir import (
    Activation,
    DType,
    Graph,
    Operator,
    SequenceLSTMOptions,
    SVDFOptions,
    Tensor,
)

SVDF_STATE_INPUT = 4


def variable_reset_value(t: Tensor) -> int:
    """The value TFLM resets a variable tensor's elements to: the zero point for int8, else 0."""
    if t.dtype is DType.INT8 and t.quant is not None and t.quant.zero_point:
        return int(t.quant.zero_point[0])
    return 0


def svdf_multipliers(in_scale: float, feature_scale: float, state_scale: float,
                     time_scale: float, out_scale: float) -> tuple[int, int, int, int]:
    """(mult1, shift1, mult2, shift2) of TFLM's SVDF Prepare (in double from float32 scales)."""
    m1, s1 = quantize_multiplier(f32(in_scale) * f32(feature_scale) / f32(state_scale))
    m2, s2 = quantize_multiplier(f32(state_scale) * f32(time_scale) / f32(out_scale))
    return m1, s1, m2, s2


def _svdf_reason(graph: Graph, op: Operator, state_dtype: DType) -> str | None:
    ins, outs = graph.op_inputs(op), graph.op_outputs(op)
    if len(ins) != 5 or len(outs) != 1:
        return f"expects 5 inputs and 1 output, has {len(ins)} and {len(outs)}"
    x, wf, wt, bias, state = ins
    out = outs[0]
    opts = op.options if isinstance(op.options, SVDFOptions) else None
    if opts is None or opts.rank < 1:
        return "missing SVDFOptions or rank < 1"
    why = int8_io_reason(x, out) or int8_per_tensor_reason(wf, "weights_feature")
    if why:
        return why
    assert x is not None and wf is not None
    if wt is None or state is None:
        return "weights_time or activation state missing"
    if wt.dtype is not state_dtype or state.dtype is not state_dtype:
        return (f"time weights {wt.dtype.name} / state {state.dtype.name} (this variant: "
                f"{state_dtype.name})")
    for t, role in ((wt, "weights_time"), (state, "activation state")):
        if t.quant is None or len(t.quant.scale) != 1:
            return f"{role} '{t.name}' is not per-tensor quantized"
    if not state.is_variable:
        return f"activation state '{state.name}' is not a variable tensor"
    if not (wf.is_constant and wt.is_constant):
        return "feature and time weights must be constant"
    if bias is None:
        return "bias is missing (TFLM's integer SVDF reads its scale)"
    if bias.dtype is not DType.INT32 or not bias.is_constant:
        return f"bias '{bias.name}' must be a constant int32 tensor"
    bias_scale = bias.quant.scale[0] if bias.quant is not None and bias.quant.scale else 0.0
    assert state.quant is not None and wt.quant is not None
    expected = f32(f32(state.quant.scale[0]) * f32(wt.quant.scale[0]))
    if abs(f32(bias_scale) - expected) >= 1e-5:
        return (f"bias '{bias.name}' scale {bias_scale:g} is not state scale * time weights "
                f"scale ({expected:g}), as TFLM requires")
    if len(x.shape) != 2 or len(wf.shape) != 2 or len(wt.shape) != 2 or len(out.shape) != 2:
        return "input, weights and output must be 2-D"
    nb, ni = x.shape
    nf, nm = wt.shape
    if wf.shape != (nf, ni) or nf % opts.rank:
        return f"weights_feature {list(wf.shape)} does not fit input {list(x.shape)}"
    nu = nf // opts.rank
    if out.shape != (nb, nu) or bias.size != nu or state.size != nb * nm * nf:
        return "output, bias or state shape does not fit the weights"
    return None


def _prepare_svdf(graph: Graph, op: Operator, symbol: str, ctype: str) -> KernelCall:
    x, wf, wt, bias, state = graph.op_inputs(op)
    out = graph.op_outputs(op)[0]
    assert x is not None and wf is not None and wt is not None and state is not None
    assert bias is not None and wt.quant is not None and state.quant is not None
    assert isinstance(op.options, SVDFOptions)
    nb, ni = x.shape
    nf, nm = wt.shape
    nu = nf // op.options.rank
    m1, s1, m2, s2 = svdf_multipliers(x.scale, wf.scale, state.quant.scale[0],
                                      wt.quant.scale[0], out.scale)
    consts = [ConstArray("weights_feature", "int8_t", np.asarray(wf.data).reshape(-1)),
              ConstArray("weights_time", ctype, np.asarray(wt.data).reshape(-1)),
              ConstArray("bias", "int32_t", np.asarray(bias.data).reshape(-1))]
    params: tuple[tuple[str, int | float | str], ...] = (
        ("batches", nb), ("input_size", ni), ("num_filters", nf), ("num_units", nu),
        ("rank", op.options.rank), ("memory_size", nm), ("input_offset", -x.zero_point),
        ("state_zp", int(state.quant.zero_point[0])), ("output_offset", out.zero_point),
        ("mult1", m1), ("shift1", s1), ("mult2", m2), ("shift2", s2),
        ("weights_feature", "@weights_feature"), ("weights_time", "@weights_time"),
        ("bias", "@bias"))
    return KernelCall(symbol=symbol, params_type="td_svdf_params_t", params=params,
                      consts=tuple(consts), args=("in0", f"in{SVDF_STATE_INPUT}", "out0",
                                                  "scratch"),
                      scratch_bytes=4 * nb * (nf + nu))


def _svdf_variant(symbol: str, dtype: DType, ctype: str) -> KernelVariant:
    return ref_variant("SVDF", symbol, lambda g, o: _svdf_reason(g, o, dtype),
                       lambda g, o: _prepare_svdf(g, o, symbol, ctype),
                       headers=(f"{REF_DIR}/td_svdf_body.h",))


register(_svdf_variant("td_svdf_s8_s16_ref", DType.INT16, "int16_t"))
register(_svdf_variant("td_svdf_s8_s8_ref", DType.INT8, "int8_t"))


# --- UNIDIRECTIONAL_SEQUENCE_LSTM ----------------------------------------------------------

# sigmoid(i / 24) in Q0.16 as TFLM's 16-bit logistic/tanh interpolate it (see the docstring)
SIGMOID_TABLE_Q16: tuple[int, ...] = (
    32768, 33451, 34133, 34813, 35493, 36169, 36843, 37513, 38180, 38841, 39498, 40149, 40794,
    41432, 42064, 42688, 43304, 43912, 44511, 45102, 45683, 46255, 46817, 47369, 47911, 48443,
    48964, 49475, 49975, 50464, 50942, 51409, 51865, 52311, 52745, 53169, 53581, 53983, 54374,
    54755, 55125, 55485, 55834, 56174, 56503, 56823, 57133, 57433, 57724, 58007, 58280, 58544,
    58800, 59048, 59288, 59519, 59743, 59959, 60168, 60370, 60565, 60753, 60935, 61110, 61279,
    61441, 61599, 61750, 61896, 62036, 62172, 62302, 62428, 62549, 62666, 62778, 62886, 62990,
    63090, 63186, 63279, 63368, 63454, 63536, 63615, 63691, 63765, 63835, 63903, 63968, 64030,
    64090, 64148, 64204, 64257, 64308, 64357, 64405, 64450, 64494, 64536, 64576, 64614, 64652,
    64687, 64721, 64754, 64786, 64816, 64845, 64873, 64900, 64926, 64950, 64974, 64997, 65019,
    65039, 65060, 65079, 65097, 65115, 65132, 65149, 65164, 65179, 65194, 65208, 65221, 65234,
    65246, 65258, 65269, 65280, 65291, 65301, 65310, 65319, 65328, 65337, 65345, 65352, 65360,
    65367, 65374, 65381, 65387, 65393, 65399, 65404, 65410, 65415, 65420, 65425, 65429, 65433,
    65438, 65442, 65445, 65449, 65453, 65456, 65459, 65462, 65465, 65468, 65471, 65474, 65476,
    65479, 65481, 65483, 65485, 65488, 65489, 65491, 65493, 65495, 65497, 65498, 65500, 65501,
    65503, 65504, 65505, 65507, 65508, 65509, 65510, 65511, 65512, 65513, 65514, 65515, 65516,
    65517, 65517, 65518, 65519, 65520, 65520, 65521, 65522, 65522, 65523, 65523, 65524, 65524,
    65525, 65525, 65526, 65526, 65526, 65527, 65527, 65528, 65528, 65528, 65529, 65529, 65529,
    65529, 65530, 65530, 65530, 65530, 65531, 65531, 65531, 65531, 65531, 65532, 65532, 65532,
    65532, 65532, 65532, 65533, 65533, 65533, 65533, 65533, 65533, 65533, 65533, 65534, 65534,
    65534, 65534, 65534, 65534, 65534, 65534, 65534, 65534, 65535,
)

LSTM_INPUT, LSTM_HIDDEN, LSTM_CELL = 0, 18, 19
LSTM_IN_WEIGHTS = (1, 2, 3, 4)       # gates: input, forget, cell, output
LSTM_REC_WEIGHTS = (5, 6, 7, 8)
LSTM_BIASES = (12, 13, 14, 15)
LSTM_ABSENT = (9, 10, 11, 16, 17, 20, 21, 22, 23)
GATE_SCALE = 2.0 ** -12              # FC outputs, the inputs of the gate non-linearities
GATE_OUT_SCALE = 2.0 ** -15          # gate outputs


def _lstm_cell_tanh(cell_scale: float) -> tuple[int, int]:
    """(multiplier, right shift) TFLM's Tanh applies to the cell state: from the cell scale's
    power of two p, left shift 15 + p - 3, power-of-two case folded (multiplier 3 << shift)."""
    import math

    power = round(math.log2(cell_scale))
    shift = 15 + power - 3
    if shift < 0:
        return 3, -shift
    return 3 << shift, 0


def _lstm_reason(graph: Graph, op: Operator, wide: bool = False) -> str | None:
    """TFLM's checks of its integer LSTM; ``wide`` for the 16x8 kernel (int16 input, hidden
    state and output with zero point 0, int64 biases)."""
    ins, outs = graph.op_inputs(op), graph.op_outputs(op)
    if len(ins) != 24 or len(outs) != 1:
        return f"expects 24 inputs and 1 output, has {len(ins)} and {len(outs)}"
    opts = op.options
    if not isinstance(opts, SequenceLSTMOptions):
        return "missing UnidirectionalSequenceLSTMOptions"
    if opts.activation is not Activation.TANH:
        return f"cell activation {opts.activation.name} (supported: TANH)"
    for k in LSTM_ABSENT:
        if ins[k] is not None:
            return "peephole, projection and layer-norm LSTMs are not supported (nor by TFLM)"
    x, h, c, out = ins[LSTM_INPUT], ins[LSTM_HIDDEN], ins[LSTM_CELL], outs[0]
    if wide:
        why = int16_reason(x, "input") or int16_reason(out, "output") or \
            int16_reason(h, "hidden state")
    else:
        why = int8_io_reason(x, out) or int8_per_tensor_reason(h, "hidden state")
    if why:
        return why
    assert x is not None and h is not None
    if c is None or c.dtype is not DType.INT16 or c.quant is None or len(c.quant.scale) != 1:
        return "cell state must be a per-tensor quantized int16 tensor"
    import math

    if not (h.is_variable and c.is_variable):
        return "hidden and cell states must be variable tensors"
    lg = math.log2(c.quant.scale[0])
    if abs(lg - round(lg)) > 1e-3 or c.quant.zero_point[0] != 0:
        return (f"cell state scale {c.quant.scale[0]:g} is not a power of two with zero point "
                "0 (TFLM's integer LSTM assumes it)")
    if len(x.shape) != 3 or len(out.shape) != 3 or len(h.shape) != 2:
        return "input and output must be 3-D, the hidden state 2-D"
    n_state = h.shape[1]
    n_in = x.shape[2]
    batches = x.shape[1] if opts.time_major else x.shape[0]
    if h.shape[0] != batches or c.size != batches * n_state or out.shape[:2] != x.shape[:2] \
            or out.shape[2] != n_state:
        return "state or output shape does not fit the input"
    for k in LSTM_IN_WEIGHTS + LSTM_REC_WEIGHTS:
        w = ins[k]
        want = (n_state, n_in) if k in LSTM_IN_WEIGHTS else (n_state, n_state)
        if w is None or w.dtype is not DType.INT8 or not w.is_constant or w.shape != want:
            return f"weights {k} must be constant int8 {list(want)}"
        if w.quant is None or len(w.quant.scale) != 1 or w.quant.zero_point[0] != 0:
            return f"weights {k} '{w.name}' must be per-tensor symmetric"
    for k, wk in zip(LSTM_BIASES, LSTM_IN_WEIGHTS, strict=True):
        bias, w = ins[k], ins[wk]
        bias_type = DType.INT64 if wide else DType.INT32
        if bias is None or bias.dtype is not bias_type or not bias.is_constant or \
                bias.size != n_state:
            return f"bias {k} must be constant {bias_type.name.lower()} [{n_state}]"
        assert w is not None and w.quant is not None
        prod = f32(x.scale) * f32(w.quant.scale[0])
        bs = f32(bias.quant.scale[0]) if bias.quant is not None and bias.quant.scale else 0.0
        if abs(prod - bs) > 1e-6 * min(prod, bs):
            return (f"bias '{bias.name}' scale {bs:g} is not input scale * weights scale "
                    f"({prod:g}), as TFLM requires")
    return None


def _prepare_lstm(graph: Graph, op: Operator) -> KernelCall:
    ins = graph.op_inputs(op)
    x, h, c = ins[LSTM_INPUT], ins[LSTM_HIDDEN], ins[LSTM_CELL]
    assert x is not None and h is not None and c is not None and c.quant is not None
    assert isinstance(op.options, SequenceLSTMOptions)
    opts = op.options
    wide = x.dtype is DType.INT16
    bias_field = "bias64" if wide else "bias"
    n_state, n_in = h.shape[1], x.shape[2]
    batches, steps = (x.shape[1], x.shape[0]) if opts.time_major else (x.shape[0], x.shape[1])
    in_w, rec_w, bias = [], [], []
    in_m, in_s, rec_m, rec_s = [], [], [], []
    for kw, kr, kb in zip(LSTM_IN_WEIGHTS, LSTM_REC_WEIGHTS, LSTM_BIASES, strict=True):
        wi, wr, b = ins[kw], ins[kr], ins[kb]
        assert wi is not None and wr is not None and b is not None
        in_w.append(np.asarray(wi.data, dtype=np.int8).reshape(-1))
        rec_w.append(np.asarray(wr.data, dtype=np.int8).reshape(-1))
        bias.append(np.asarray(b.data, dtype=np.int64).reshape(-1))
        m, s = quantize_multiplier(f32(x.scale) * f32(wi.scale) / GATE_SCALE)
        in_m.append(m)
        in_s.append(s)
        m, s = quantize_multiplier(f32(h.scale) * f32(wr.scale) / GATE_SCALE)
        rec_m.append(m)
        rec_s.append(s)
    cell_scale = f32(c.quant.scale[0])
    forget = quantize_multiplier(GATE_OUT_SCALE * cell_scale / cell_scale)
    inp = quantize_multiplier(GATE_OUT_SCALE * GATE_OUT_SCALE / cell_scale)
    hid = quantize_multiplier(GATE_OUT_SCALE * GATE_OUT_SCALE / f32(h.scale))
    tanh_m, tanh_s = _lstm_cell_tanh(cell_scale)
    clip = 0
    if opts.cell_clip > 0:
        clip = int(min(max(f32(opts.cell_clip) / cell_scale, -32768.0), 32767.0))
    consts = (
        ConstArray("in_weights", "int8_t", np.concatenate(in_w)),
        ConstArray("rec_weights", "int8_t", np.concatenate(rec_w)),
        ConstArray(bias_field, "int64_t" if wide else "int32_t", np.concatenate(bias)),
        ConstArray("in_mult", "int32_t", np.array(in_m, dtype=np.int32)),
        ConstArray("in_shift", "int32_t", np.array(in_s, dtype=np.int32)),
        ConstArray("rec_mult", "int32_t", np.array(rec_m, dtype=np.int32)),
        ConstArray("rec_shift", "int32_t", np.array(rec_s, dtype=np.int32)),
        ConstArray("sigmoid_lut", "uint16_t", np.array(SIGMOID_TABLE_Q16, dtype=np.uint16)),
    )
    params: tuple[tuple[str, int | float | str], ...] = (
        ("batches", batches), ("time_steps", steps), ("input_size", n_in),
        ("state_size", n_state), ("time_major", int(opts.time_major)),
        ("input_offset", -x.zero_point), ("hidden_offset", -h.zero_point),
        ("hidden_zp", h.zero_point), ("in_weights", "@in_weights"),
        ("rec_weights", "@rec_weights"), (bias_field, f"@{bias_field}"),
        ("in_mult", "@in_mult"),
        ("in_shift", "@in_shift"), ("rec_mult", "@rec_mult"), ("rec_shift", "@rec_shift"),
        ("forget_mult", forget[0]), ("forget_shift", forget[1]),
        ("input_mult", inp[0]), ("input_shift", inp[1]),
        ("hidden_mult", hid[0]), ("hidden_shift", hid[1]),
        ("cell_tanh_mult", tanh_m), ("cell_tanh_shift", tanh_s), ("cell_clip", clip),
        ("sigmoid_lut", "@sigmoid_lut"))
    return KernelCall(symbol="td_lstm_s16_ref" if wide else "td_lstm_s8_ref",
                      params_type="td_lstm_params_t", params=params,
                      consts=consts,
                      args=("in0", f"in{LSTM_HIDDEN}", f"in{LSTM_CELL}", "out0", "scratch"),
                      scratch_bytes=2 * 5 * n_state)


register(ref_variant("UNIDIRECTIONAL_SEQUENCE_LSTM", "td_lstm_s8_ref", _lstm_reason,
                     _prepare_lstm))
register(ref_variant("UNIDIRECTIONAL_SEQUENCE_LSTM", "td_lstm_s16_ref",
                     lambda g, o: _lstm_reason(g, o, wide=True), _prepare_lstm))
