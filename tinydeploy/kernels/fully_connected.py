"""FULLY_CONNECTED, int8 with per-tensor or per-channel weights: `td_fully_connected_s8_ref`.

TFLM semantics (reference integer_ops/fully_connected.h): the input is seen as
[batches, accum_depth] with batches = output elements / output features (so keep_num_dims
and inputs of any rank reduce to the same loop); each output is the int32 sum of
(input + input_offset) * (filter + filter_offset) plus bias, requantized (one multiplier for
per-tensor weights, one per output feature for per-channel weights: this tflite-micro build
supports both for int8), plus the output zero point, clamped to the activation range. The
kernel always reads per-feature arrays; per-tensor models repeat the one value, which gives
the same bytes.
"""

from __future__ import annotations

from tinydeploy.kernels.common import (
    check_activation,
    check_bias,
    check_filter,
    check_io_int8,
    first_reason,
    optional_input,
    per_channel_requant,
    ref_variant,
)
from tinydeploy.kernels.registry import KernelCall, register
from tinydeploy.model.ir import FullyConnectedOptions, Graph, Operator


def _accepts(graph: Graph, op: Operator) -> str | None:
    opts = op.options
    if not isinstance(opts, FullyConnectedOptions):
        return "missing FullyConnectedOptions"
    if opts.weights_format != 0:
        return f"weights format {opts.weights_format} (shuffled) is not supported"
    inp, filt = graph.tensor(op.inputs[0]), graph.tensor(op.inputs[1])
    out = graph.tensor(op.outputs[0])
    r = check_io_int8(inp, out)
    if r:
        return r
    if len(filt.shape) != 2:
        return f"filter '{filt.name}' must be 2-D [out, in], has shape {filt.shape}"
    oc, depth = filt.shape
    r = first_reason(check_filter(filt, oc, 0), check_bias(optional_input(graph, op, 2), oc))
    if r:
        return r
    assert filt.quant is not None
    if filt.quant.per_channel and any(z != 0 for z in filt.quant.zero_point):
        return f"per-channel filter '{filt.name}' has non-zero zero points"
    if not out.shape or out.shape[-1] != oc:
        return f"output shape {out.shape} does not end with the {oc} output features"
    batches = out.size // oc if oc else 0
    if inp.size != batches * depth:
        return (f"input has {inp.size} elements, {batches} batches x {depth} features "
                "expected")
    return check_activation(opts.activation, out)


def _prepare(graph: Graph, op: Operator) -> KernelCall:
    opts = op.options
    assert isinstance(opts, FullyConnectedOptions)
    inp, filt = graph.tensor(op.inputs[0]), graph.tensor(op.inputs[1])
    bias = optional_input(graph, op, 2)
    out = graph.tensor(op.outputs[0])
    oc, depth = filt.shape
    consts, act, pointers = per_channel_requant(inp, filt, bias, out, opts.activation, oc)
    assert filt.quant is not None   # accepts() checked it
    filter_offset = 0 if filt.quant.per_channel else -filt.quant.zero_point[0]
    params = (
        ("batches", out.size // oc), ("accum_depth", depth), ("out_c", oc),
        ("input_offset", -inp.zero_point), ("filter_offset", filter_offset),
        ("output_offset", out.zero_point), ("act_min", act[0]), ("act_max", act[1]),
        *pointers,
    )
    return KernelCall("td_fully_connected_s8_ref", "td_fully_connected_params_t", params,
                      consts, ("in0", "out0"))


FULLY_CONNECTED_S8_REF = register(ref_variant("FULLY_CONNECTED", "td_fully_connected_s8_ref",
                                              _accepts, _prepare))
