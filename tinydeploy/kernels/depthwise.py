"""DEPTHWISE_CONV_2D, int8 per-channel: `td_dwconv2d_s8_ref`.

TFLM semantics (reference integer_ops/depthwise_conv.h): output channel o = i * M + m reads
input channel i only (M = depth multiplier); taps outside the image are skipped; then bias,
per-channel requantization, output zero point and the activation clamp, as for CONV_2D.
"""

from __future__ import annotations

import numpy as np

from tinydeploy.kernels.common import (
    REF_DIR,
    activation_range,
    check_int8_tensor,
    compute_out_size,
    compute_padding,
    first_reason,
    optional_input,
    per_channel_multipliers,
)
from tinydeploy.kernels.conv import check_bias, check_filter
from tinydeploy.kernels.registry import ConstArray, KernelCall, KernelVariant, register
from tinydeploy.model.ir import DepthwiseConv2DOptions, Graph, Operator


def _accepts(graph: Graph, op: Operator) -> str | None:
    opts = op.options
    if not isinstance(opts, DepthwiseConv2DOptions):
        return "missing DepthwiseConv2DOptions"
    inp, filt = graph.tensor(op.inputs[0]), graph.tensor(op.inputs[1])
    out = graph.tensor(op.outputs[0])
    r = first_reason(check_int8_tensor(inp, "input"), check_int8_tensor(out, "output"))
    if r:
        return r
    if len(inp.shape) != 4 or len(filt.shape) != 4 or len(out.shape) != 4:
        return "input, filter and output must be 4-D (NHWC, 1HWC)"
    oc = filt.shape[3]
    r = first_reason(check_filter(filt, oc, 3), check_bias(optional_input(graph, op, 2), oc))
    if r:
        return r
    n, h, w, c = inp.shape
    if filt.shape[0] != 1:
        return f"filter '{filt.name}' has leading dimension {filt.shape[0]}, 1 required"
    if c == 0 or oc % c:
        return f"filter channels {oc} are not a multiple of the input channels {c}"
    if opts.depth_multiplier != oc // c:
        return (f"depth_multiplier {opts.depth_multiplier} does not match "
                f"{oc} filter channels / {c} input channels")
    if activation_range(opts.activation, out) is None:
        return f"fused activation {opts.activation.name} is not supported"
    oh = compute_out_size(opts.padding, h, filt.shape[1], opts.stride_h, opts.dilation_h)
    ow = compute_out_size(opts.padding, w, filt.shape[2], opts.stride_w, opts.dilation_w)
    if out.shape != (n, oh, ow, oc):
        return f"output shape {out.shape} differs from the computed {(n, oh, ow, oc)}"
    return None


def _prepare(graph: Graph, op: Operator) -> KernelCall:
    opts = op.options
    assert isinstance(opts, DepthwiseConv2DOptions)
    inp, filt = graph.tensor(op.inputs[0]), graph.tensor(op.inputs[1])
    bias = optional_input(graph, op, 2)
    out = graph.tensor(op.outputs[0])
    n, h, w, c = inp.shape
    _, fh, fw, oc = filt.shape
    _, oh, ow, _ = out.shape
    assert filt.quant is not None   # accepts() checked it
    mult, shift = per_channel_multipliers(inp.scale, filt.quant.scale, out.scale, oc)
    act = activation_range(opts.activation, out)
    assert act is not None
    consts = [ConstArray("filter", "int8_t", np.asarray(filt.data, np.int8).reshape(-1)),
              ConstArray("mult", "int32_t", mult), ConstArray("shift", "int32_t", shift)]
    if bias is not None:
        consts.insert(1, ConstArray("bias", "int32_t",
                                    np.asarray(bias.data, np.int32).reshape(-1)))
    params = (
        ("batches", n), ("in_h", h), ("in_w", w), ("in_c", c),
        ("out_h", oh), ("out_w", ow), ("out_c", oc), ("depth_multiplier", oc // c),
        ("filter_h", fh), ("filter_w", fw),
        ("stride_h", opts.stride_h), ("stride_w", opts.stride_w),
        ("dilation_h", opts.dilation_h), ("dilation_w", opts.dilation_w),
        ("pad_h", compute_padding(opts.stride_h, opts.dilation_h, h, fh, oh)),
        ("pad_w", compute_padding(opts.stride_w, opts.dilation_w, w, fw, ow)),
        ("input_offset", -inp.zero_point), ("output_offset", out.zero_point),
        ("act_min", act[0]), ("act_max", act[1]),
        ("filter", "@filter"), ("bias", "@bias" if bias is not None else "NULL"),
        ("mult", "@mult"), ("shift", "@shift"),
    )
    return KernelCall("td_dwconv2d_s8_ref", "td_dwconv2d_params_t", params, tuple(consts),
                      ("in0", "out0"))


DWCONV2D_S8_REF = register(KernelVariant(
    op="DEPTHWISE_CONV_2D", impl="ref", symbol="td_dwconv2d_s8_ref",
    sources=(f"{REF_DIR}/td_dwconv2d_s8_ref.c",), requires=frozenset(),
    accepts=_accepts, prepare=_prepare))
