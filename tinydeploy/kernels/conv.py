"""CONV_2D, int8 with per-channel (or per-tensor) weights: `td_conv2d_s8_ref`.

TFLM semantics (reference integer_ops/conv.h): for every output element, the int32 sum of
(input + input_offset) * filter over the taps inside the image (padding taps contribute
nothing), plus the int32 bias, requantized per output channel, plus the output zero point,
clamped to the fused activation range. Grouped convolution (input channels a multiple of
the filter's) is supported as TFLM does.
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
from tinydeploy.kernels.registry import ConstArray, KernelCall, KernelVariant, register
from tinydeploy.model.ir import Conv2DOptions, DType, Graph, Operator


def check_bias(bias, channels: int) -> str | None:  # type: ignore[no-untyped-def]
    if bias is None:
        return None
    if bias.dtype != DType.INT32:
        return f"bias '{bias.name}' is {bias.dtype.name}, int32 required"
    if not bias.is_constant:
        return f"bias '{bias.name}' is not constant"
    if bias.size != channels:
        return f"bias '{bias.name}' has {bias.size} values for {channels} output channels"
    return None


def check_filter(filt, channels: int, axis: int) -> str | None:  # type: ignore[no-untyped-def]
    r = check_int8_tensor(filt, "filter", per_tensor=False)
    if r:
        return r
    if not filt.is_constant:
        return f"filter '{filt.name}' is not constant"
    n = len(filt.quant.scale)
    if n not in (1, channels):
        return f"filter '{filt.name}' has {n} scales for {channels} output channels"
    if n > 1 and filt.quant.axis != axis:
        return f"filter '{filt.name}' is quantized along axis {filt.quant.axis}, {axis} required"
    return None


def _accepts(graph: Graph, op: Operator) -> str | None:
    opts = op.options
    if not isinstance(opts, Conv2DOptions):
        return "missing Conv2DOptions"
    inp, filt = graph.tensor(op.inputs[0]), graph.tensor(op.inputs[1])
    out = graph.tensor(op.outputs[0])
    r = first_reason(check_int8_tensor(inp, "input"), check_int8_tensor(out, "output"))
    if r:
        return r
    if len(inp.shape) != 4 or len(filt.shape) != 4 or len(out.shape) != 4:
        return "input, filter and output must be 4-D (NHWC, OHWI)"
    oc = filt.shape[0]
    r = first_reason(check_filter(filt, oc, 0), check_bias(optional_input(graph, op, 2), oc))
    if r:
        return r
    n, h, w, c = inp.shape
    fc = filt.shape[3]
    if fc <= 0 or c % fc:
        return f"input channels {c} are not a multiple of the filter's {fc}"
    if oc % (c // fc):
        return f"output channels {oc} are not a multiple of the {c // fc} groups"
    if activation_range(opts.activation, out) is None:
        return f"fused activation {opts.activation.name} is not supported"
    oh = compute_out_size(opts.padding, h, filt.shape[1], opts.stride_h, opts.dilation_h)
    ow = compute_out_size(opts.padding, w, filt.shape[2], opts.stride_w, opts.dilation_w)
    if out.shape != (n, oh, ow, oc):
        return f"output shape {out.shape} differs from the computed {(n, oh, ow, oc)}"
    return None


def _prepare(graph: Graph, op: Operator) -> KernelCall:
    opts = op.options
    assert isinstance(opts, Conv2DOptions)
    inp, filt = graph.tensor(op.inputs[0]), graph.tensor(op.inputs[1])
    bias = optional_input(graph, op, 2)
    out = graph.tensor(op.outputs[0])
    n, h, w, c = inp.shape
    oc, fh, fw, fc = filt.shape
    _, oh, ow, _ = out.shape
    assert filt.quant is not None   # accepts() checked it
    mult, shift = per_channel_multipliers(inp.scale, filt.quant.scale, out.scale, oc)
    act = activation_range(opts.activation, out)
    assert act is not None
    consts = [ConstArray("filter", "int8_t", np.asarray(filt.data, np.int8).reshape(-1)),
              ConstArray("mult", "int32_t", mult), ConstArray("shift", "int32_t", shift)]
    if bias is not None:
        consts.insert(1, ConstArray("bias", "int32_t", np.asarray(bias.data, np.int32)
                                    .reshape(-1)))
    params = (
        ("batches", n), ("in_h", h), ("in_w", w), ("in_c", c),
        ("out_h", oh), ("out_w", ow), ("out_c", oc),
        ("filter_h", fh), ("filter_w", fw), ("filter_c", fc),
        ("stride_h", opts.stride_h), ("stride_w", opts.stride_w),
        ("dilation_h", opts.dilation_h), ("dilation_w", opts.dilation_w),
        ("pad_h", compute_padding(opts.stride_h, opts.dilation_h, h, fh, oh)),
        ("pad_w", compute_padding(opts.stride_w, opts.dilation_w, w, fw, ow)),
        ("input_offset", -inp.zero_point), ("output_offset", out.zero_point),
        ("act_min", act[0]), ("act_max", act[1]),
        ("filter", "@filter"), ("bias", "@bias" if bias is not None else "NULL"),
        ("mult", "@mult"), ("shift", "@shift"),
    )
    return KernelCall("td_conv2d_s8_ref", "td_conv2d_params_t", params, tuple(consts),
                      ("in0", "out0"))


CONV2D_S8_REF = register(KernelVariant(
    op="CONV_2D", impl="ref", symbol="td_conv2d_s8_ref",
    sources=(f"{REF_DIR}/td_conv2d_s8_ref.c",), requires=frozenset(),
    accepts=_accepts, prepare=_prepare))
