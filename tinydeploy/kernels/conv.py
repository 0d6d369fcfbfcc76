"""CONV_2D, int8 with per-channel (or per-tensor) weights: `td_conv2d_s8_ref`.

TFLM semantics (reference integer_ops/conv.h): for every output element, the int32 sum of
(input + input_offset) * filter over the taps inside the image (padding taps contribute
nothing), plus the int32 bias, requantized per output channel, plus the output zero point,
clamped to the fused activation range. Grouped convolution (input channels a multiple of
the filter's) is supported as TFLM does.
"""

from __future__ import annotations

from dataclasses import replace

from tinydeploy.kernels.access import conv_1x1_back_ref_order, conv_ref_order
from tinydeploy.kernels.common import (
    check_activation,
    check_conv_tensors,
    check_window_output,
    optional_input,
    padding_params,
    per_channel_requant,
    ref_variant,
)
from tinydeploy.kernels.registry import KernelCall, register
from tinydeploy.model.ir import Conv2DOptions, Graph, Operator


def _accepts(graph: Graph, op: Operator) -> str | None:
    opts = op.options
    if not isinstance(opts, Conv2DOptions):
        return "missing Conv2DOptions"
    r = check_conv_tensors(graph, op, "NHWC, OHWI", 0)
    if r:
        return r
    inp, filt = graph.tensor(op.inputs[0]), graph.tensor(op.inputs[1])
    out = graph.tensor(op.outputs[0])
    oc = filt.shape[0]
    c = inp.shape[3]
    fc = filt.shape[3]
    if fc <= 0 or c % fc:
        return f"input channels {c} are not a multiple of the filter's {fc}"
    if oc % (c // fc):
        return f"output channels {oc} are not a multiple of the {c // fc} groups"
    return check_activation(opts.activation, out) or check_window_output(
        out, opts.padding, inp.shape, (filt.shape[1], filt.shape[2]),
        (opts.stride_h, opts.stride_w), (opts.dilation_h, opts.dilation_w), oc)


def _prepare(graph: Graph, op: Operator) -> KernelCall:
    opts = op.options
    assert isinstance(opts, Conv2DOptions)
    inp, filt = graph.tensor(op.inputs[0]), graph.tensor(op.inputs[1])
    bias = optional_input(graph, op, 2)
    out = graph.tensor(op.outputs[0])
    n, h, w, c = inp.shape
    oc, fh, fw, fc = filt.shape
    _, oh, ow, _ = out.shape
    consts, act, pointers = per_channel_requant(inp, filt, bias, out, opts.activation, oc)
    params = (
        ("batches", n), ("in_h", h), ("in_w", w), ("in_c", c),
        ("out_h", oh), ("out_w", ow), ("out_c", oc),
        ("filter_h", fh), ("filter_w", fw), ("filter_c", fc),
        ("stride_h", opts.stride_h), ("stride_w", opts.stride_w),
        ("dilation_h", opts.dilation_h), ("dilation_w", opts.dilation_w),
        *padding_params((h, w), (fh, fw), (oh, ow), (opts.stride_h, opts.stride_w),
                        (opts.dilation_h, opts.dilation_w)),
        ("input_offset", -inp.zero_point), ("output_offset", out.zero_point),
        ("act_min", act[0]), ("act_max", act[1]), *pointers,
    )
    return KernelCall("td_conv2d_s8_ref", "td_conv2d_params_t", params, consts, ("in0", "out0"))


CONV2D_S8_REF = register(replace(
    ref_variant("CONV_2D", "td_conv2d_s8_ref", _accepts, _prepare, access=conv_ref_order),
    twins=("td_conv2d_1x1_back_s8_ref",)))


def _accepts_1x1(graph: Graph, op: Operator) -> str | None:
    why = _accepts(graph, op)
    if why is not None:
        return why
    inp, filt = graph.tensor(op.inputs[0]), graph.tensor(op.inputs[1])
    if filt.shape[1:3] != (1, 1):
        return f"filter is {filt.shape[1]}x{filt.shape[2]}, 1x1 required"
    if filt.shape[3] != inp.shape[3]:
        return f"grouped convolution ({inp.shape[3] // filt.shape[3]} groups)"
    return None


def _prepare_1x1_back(graph: Graph, op: Operator) -> KernelCall:
    return replace(_prepare(graph, op), symbol="td_conv2d_1x1_back_s8_ref")


# The same sums for a 1x1 layer, pixels back to front: never chosen by priority, put in the
# reference kernel's place by the planner when a pointwise output should trail its input.
CONV2D_1X1_BACK_S8_REF = register(replace(
    ref_variant("CONV_2D", "td_conv2d_1x1_back_s8_ref", _accepts_1x1, _prepare_1x1_back,
                access=conv_1x1_back_ref_order),
    priority=-1, twins=("td_conv2d_s8_ref",)))
