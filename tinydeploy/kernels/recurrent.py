"""Recurrent int8 ops with state kept between invocations: SVDF.

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
UNIDIRECTIONAL_SEQUENCE_LSTM is not supported yet (rejected with that reason by having no
variant).
"""

from __future__ import annotations

import numpy as np

from tinydeploy.kernels.activations import int8_per_tensor_reason
from tinydeploy.kernels.common import REF_DIR, f32
from tinydeploy.kernels.registry import ConstArray, KernelCall, KernelVariant, register
from tinydeploy.model.ir import DType, Graph, Operator, SVDFOptions, Tensor
from tinydeploy.quantize.fixedpoint import quantize_multiplier

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
    why = (int8_per_tensor_reason(x, "input") or int8_per_tensor_reason(out, "output")
           or int8_per_tensor_reason(wf, "weights_feature"))
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
    return KernelVariant(
        op="SVDF", impl="ref", symbol=symbol, sources=(f"{REF_DIR}/{symbol}.c",),
        requires=frozenset(), accepts=lambda g, o: _svdf_reason(g, o, dtype),
        prepare=lambda g, o: _prepare_svdf(g, o, symbol, ctype))


register(_svdf_variant("td_svdf_s8_s16_ref", DType.INT16, "int16_t"))
register(_svdf_variant("td_svdf_s8_s8_ref", DType.INT8, "int8_t"))
