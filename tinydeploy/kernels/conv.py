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
    check_conv_op,
    check_conv_tensors,
    conv_call_s8,
    groups_reason,
    ref_variant,
)
from tinydeploy.kernels.registry import KernelCall, register
from tinydeploy.model.ir import Conv2DOptions, Graph, Operator


def _accepts(graph: Graph, op: Operator) -> str | None:
    return check_conv_op(graph, op, Conv2DOptions,
                         lambda g, o: check_conv_tensors(g, o, "NHWC, OHWI", 0), groups_reason)


def _prepare(graph: Graph, op: Operator) -> KernelCall:
    return conv_call_s8(graph, op, "td_conv2d_s8_ref", "td_conv2d_params_t")


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
