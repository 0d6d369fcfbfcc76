"""DEPTHWISE_CONV_2D, int8 per-channel: `td_dwconv2d_s8_ref`.

TFLM semantics (reference integer_ops/depthwise_conv.h): output channel o = i * M + m reads
input channel i only (M = depth multiplier); taps outside the image are skipped; then bias,
per-channel requantization, output zero point and the activation clamp, as for CONV_2D.
"""

from __future__ import annotations

from tinydeploy.kernels.access import dwconv_ref_order
from tinydeploy.kernels.common import (
    check_conv_op,
    check_conv_tensors,
    conv_call_s8,
    depth_multiplier_reason,
    ref_variant,
)
from tinydeploy.kernels.registry import KernelCall, register
from tinydeploy.model.ir import DepthwiseConv2DOptions, Graph, Operator


def _accepts(graph: Graph, op: Operator) -> str | None:
    return check_conv_op(graph, op, DepthwiseConv2DOptions,
                         lambda g, o: check_conv_tensors(g, o, "NHWC, 1HWC", 3),
                         depth_multiplier_reason)


def _prepare(graph: Graph, op: Operator) -> KernelCall:
    return conv_call_s8(graph, op, "td_dwconv2d_s8_ref", "td_dwconv2d_params_t")


DWCONV2D_S8_REF = register(ref_variant("DEPTHWISE_CONV_2D", "td_dwconv2d_s8_ref",
                                       _accepts, _prepare, access=dwconv_ref_order))
