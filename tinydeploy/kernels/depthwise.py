"""DEPTHWISE_CONV_2D, int8 per-channel: `td_dwconv2d_s8_ref`.

TFLM semantics (reference integer_ops/depthwise_conv.h): output channel o = i * M + m reads
input channel i only (M = depth multiplier); taps outside the image are skipped; then bias,
per-channel requantization, output zero point and the activation clamp, as for CONV_2D.
"""

from __future__ import annotations

from tinydeploy.kernels.access import dwconv_ref_order
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
from tinydeploy.model.ir import DepthwiseConv2DOptions, Graph, Operator


def _accepts(graph: Graph, op: Operator) -> str | None:
    opts = op.options
    if not isinstance(opts, DepthwiseConv2DOptions):
        return "missing DepthwiseConv2DOptions"
    r = check_conv_tensors(graph, op, "NHWC, 1HWC", 3)
    if r:
        return r
    inp, filt = graph.tensor(op.inputs[0]), graph.tensor(op.inputs[1])
    out = graph.tensor(op.outputs[0])
    oc = filt.shape[3]
    c = inp.shape[3]
    if filt.shape[0] != 1:
        return f"filter '{filt.name}' has leading dimension {filt.shape[0]}, 1 required"
    if c == 0 or oc % c:
        return f"filter channels {oc} are not a multiple of the input channels {c}"
    if opts.depth_multiplier != oc // c:
        return (f"depth_multiplier {opts.depth_multiplier} does not match "
                f"{oc} filter channels / {c} input channels")
    return check_activation(opts.activation, out) or check_window_output(
        out, opts.padding, inp.shape, (filt.shape[1], filt.shape[2]),
        (opts.stride_h, opts.stride_w), (opts.dilation_h, opts.dilation_w), oc)


def _prepare(graph: Graph, op: Operator) -> KernelCall:
    opts = op.options
    assert isinstance(opts, DepthwiseConv2DOptions)
    inp, filt = graph.tensor(op.inputs[0]), graph.tensor(op.inputs[1])
    bias = optional_input(graph, op, 2)
    out = graph.tensor(op.outputs[0])
    n, h, w, c = inp.shape
    _, fh, fw, oc = filt.shape
    _, oh, ow, _ = out.shape
    consts, act, pointers = per_channel_requant(inp, filt, bias, out, opts.activation, oc)
    params = (
        ("batches", n), ("in_h", h), ("in_w", w), ("in_c", c),
        ("out_h", oh), ("out_w", ow), ("out_c", oc), ("depth_multiplier", oc // c),
        ("filter_h", fh), ("filter_w", fw),
        ("stride_h", opts.stride_h), ("stride_w", opts.stride_w),
        ("dilation_h", opts.dilation_h), ("dilation_w", opts.dilation_w),
        *padding_params((h, w), (fh, fw), (oh, ow), (opts.stride_h, opts.stride_w),
                        (opts.dilation_h, opts.dilation_w)),
        ("input_offset", -inp.zero_point), ("output_offset", out.zero_point),
        ("act_min", act[0]), ("act_max", act[1]), *pointers,
    )
    return KernelCall("td_dwconv2d_s8_ref", "td_dwconv2d_params_t", params, consts,
                      ("in0", "out0"))


DWCONV2D_S8_REF = register(ref_variant("DEPTHWISE_CONV_2D", "td_dwconv2d_s8_ref",
                                       _accepts, _prepare, access=dwconv_ref_order))
