"""FULLY_CONNECTED, int8 with per-tensor or per-channel weights: `td_fully_connected_s8_ref`.

TFLM semantics (reference integer_ops/fully_connected.h): the input is seen as
[batches, accum_depth] with batches = output elements / output features (so keep_num_dims
and inputs of any rank reduce to the same loop); each output is the int32 sum of
(input + input_offset) * (filter + filter_offset) plus bias, requantized (one multiplier for
per-tensor weights, one per output feature for per-channel weights: this tflite-micro build
supports both for int8), plus the output zero point, clamped to the activation range. The
kernel always reads per-feature arrays; per-tensor models repeat the one value, which gives
the same bytes.

`check_fc_op` is the op's one `accepts` skeleton; the 16x8 variant (`int16`) runs it with its
own type and weight checks, so both variants refuse a model for the same reason.
"""

from __future__ import annotations

from collections.abc import Callable

from tinydeploy.kernels.common import (
    INT8_MAX,
    INT8_MIN,
    check_activation,
    check_bias,
    check_filter,
    check_io_int8,
    check_requant,
    first_reason,
    per_channel_requant,
    ref_variant,
    weighted_tensors,
)
from tinydeploy.kernels.registry import KernelCall, register
from tinydeploy.model.ir import FullyConnectedOptions, Graph, Operator, Tensor

IoReason = Callable[[Tensor, Tensor], str | None]
WeightsReason = Callable[[FullyConnectedOptions, Tensor, Tensor | None], str | None]


def check_fc_op(graph: Graph, op: Operator, io_reason: IoReason,
                weights_reason: WeightsReason,
                limits: tuple[int, int] = (INT8_MIN, INT8_MAX)) -> str | None:
    """The `accepts` of FULLY_CONNECTED (int8 and 16x8), in this order: its options with
    unshuffled weights, ``io_reason`` (input and output types), a 2-D [out, in] filter,
    ``weights_reason`` (filter, bias and the variant's own limits), an output ending with the
    filter's output features and an input of ``batches x in`` elements, then a fused
    activation with a clamp form for an output spanning ``limits``."""
    opts = op.options
    if not isinstance(opts, FullyConnectedOptions):
        return "missing FullyConnectedOptions"
    if opts.weights_format != 0:
        return f"weights format {opts.weights_format} (shuffled) is not supported"
    inp, filt, bias, out = weighted_tensors(graph, op)
    why = io_reason(inp, out)
    if why:
        return why
    if len(filt.shape) != 2:
        return f"filter '{filt.name}' must be 2-D [out, in], has shape {filt.shape}"
    oc, depth = filt.shape
    why = weights_reason(opts, filt, bias)
    if why:
        return why
    if not out.shape or out.shape[-1] != oc:
        return f"output shape {out.shape} does not end with the {oc} output features"
    batches = out.size // oc if oc else 0
    if inp.size != batches * depth:
        return (f"input has {inp.size} elements, {batches} batches x {depth} features "
                "expected")
    return check_activation(opts.activation, out, limits) or check_requant(inp, filt, out, oc)


def _weights_reason(opts: FullyConnectedOptions, filt: Tensor, bias: Tensor | None
                    ) -> str | None:
    """None when filter and bias suit the int8 kernel: per-tensor, or per-channel with zero
    zero points (the kernel applies one filter offset for all features)."""
    oc = filt.shape[0]
    r = first_reason(check_filter(filt, oc, 0), check_bias(bias, oc))
    if r:
        return r
    assert filt.quant is not None
    if filt.quant.per_channel and any(z != 0 for z in filt.quant.zero_point):
        return f"per-channel filter '{filt.name}' has non-zero zero points"
    return None


def _accepts(graph: Graph, op: Operator) -> str | None:
    return check_fc_op(graph, op, check_io_int8, _weights_reason)


def _prepare(graph: Graph, op: Operator) -> KernelCall:
    opts = op.options
    assert isinstance(opts, FullyConnectedOptions)
    inp, filt, bias, out = weighted_tensors(graph, op)
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
    batches = out.size // oc
    return KernelCall("td_fully_connected_s8_ref", "td_fully_connected_params_t", params,
                      consts, ("in0", "out0"),
                      instructions=round(FC_REF_COST[0] * batches * oc * depth
                                         + FC_REF_COST[1] * batches * oc))


# The reference kernel's instructions per multiply-accumulate and per output (its
# requantization) beside the call's, fitted on QEMU mps2-an386 (-icount, -O2) to the test MLP's
# 20 -> 32 and 32 -> 16 layers (8,360 and 6,120 measured with the call) and the small DS-CNN's
# classifier 16 -> 12 (2,720; estimated 2,590)
FC_REF_COST = (9.45, 64.0)


FULLY_CONNECTED_S8_REF = register(ref_variant("FULLY_CONNECTED", "td_fully_connected_s8_ref",
                                              _accepts, _prepare))
