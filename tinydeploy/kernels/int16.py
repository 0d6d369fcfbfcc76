"""16x8 kernels (TensorFlow's ``EXPERIMENTAL_TFLITE_BUILTINS_ACTIVATIONS_INT16_WEIGHTS_INT8``
mode: int16 activations with zero point 0, int8 weights, int64 bias) and the integer
QUANTIZE/DEQUANTIZE conversions such models start and end with.

* AVERAGE_POOL_2D and MAX_POOL_2D use the int8 kernels' windows on int16 data;
* FULLY_CONNECTED, CONV_2D and DEPTHWISE_CONV_2D accumulate in int64 and requantize with
  TFLite's int64 ``MultiplyByQuantizedMultiplier`` (the multiplier rounded to Q15, one
  rounding shift), as TFLM does when the bias is int64 (the converter's 16x8 output); an
  int32 bias on an int16 op takes TFLM's other (int32) path and is refused here.
* QUANTIZE int8/int16 -> int8/int16/int32 is TFLite's Requantize with the double ratio of the
  scales; DEQUANTIZE int16 -> float32 multiplies in double on the device, as TFLM.

Invariant: every int16 activation has zero point 0 (TFLM requires it for these kernels).
"""

from __future__ import annotations

import struct
from collections.abc import Callable

import numpy as np

from tinydeploy.fixedpoint import quantize_multiplier, round_half_away
from tinydeploy.kernels.common import (
    check_window_output,
    compute_padding,
    f32,
    int8_shifts,
    int16_reason,
    optional_input,
    per_channel_multipliers,
    ref_variant,
)
from tinydeploy.kernels.registry import ConstArray, KernelCall, register
from tinydeploy.model.ir import (
    Activation,
    ActivationOptions,
    Conv2DOptions,
    DepthwiseConv2DOptions,
    DType,
    FullyConnectedOptions,
    Graph,
    Operator,
    Pool2DOptions,
    SoftmaxOptions,
    Tensor,
)

INT16_MIN, INT16_MAX = -(1 << 15), (1 << 15) - 1
_SHORT = {DType.INT8: "s8", DType.INT16: "s16", DType.INT32: "s32"}


def activation_range16(act: Activation, out: Tensor) -> tuple[int, int] | None:
    """TFLite CalculateActivationRangeQuantized for an int16 output (zero point 0)."""
    scale = np.float32(out.scale)

    def q(v: float) -> int:
        return round_half_away(float(np.float32(v) / scale))

    if act == Activation.NONE:
        return INT16_MIN, INT16_MAX
    if act == Activation.RELU:
        return max(INT16_MIN, q(0.0)), INT16_MAX
    if act == Activation.RELU6:
        return max(INT16_MIN, q(0.0)), min(INT16_MAX, q(6.0))
    if act == Activation.RELU_N1_TO_1:
        return max(INT16_MIN, q(-1.0)), min(INT16_MAX, q(1.0))
    return None


def _weights_reason(filt: Tensor | None, bias: Tensor | None, oc: int, axis: int) -> str | None:
    if filt is None or filt.dtype is not DType.INT8 or filt.quant is None or filt.data is None:
        return "filter must be a constant int8 tensor"
    n = len(filt.quant.scale)
    if n not in (1, oc) or any(z != 0 for z in filt.quant.zero_point):
        return f"filter '{filt.name}' has {n} scales for {oc} channels or non-zero zero points"
    if n > 1 and filt.quant.axis != axis:
        return f"filter '{filt.name}' is quantized along axis {filt.quant.axis}, {axis} required"
    if bias is not None:
        if bias.dtype is not DType.INT64:
            return (f"bias '{bias.name}' is {bias.dtype.name}; the 16x8 kernels take int64 bias "
                    "(TFLM's int32-bias path is not compiled)")
        if bias.data is None or bias.size != oc:
            return f"bias '{bias.name}' must be constant with {oc} values"
    return None


def _requant_consts(x: Tensor, filt: Tensor, bias: Tensor | None, out: Tensor, oc: int
                    ) -> tuple[tuple[ConstArray, ...], tuple[tuple[str, int | float | str], ...]]:
    assert filt.quant is not None and filt.data is not None
    mult, shift = per_channel_multipliers(x.scale, filt.quant.scale, out.scale, oc)
    consts = [ConstArray("filter", "int8_t", np.asarray(filt.data, np.int8).reshape(-1)),
              ConstArray("mult", "int32_t", mult),
              ConstArray("shift", "int8_t", int8_shifts(shift))]
    if bias is not None:
        assert bias.data is not None
        consts.append(ConstArray("bias", "int64_t", np.asarray(bias.data, np.int64).reshape(-1)))
    return tuple(consts), (("filter", "@filter"), ("bias", "@bias" if bias else "NULL"),
                           ("mult", "@mult"), ("shift", "@shift"))


# --- FULLY_CONNECTED 16x8 -----------------------------------------------------------------


def _accepts_fc(graph: Graph, op: Operator) -> str | None:
    opts = op.options
    if not isinstance(opts, FullyConnectedOptions) or opts.weights_format != 0:
        return "missing FullyConnectedOptions or shuffled weights"
    x, filt = graph.tensor(op.inputs[0]), graph.tensor(op.inputs[1])
    out = graph.tensor(op.outputs[0])
    why = int16_reason(x, "input") or int16_reason(out, "output")
    if why:
        return why
    if len(filt.shape) != 2:
        return f"filter '{filt.name}' must be 2-D"
    oc, depth = filt.shape
    why = _weights_reason(filt, optional_input(graph, op, 2), oc, 0)
    if why:
        return why
    if not out.shape or out.shape[-1] != oc or x.size != (out.size // oc) * depth:
        return f"shapes {list(x.shape)} -> {list(out.shape)} do not fit the filter"
    if depth >= (1 << 16):
        return f"accumulation depth {depth} could exceed TFLite's int64 requantize range"
    if activation_range16(opts.activation, out) is None:
        return f"fused activation {opts.activation.name} is not supported"
    return None


def _prepare_fc(graph: Graph, op: Operator) -> KernelCall:
    opts = op.options
    assert isinstance(opts, FullyConnectedOptions)
    x, filt = graph.tensor(op.inputs[0]), graph.tensor(op.inputs[1])
    out = graph.tensor(op.outputs[0])
    oc, depth = filt.shape
    consts, pointers = _requant_consts(x, filt, optional_input(graph, op, 2), out, oc)
    act = activation_range16(opts.activation, out)
    assert act is not None
    params = (("batches", out.size // oc), ("accum_depth", depth), ("out_c", oc),
              ("act_min", act[0]), ("act_max", act[1]), *pointers)
    return KernelCall("td_fully_connected_s16_ref", "td_fully_connected_s16_params_t", params,
                      consts, ("in0", "out0"))


# --- CONV_2D 16x8 -------------------------------------------------------------------------


def _accepts_conv(graph: Graph, op: Operator) -> str | None:
    opts = op.options
    if not isinstance(opts, Conv2DOptions):
        return "missing Conv2DOptions"
    x, filt = graph.tensor(op.inputs[0]), graph.tensor(op.inputs[1])
    out = graph.tensor(op.outputs[0])
    why = int16_reason(x, "input") or int16_reason(out, "output")
    if why:
        return why
    if len(x.shape) != 4 or len(filt.shape) != 4:
        return "input and filter must be 4-D"
    oc, fh, fw, fc = filt.shape
    why = _weights_reason(filt, optional_input(graph, op, 2), oc, 0)
    if why:
        return why
    c = x.shape[3]
    if fc <= 0 or c % fc or oc % (c // fc):
        return f"channels {c} / filter channels {fc} / outputs {oc} do not form groups"
    if activation_range16(opts.activation, out) is None:
        return f"fused activation {opts.activation.name} is not supported"
    return check_window_output(out, opts.padding, x.shape, (fh, fw),
                               (opts.stride_h, opts.stride_w),
                               (opts.dilation_h, opts.dilation_w), oc)


def _window_act_params(opts: Conv2DOptions | DepthwiseConv2DOptions, out: Tensor,
                       in_hw: tuple[int, int], filter_hw: tuple[int, int]
                       ) -> tuple[tuple[str, int], ...]:
    """The stride, dilation, padding and clamp fields shared by the 16x8 convolution params
    structs, in their declaration order (padding as TFLite computes it for ``out``)."""
    act = activation_range16(opts.activation, out)
    assert act is not None
    (h, w), (fh, fw), (oh, ow) = in_hw, filter_hw, out.shape[1:3]
    return (("stride_h", opts.stride_h), ("stride_w", opts.stride_w),
            ("dilation_h", opts.dilation_h), ("dilation_w", opts.dilation_w),
            ("pad_h", compute_padding(opts.stride_h, opts.dilation_h, h, fh, oh)),
            ("pad_w", compute_padding(opts.stride_w, opts.dilation_w, w, fw, ow)),
            ("act_min", act[0]), ("act_max", act[1]))


def _prepare_conv(graph: Graph, op: Operator) -> KernelCall:
    opts = op.options
    assert isinstance(opts, Conv2DOptions)
    x, filt = graph.tensor(op.inputs[0]), graph.tensor(op.inputs[1])
    out = graph.tensor(op.outputs[0])
    n, h, w, c = x.shape
    oc, fh, fw, fc = filt.shape
    _, oh, ow, _ = out.shape
    consts, pointers = _requant_consts(x, filt, optional_input(graph, op, 2), out, oc)
    params = (("batches", n), ("in_h", h), ("in_w", w), ("in_c", c), ("out_h", oh),
              ("out_w", ow), ("out_c", oc), ("filter_h", fh), ("filter_w", fw),
              ("filter_c", fc), *_window_act_params(opts, out, (h, w), (fh, fw)), *pointers)
    return KernelCall("td_conv2d_s16_ref", "td_conv2d_s16_params_t", params, consts,
                      ("in0", "out0"))


# --- DEPTHWISE_CONV_2D 16x8, AVERAGE_POOL_2D / MAX_POOL_2D int16 ---------------------------


def _accepts_dw(graph: Graph, op: Operator) -> str | None:
    opts = op.options
    if not isinstance(opts, DepthwiseConv2DOptions):
        return "missing DepthwiseConv2DOptions"
    x, filt = graph.tensor(op.inputs[0]), graph.tensor(op.inputs[1])
    out = graph.tensor(op.outputs[0])
    why = int16_reason(x, "input") or int16_reason(out, "output")
    if why:
        return why
    if len(x.shape) != 4 or len(filt.shape) != 4 or filt.shape[0] != 1:
        return "input must be 4-D and the filter [1, H, W, C*M]"
    oc, c = filt.shape[3], x.shape[3]
    why = _weights_reason(filt, optional_input(graph, op, 2), oc, 3)
    if why:
        return why
    if c == 0 or oc % c or opts.depth_multiplier != oc // c:
        return f"filter channels {oc}, input channels {c}, multiplier {opts.depth_multiplier}"
    if activation_range16(opts.activation, out) is None:
        return f"fused activation {opts.activation.name} is not supported"
    return check_window_output(out, opts.padding, x.shape, (filt.shape[1], filt.shape[2]),
                               (opts.stride_h, opts.stride_w),
                               (opts.dilation_h, opts.dilation_w), oc)


def _prepare_dw(graph: Graph, op: Operator) -> KernelCall:
    opts = op.options
    assert isinstance(opts, DepthwiseConv2DOptions)
    x, filt = graph.tensor(op.inputs[0]), graph.tensor(op.inputs[1])
    out = graph.tensor(op.outputs[0])
    n, h, w, c = x.shape
    _, fh, fw, oc = filt.shape
    _, oh, ow, _ = out.shape
    consts, pointers = _requant_consts(x, filt, optional_input(graph, op, 2), out, oc)
    params = (("batches", n), ("in_h", h), ("in_w", w), ("in_c", c), ("out_h", oh),
              ("out_w", ow), ("out_c", oc), ("depth_multiplier", oc // c), ("filter_h", fh),
              ("filter_w", fw), *_window_act_params(opts, out, (h, w), (fh, fw)), *pointers)
    return KernelCall("td_dwconv2d_s16_ref", "td_dwconv2d_s16_params_t", params, consts,
                      ("in0", "out0"))


def _accepts_pool(graph: Graph, op: Operator) -> str | None:
    opts = op.options
    if not isinstance(opts, Pool2DOptions):
        return "missing Pool2DOptions"
    x, out = graph.tensor(op.inputs[0]), graph.tensor(op.outputs[0])
    why = int16_reason(x, "input") or int16_reason(out, "output")
    if why:
        return why
    if len(x.shape) != 4 or min(opts.filter_h, opts.filter_w, opts.stride_h, opts.stride_w) < 1:
        return "input must be 4-D with windows and strides >= 1"
    if activation_range16(opts.activation, out) is None:
        return f"fused activation {opts.activation.name} is not supported"
    return check_window_output(out, opts.padding, x.shape, (opts.filter_h, opts.filter_w),
                               (opts.stride_h, opts.stride_w), (1, 1), x.shape[3])


def _prepare_pool(symbol: str) -> Callable[[Graph, Operator], KernelCall]:
    def prepare(graph: Graph, op: Operator) -> KernelCall:
        opts = op.options
        assert isinstance(opts, Pool2DOptions)
        x, out = graph.tensor(op.inputs[0]), graph.tensor(op.outputs[0])
        n, h, w, c = x.shape
        _, oh, ow, _ = out.shape
        act = activation_range16(opts.activation, out)
        assert act is not None
        params = (("batches", n), ("in_h", h), ("in_w", w), ("channels", c), ("out_h", oh),
                  ("out_w", ow), ("filter_h", opts.filter_h), ("filter_w", opts.filter_w),
                  ("stride_h", opts.stride_h), ("stride_w", opts.stride_w),
                  ("pad_h", compute_padding(opts.stride_h, 1, h, opts.filter_h, oh)),
                  ("pad_w", compute_padding(opts.stride_w, 1, w, opts.filter_w, ow)),
                  ("act_min", act[0]), ("act_max", act[1]))
        return KernelCall(symbol, "td_pool2d_params_t", params, (), ("in0", "out0"))
    return prepare


# --- ADD int16 ------------------------------------------------------------------------------

ADD16_LEFT_SHIFT = 15


def _operands16_reason(graph: Graph, op: Operator) -> str | None:
    """The operand checks of the int16 binary ops (ADD, SUB, MUL): two int16 inputs and one
    output, per-tensor quantized, both inputs in the arena."""
    ins, outs = graph.op_inputs(op), graph.op_outputs(op)
    if len(ins) != 2 or len(outs) != 1:
        return f"expects 2 inputs and 1 output, has {len(ins)} and {len(outs)}"
    a, b, out = ins[0], ins[1], outs[0]
    why = int16_reason(a, "input 0") or int16_reason(b, "input 1") or int16_reason(out, "output")
    if why:
        return why
    assert a is not None and b is not None
    if a.is_constant or b.is_constant:
        return "a constant int16 operand is not supported (both operands in the arena)"
    return None


def _accepts_add16(graph: Graph, op: Operator) -> str | None:
    """ADD and SUB (TFLM computes both in this scheme for int16)."""
    from tinydeploy.kernels.elementwise import BCAST_DIMS, broadcast_shape

    why = _operands16_reason(graph, op)
    if why:
        return why
    (a, b), out = graph.op_inputs(op), graph.op_outputs(op)[0]
    assert a is not None and b is not None
    if max(len(a.shape), len(b.shape), len(out.shape)) > BCAST_DIMS:
        return f"rank above {BCAST_DIMS}"
    bs = broadcast_shape(a.shape, b.shape)
    if bs is None or int(np.prod(bs)) != out.size:
        return f"shapes {list(a.shape)} and {list(b.shape)} do not broadcast to the output"
    act = op.options.activation if isinstance(op.options, ActivationOptions) else \
        Activation.NONE
    if activation_range16(act, out) is None:
        return f"fused activation {act.name} is not supported"
    twice_max = 2.0 * max(f32(a.scale), f32(b.scale))
    if not twice_max / ((1 << ADD16_LEFT_SHIFT) * f32(out.scale)) < 1.0:
        return f"output scale {out.scale:g} is too small for input scales {a.scale:g}, {b.scale:g}"
    return None


def _prepare_add16(graph: Graph, op: Operator) -> KernelCall:
    from tinydeploy.kernels.elementwise import broadcast_shape, broadcast_strides

    a, b = graph.op_inputs(op)
    out = graph.op_outputs(op)[0]
    assert a is not None and b is not None
    twice_max = 2.0 * max(f32(a.scale), f32(b.scale))
    m0, sh0 = quantize_multiplier(f32(a.scale) / twice_max)
    m1, sh1 = quantize_multiplier(f32(b.scale) / twice_max)
    mo, sho = quantize_multiplier(twice_max / ((1 << ADD16_LEFT_SHIFT) * f32(out.scale)))
    act = op.options.activation if isinstance(op.options, ActivationOptions) else \
        Activation.NONE
    rng = activation_range16(act, out)
    assert rng is not None
    bs = broadcast_shape(a.shape, b.shape)
    assert bs is not None
    dims, st0, st1 = broadcast_strides(a.shape, b.shape, bs)
    params: tuple[tuple[str, int | float | str], ...] = (
        ("left_shift", ADD16_LEFT_SHIFT), ("in0_offset", 0), ("in0_mult", m0),
        ("in0_shift", sh0), ("in1_offset", 0), ("in1_mult", m1), ("in1_shift", sh1),
        ("out_offset", 0), ("out_mult", mo), ("out_shift", sho), ("act_min", rng[0]),
        ("act_max", rng[1]), ("out_dims", "@out_dims"), ("in0_strides", "@in0_strides"),
        ("in1_strides", "@in1_strides"), ("in1_const", "NULL"))
    symbol = "td_sub_s16_ref" if op.opcode == "SUB" else "td_add_s16_ref"
    return KernelCall(symbol, "td_add_params_t", params,
                      (ConstArray("out_dims", "int32_t", np.array(dims, np.int32)),
                       ConstArray("in0_strides", "int32_t", np.array(st0, np.int32)),
                       ConstArray("in1_strides", "int32_t", np.array(st1, np.int32))),
                      ("in0", "in1", "out0"))


def _accepts_mul16(graph: Graph, op: Operator) -> str | None:
    why = _operands16_reason(graph, op)
    if why:
        return why
    (a, b), out = graph.op_inputs(op), graph.op_outputs(op)[0]
    assert a is not None and b is not None
    if max(len(a.shape), len(b.shape), len(out.shape)) > 4 and a.shape != b.shape:
        return "TFLM broadcasts int16 MUL up to 4-D"
    from tinydeploy.kernels.elementwise import broadcast_shape

    bs = broadcast_shape(a.shape, b.shape)
    if bs is None or int(np.prod(bs)) != out.size:
        return f"shapes {list(a.shape)} and {list(b.shape)} do not broadcast to the output"
    act = op.options.activation if isinstance(op.options, ActivationOptions) else \
        Activation.NONE
    if activation_range16(act, out) is None:
        return f"fused activation {act.name} is not supported"
    return None


def _prepare_mul16(graph: Graph, op: Operator) -> KernelCall:
    from tinydeploy.kernels.elementwise import broadcast_shape, broadcast_strides

    a, b = graph.op_inputs(op)
    out = graph.op_outputs(op)[0]
    assert a is not None and b is not None
    mult, shift = quantize_multiplier(f32(a.scale) * f32(b.scale) / f32(out.scale))
    act = op.options.activation if isinstance(op.options, ActivationOptions) else \
        Activation.NONE
    rng = activation_range16(act, out)
    assert rng is not None
    bs = broadcast_shape(a.shape, b.shape)
    assert bs is not None
    dims, st0, st1 = broadcast_strides(a.shape, b.shape, bs)
    params: tuple[tuple[str, int | float | str], ...] = (
        ("in0_offset", 0), ("in1_offset", 0), ("out_offset", 0), ("out_mult", mult),
        ("out_shift", shift), ("act_min", rng[0]), ("act_max", rng[1]),
        ("out_dims", "@out_dims"), ("in0_strides", "@in0_strides"),
        ("in1_strides", "@in1_strides"), ("in1_const", "NULL"))
    return KernelCall("td_mul_s16_ref", "td_mul_params_t", params,
                      (ConstArray("out_dims", "int32_t", np.array(dims, np.int32)),
                       ConstArray("in0_strides", "int32_t", np.array(st0, np.int32)),
                       ConstArray("in1_strides", "int32_t", np.array(st1, np.int32))),
                      ("in0", "in1", "out0"))


# --- MEAN / SUM, CONCATENATION int16 ----------------------------------------------------


def _io16(x: Tensor | None, y: Tensor) -> str | None:
    return int16_reason(x, "input") or int16_reason(y, "output")


def _accepts_mean16(graph: Graph, op: Operator) -> str | None:
    from tinydeploy.kernels.shape_ops import _mean_plan

    _, why = _mean_plan(graph, op, _io16, INT16_MAX)
    return why


def _prepare_mean16(graph: Graph, op: Operator) -> KernelCall:
    from tinydeploy.kernels.shape_ops import _mean_plan, mean_multiplier

    plan, why = _mean_plan(graph, op, _io16, INT16_MAX)
    assert plan is not None, why
    x, y = graph.op_inputs(op)[0], graph.op_outputs(op)[0]
    assert x is not None
    count = x.size // int(plan["num_outputs"])  # type: ignore[call-overload]
    if op.opcode == "SUM":
        mult, shift = quantize_multiplier(f32(x.scale) / f32(y.scale))
    else:
        mult, shift = mean_multiplier(x.scale, y.scale, count)
    n = int(plan["num_outputs"])  # type: ignore[call-overload]
    return KernelCall(
        "td_mean_s16_ref", "td_mean_params_t",
        (("num_outputs", n), ("sum_offset", int(plan["sum_offset"])),  # type: ignore[call-overload]
         ("out_mult", mult), ("out_shift", shift), ("out_offset", y.zero_point),
         ("in_dims", "@in_dims"), ("out_strides", "@out_strides")),
        (ConstArray("in_dims", "int32_t", np.array(plan["in_dims"], np.int32)),
         ConstArray("out_strides", "int32_t", np.array(plan["out_strides"], np.int32))),
        ("in0", "out0", "scratch"), scratch_bytes=4 * n)


def _concat_quant16(k: int, t: Tensor, out: Tensor) -> str | None:
    if f32(t.scale) != f32(out.scale):
        return f"input {k} '{t.name}' has scale {t.scale:g}, the output {out.scale:g}"
    return None


def _accepts_concat16(graph: Graph, op: Operator) -> str | None:
    from tinydeploy.kernels.shape_ops import concat_reason

    return concat_reason(graph, op, int16_reason, _concat_quant16)


def _prepare_concat16(graph: Graph, op: Operator) -> KernelCall:
    from dataclasses import replace

    from tinydeploy.kernels.shape_ops import _prepare_concat

    return replace(_prepare_concat(graph, op), symbol="td_concatenation_s16_ref")


# --- SOFTMAX int8 -> int16 --------------------------------------------------------------


def _accepts_softmax16(graph: Graph, op: Operator) -> str | None:
    if not isinstance(op.options, SoftmaxOptions):
        return "missing SoftmaxOptions"
    x, out = graph.tensor(op.inputs[0]), graph.tensor(op.outputs[0])
    if x.dtype is not DType.INT8 or out.dtype is not DType.INT16:
        return f"{x.dtype.name} -> {out.dtype.name} (this variant: INT8 -> INT16)"
    if x.quant is None or out.quant is None or len(x.quant.scale) != 1:
        return "input and output must be per-tensor quantized"
    if out.zero_point != INT16_MIN or abs(out.scale - 1 / 65536) > 0.001 / 65536:
        return (f"output '{out.name}' has scale {out.scale:g} and zero point {out.zero_point}; "
                "TFLM requires 1/65536 and -32768 for int8 -> int16 softmax")
    from tinydeploy.kernels.softmax import softmax_shape_beta_reason

    return softmax_shape_beta_reason(x, out, op.options.beta)


def _prepare_softmax16(graph: Graph, op: Operator) -> KernelCall:
    from tinydeploy.kernels.softmax import softmax_exp_table

    assert isinstance(op.options, SoftmaxOptions)
    x = graph.tensor(op.inputs[0])
    table, _ = softmax_exp_table(op.options.beta, x.scale)
    depth = x.shape[-1]
    return KernelCall("td_softmax_s8_s16_ref", "td_softmax_params_t",
                      (("rows", x.size // depth), ("depth", depth), ("exp_lut", "@exp_lut")),
                      (ConstArray("exp_lut", "int32_t", table),), ("in0", "out0"))


# --- QUANTIZE between integer types, DEQUANTIZE int16 --------------------------------------


def _accepts_requant(src: DType, dst: DType) -> Callable[[Graph, Operator], str | None]:
    def accepts(graph: Graph, op: Operator) -> str | None:
        ins, outs = graph.op_inputs(op), graph.op_outputs(op)
        if len(ins) != 1 or len(outs) != 1 or ins[0] is None:
            return "expects 1 input and 1 output"
        x, y = ins[0], outs[0]
        if x.dtype is not src or y.dtype is not dst:
            return (f"{x.dtype.name} -> {y.dtype.name} (this variant: {src.name} -> "
                    f"{dst.name})")
        for t in (x, y):
            if t.quant is None or len(t.quant.scale) != 1 or not t.quant.scale[0] > 0:
                return f"'{t.name}' is not per-tensor quantized"
        if x.size != y.size:
            return f"input has {x.size} elements, output {y.size}"
        return None
    return accepts


def _prepare_requant(symbol: str) -> Callable[[Graph, Operator], KernelCall]:
    def prepare(graph: Graph, op: Operator) -> KernelCall:
        x = graph.op_inputs(op)[0]
        y = graph.op_outputs(op)[0]
        assert x is not None
        mult, shift = quantize_multiplier(f32(x.scale) / f32(y.scale))
        return KernelCall(symbol, "td_requant_params_t",
                          (("size", y.size), ("in_zp", x.zero_point), ("out_zp", y.zero_point),
                           ("mult", mult), ("shift", shift)), (), ("in0", "out0"))
    return prepare


def _accepts_dequant16(graph: Graph, op: Operator) -> str | None:
    ins, outs = graph.op_inputs(op), graph.op_outputs(op)
    if len(ins) != 1 or len(outs) != 1 or ins[0] is None:
        return "expects 1 input and 1 output"
    x, y = ins[0], outs[0]
    if x.dtype is not DType.INT16 or y.dtype is not DType.FLOAT32:
        return f"{x.dtype.name} -> {y.dtype.name} (this variant: INT16 -> FLOAT32)"
    if x.quant is None or len(x.quant.scale) != 1:
        return f"input '{x.name}' is not per-tensor quantized"
    return None if x.size == y.size else "input and output sizes differ"


def _prepare_dequant16(graph: Graph, op: Operator) -> KernelCall:
    x = graph.op_inputs(op)[0]
    assert x is not None
    hi, lo = struct.unpack("<II", struct.pack("<d", f32(x.scale)))[::-1]
    return KernelCall("td_dequantize_s16_ref", "td_dequantize_s16_params_t",
                      (("size", x.size), ("scale_hi", hi), ("scale_lo", lo),
                       ("zero_point", x.zero_point)), (), ("in0", "out0"))


# --- LOGISTIC / TANH int16 ------------------------------------------------------------------

# TFLite's ``sigmoid_table_uint16``: sigmoid(i / 24) in unsigned Q0.16 for i = 0..255, as the
# oracle applies it. The entries are 0 or 1 above round(65536 * sigmoid(i / 24)) (no formula
# of that kind gives them all), so they were measured from the tflite-micro interpreter:
# entry k < 255 is 32768 + its int16 TANH of the input 128 k at input scale 2^-11 / 3 (where
# the kernel reads exactly that entry), entry 255 from the interpolation at input 21759 and
# scale 2^-12. `tests/golden/test_ops.py` measures them again.
SIGMOID16_TABLE = (
    32768, 33451, 34133, 34813, 35493, 36169, 36843, 37513, 38180, 38841, 39498, 40149,
    40794, 41432, 42064, 42688, 43304, 43912, 44511, 45102, 45683, 46255, 46817, 47369,
    47911, 48443, 48964, 49475, 49975, 50464, 50942, 51409, 51865, 52311, 52745, 53169,
    53581, 53983, 54374, 54755, 55125, 55485, 55834, 56174, 56503, 56823, 57133, 57433,
    57724, 58007, 58280, 58544, 58800, 59048, 59288, 59519, 59743, 59959, 60168, 60370,
    60565, 60753, 60935, 61110, 61279, 61441, 61599, 61750, 61896, 62036, 62172, 62302,
    62428, 62549, 62666, 62778, 62886, 62990, 63090, 63186, 63279, 63368, 63454, 63536,
    63615, 63691, 63765, 63835, 63903, 63968, 64030, 64090, 64148, 64204, 64257, 64308,
    64357, 64405, 64450, 64494, 64536, 64576, 64614, 64652, 64687, 64721, 64754, 64786,
    64816, 64845, 64873, 64900, 64926, 64950, 64974, 64997, 65019, 65039, 65060, 65079,
    65097, 65115, 65132, 65149, 65164, 65179, 65194, 65208, 65221, 65234, 65246, 65258,
    65269, 65280, 65291, 65301, 65310, 65319, 65328, 65337, 65345, 65352, 65360, 65367,
    65374, 65381, 65387, 65393, 65399, 65404, 65410, 65415, 65420, 65425, 65429, 65433,
    65438, 65442, 65445, 65449, 65453, 65456, 65459, 65462, 65465, 65468, 65471, 65474,
    65476, 65479, 65481, 65483, 65485, 65488, 65489, 65491, 65493, 65495, 65497, 65498,
    65500, 65501, 65503, 65504, 65505, 65507, 65508, 65509, 65510, 65511, 65512, 65513,
    65514, 65515, 65516, 65517, 65517, 65518, 65519, 65520, 65520, 65521, 65522, 65522,
    65523, 65523, 65524, 65524, 65525, 65525, 65526, 65526, 65526, 65527, 65527, 65528,
    65528, 65528, 65529, 65529, 65529, 65529, 65530, 65530, 65530, 65530, 65531, 65531,
    65531, 65531, 65531, 65532, 65532, 65532, 65532, 65532, 65532, 65533, 65533, 65533,
    65533, 65533, 65533, 65533, 65533, 65534, 65534, 65534, 65534, 65534, 65534, 65534,
    65534, 65534, 65534, 65535,
)


def sigmoid16_table() -> np.ndarray:
    """The 256 entries of `SIGMOID16_TABLE` as the kernels' uint16 constant array."""
    return np.array(SIGMOID16_TABLE, dtype=np.uint16)


def checked_log2(x: float) -> tuple[bool, int]:
    """TFLite ``CheckedLog2`` in float32: (x is a power of two within 1e-3 in log2, the
    rounded exponent)."""
    lg = np.float32(np.log(np.float32(x))) * np.float32(np.float32(1.0) /
                                                        np.float32(np.log(np.float32(2.0))))
    r = round_half_away(float(lg))
    return abs(float(np.float32(lg - np.float32(r)))) < 1e-3, r


def sigmoid16_multiplier(input_scale: float, tanh: bool) -> tuple[int, int]:
    """TFLM's int16 LOGISTIC/TANH Prepare and the power-of-two case of its Eval: (mult,
    shift) with x = (in * mult + round) >> shift in units of 1/(3 * 4096), i.e. 2^17 for
    +-10.7. A power-of-two input scale 2^-12 (and 2^-11 for TANH) becomes mult 3 << shift,
    shift 0; any other scale is scale * 3 * 4096 doubled up to above 16383.5, truncated."""
    pot, log2r = checked_log2(input_scale)
    left_shift = 12 + log2r
    if pot and left_shift in ((0, 1) if tanh else (0,)):
        return 3 << left_shift, 0
    m = f32(input_scale) * 4096.0 * 3.0
    shift = 0
    while m <= 32767.0 / 2.0 and shift <= 30:
        shift += 1
        m *= 2.0
    return int(m), shift


def _accepts_sigmoid16(graph: Graph, op: Operator) -> str | None:
    ins, outs = graph.op_inputs(op), graph.op_outputs(op)
    if len(ins) != 1 or len(outs) != 1:
        return f"expects 1 input and 1 output, has {len(ins)} and {len(outs)}"
    x, y = ins[0], outs[0]
    why = _io16(x, y)
    if why:
        return why
    assert x is not None
    if x.size != y.size:
        return f"input has {x.size} elements, output {y.size}"
    pot, log2r = checked_log2(y.scale)
    if not pot or log2r != -15:
        return (f"output '{y.name}' has scale {y.scale:g}; TFLM's int16 {op.opcode} requires "
                "2^-15 (1/32768)")
    mult, _ = sigmoid16_multiplier(x.scale, op.opcode == "TANH")
    if mult > INT16_MAX:
        return (f"input '{x.name}' scale {x.scale:g} gives multiplier {mult} above 32767 "
                "(TFLM's limit: input scale below about 2.67)")
    return None


def _prepare_sigmoid16(graph: Graph, op: Operator) -> KernelCall:
    x = graph.op_inputs(op)[0]
    assert x is not None
    mult, shift = sigmoid16_multiplier(x.scale, op.opcode == "TANH")
    symbol = "td_tanh_s16_ref" if op.opcode == "TANH" else "td_logistic_s16_ref"
    return KernelCall(symbol, "td_sigmoid16_params_t",
                      (("size", x.size), ("mult", mult), ("shift", shift), ("lut", "@lut")),
                      (ConstArray("lut", "uint16_t", sigmoid16_table()),), ("in0", "out0"))


register(ref_variant("FULLY_CONNECTED", "td_fully_connected_s16_ref", _accepts_fc, _prepare_fc,
                     headers=("kernels/ref/td_requant64.h",)))
register(ref_variant("CONV_2D", "td_conv2d_s16_ref", _accepts_conv, _prepare_conv,
                     headers=("kernels/ref/td_requant64.h",)))
register(ref_variant("DEPTHWISE_CONV_2D", "td_dwconv2d_s16_ref", _accepts_dw, _prepare_dw,
                     headers=("kernels/ref/td_requant64.h",)))
for _op, _sym in (("AVERAGE_POOL_2D", "td_avgpool2d_s16_ref"),
                  ("MAX_POOL_2D", "td_maxpool2d_s16_ref")):
    register(ref_variant(_op, _sym, _accepts_pool, _prepare_pool(_sym),
                         headers=("kernels/ref/td_pool2d_body.h",
                                  "kernels/ref/td_pool2d_window.h")))
for _src, _dst in ((DType.INT16, DType.INT8), (DType.INT8, DType.INT16),
                   (DType.INT16, DType.INT16), (DType.INT16, DType.INT32),
                   (DType.INT8, DType.INT32)):
    _sym = f"td_quantize_{_SHORT[_src]}_{_SHORT[_dst]}_ref"
    register(ref_variant("QUANTIZE", _sym, _accepts_requant(_src, _dst), _prepare_requant(_sym),
                         inplace=_src.itemsize == _dst.itemsize,
                         headers=("kernels/ref/td_requant_body.h",)))
register(ref_variant("ADD", "td_add_s16_ref", _accepts_add16, _prepare_add16, inplace=True,
                     headers=("kernels/ref/td_bcast_rows.h",)))
register(ref_variant("SUB", "td_sub_s16_ref", _accepts_add16, _prepare_add16, inplace=True,
                     headers=("kernels/ref/td_bcast_rows.h",)))
register(ref_variant("MUL", "td_mul_s16_ref", _accepts_mul16, _prepare_mul16, inplace=True,
                     headers=("kernels/ref/td_bcast_rows.h",)))
register(ref_variant("MEAN", "td_mean_s16_ref", _accepts_mean16, _prepare_mean16,
                     headers=("kernels/ref/td_mean_body.h", "kernels/ref/td_bcast_rows.h")))
register(ref_variant("SUM", "td_mean_s16_ref", _accepts_mean16, _prepare_mean16,
                     headers=("kernels/ref/td_mean_body.h", "kernels/ref/td_bcast_rows.h")))
register(ref_variant("CONCATENATION", "td_concatenation_s16_ref", _accepts_concat16,
                     _prepare_concat16, headers=("kernels/ref/td_concatenation_body.h",)))
register(ref_variant("SOFTMAX", "td_softmax_s8_s16_ref", _accepts_softmax16, _prepare_softmax16,
                     headers=("kernels/ref/td_softmax_body.h", "kernels/ref/td_gemmlowp.h")))
register(ref_variant("DEQUANTIZE", "td_dequantize_s16_ref", _accepts_dequant16,
                     _prepare_dequant16))
for _op, _sym in (("LOGISTIC", "td_logistic_s16_ref"), ("TANH", "td_tanh_s16_ref")):
    register(ref_variant(_op, _sym, _accepts_sigmoid16, _prepare_sigmoid16, inplace=True,
                         headers=("kernels/ref/td_sigmoid16.h",)))
