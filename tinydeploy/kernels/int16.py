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
    INT16_MAX,
    INT16_MIN,
    ConvReason,
    activation_range,
    check_activation,
    check_conv_op,
    conv_channels,
    conv_geometry,
    depth_multiplier_reason,
    f32,
    groups_reason,
    int8_shifts,
    int16_reason,
    optional_input,
    per_channel_multipliers,
    ref_variant,
    weighted_tensors,
)
from tinydeploy.kernels.elementwise import (
    BCAST_DIMS,
    add_params,
    broadcast_shape,
    broadcast_strides,
    fused_activation,
)
from tinydeploy.kernels.fully_connected import check_fc_op
from tinydeploy.kernels.pooling import pool_prepare, pool_reason
from tinydeploy.kernels.registry import ConstArray, KernelCall, register
from tinydeploy.kernels.softmax import softmax_s8_prepare, softmax_s8_reason
from tinydeploy.model.ir import (
    Activation,
    Conv2DOptions,
    DepthwiseConv2DOptions,
    DType,
    FullyConnectedOptions,
    Graph,
    Operator,
    SoftmaxOptions,
    Tensor,
)

INT16_LIMITS = (INT16_MIN, INT16_MAX)
_SHORT = {DType.INT8: "s8", DType.INT16: "s16", DType.INT32: "s32"}


def activation_range16(act: Activation, out: Tensor) -> tuple[int, int] | None:
    """TFLite CalculateActivationRangeQuantized for an int16 output (zero point 0)."""
    return activation_range(act, out, INT16_LIMITS)


# TensorType INT32 in an op's ``quantized_bias_type`` option
_TENSOR_TYPE_INT32 = 2


def _weights_reason(filt: Tensor | None, bias: Tensor | None, oc: int, axis: int,
                    bias_type: DType | None = DType.INT64,
                    declared_bias_type: int = 0) -> str | None:
    """The filter and bias checks of the 16x8 weighted ops; ``bias_type`` is the bias dtype
    of the variant (INT64, or INT32 for the _b32 kernels, which also need a bias; None: the
    op has no int32-bias path in TFLM). ``declared_bias_type`` is the op's
    ``quantized_bias_type`` option: TFLM takes its int32-accumulator path when it says INT32
    even without a bias tensor, which no variant here implements, so such an op is refused
    rather than computed on the int64 path (other bytes)."""
    if bias is None and declared_bias_type == _TENSOR_TYPE_INT32:
        return ("no bias, but the op's quantized_bias_type option is INT32 (TFLM's int32 "
                "accumulator path without a bias is not implemented); re-export with a bias "
                "or without the int32 bias option")
    if filt is None or filt.dtype is not DType.INT8 or filt.quant is None or filt.data is None:
        return "filter must be a constant int8 tensor"
    n = len(filt.quant.scale)
    if n not in (1, oc) or any(z != 0 for z in filt.quant.zero_point):
        return f"filter '{filt.name}' has {n} scales for {oc} channels or non-zero zero points"
    if n > 1 and filt.quant.axis != axis:
        return f"filter '{filt.name}' is quantized along axis {filt.quant.axis}, {axis} required"
    if bias_type is DType.INT32 and bias is None:
        return "no bias (this variant: an int32 bias)"
    if bias is not None:
        if bias_type is None and bias.dtype is not DType.INT64:
            return (f"bias '{bias.name}' is {bias.dtype.name}; TFLM's 16x8 kernel of this op "
                    "reads an int64 bias")
        if bias_type is not None and bias.dtype is not bias_type:
            return (f"bias '{bias.name}' is {bias.dtype.name} (this variant: "
                    f"{bias_type.name} bias)")
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
    field = "bias"
    if bias is not None:
        assert bias.data is not None
        if bias.dtype is DType.INT32:
            field = "bias32"
            consts.append(ConstArray(field, "int32_t",
                                     np.asarray(bias.data, np.int32).reshape(-1)))
        else:
            consts.append(ConstArray(field, "int64_t",
                                     np.asarray(bias.data, np.int64).reshape(-1)))
    return tuple(consts), (("filter", "@filter"), (field, f"@{field}" if bias else "NULL"),
                           ("mult", "@mult"), ("shift", "@shift"))


def _symbol16(stem: str, graph: Graph, op: Operator) -> str:
    """``<stem>_ref``, or ``<stem>_b32_ref`` when the op's bias is int32 (TFLM's int32
    accumulator path)."""
    bias = optional_input(graph, op, 2)
    return f"{stem}_b32_ref" if bias is not None and bias.dtype is DType.INT32 else \
        f"{stem}_ref"


# --- FULLY_CONNECTED 16x8 -----------------------------------------------------------------


def _accepts_fc(graph: Graph, op: Operator, bias_type: DType = DType.INT64) -> str | None:
    def weights(opts: FullyConnectedOptions, filt: Tensor, bias: Tensor | None) -> str | None:
        depth = filt.shape[1]
        if depth >= (1 << 16):
            return f"accumulation depth {depth} could exceed TFLite's int64 requantize range"
        return _weights_reason(filt, bias, filt.shape[0], 0, bias_type,
                               opts.quantized_bias_type)
    return check_fc_op(graph, op, _io16, weights, INT16_LIMITS)


def _prepare_fc(graph: Graph, op: Operator) -> KernelCall:
    opts = op.options
    assert isinstance(opts, FullyConnectedOptions)
    x, filt, bias, out = weighted_tensors(graph, op)
    oc, depth = filt.shape
    consts, pointers = _requant_consts(x, filt, bias, out, oc)
    act = activation_range16(opts.activation, out)
    assert act is not None
    params = (("batches", out.size // oc), ("accum_depth", depth), ("out_c", oc),
              ("act_min", act[0]), ("act_max", act[1]), *pointers)
    return KernelCall(_symbol16("td_fully_connected_s16", graph, op),
                      "td_fully_connected_s16_params_t", params,
                      consts, ("in0", "out0"))


# --- CONV_2D 16x8 -------------------------------------------------------------------------


def _conv_tensors16(bias_type: DType | None, layout: str, channel_axis: int) -> ConvReason:
    """The tensor checks of a 16x8 convolution: int16 input and output, 4-D input and filter
    (``layout`` names the filter's), int8 weights with one scale per channel along
    ``channel_axis`` and a ``bias_type`` bias (see `_weights_reason`)."""
    def reason(graph: Graph, op: Operator) -> str | None:
        x, filt, bias, out = weighted_tensors(graph, op)
        why = _io16(x, out)
        if why:
            return why
        if len(x.shape) != 4 or len(filt.shape) != 4 or (layout == "1HWC" and filt.shape[0] != 1):
            return ("input must be 4-D and the filter [1, H, W, C*M]" if layout == "1HWC" else
                    "input and filter must be 4-D")
        declared = op.options.quantized_bias_type \
            if isinstance(op.options, Conv2DOptions) else 0
        return _weights_reason(filt, bias, filt.shape[channel_axis], channel_axis, bias_type,
                               declared)
    return reason


def _accepts_conv(graph: Graph, op: Operator, bias_type: DType = DType.INT64) -> str | None:
    return check_conv_op(graph, op, Conv2DOptions, _conv_tensors16(bias_type, "OHWI", 0),
                         groups_reason, INT16_LIMITS)


def _prepare_conv(graph: Graph, op: Operator) -> KernelCall:
    """A 16x8 convolution's call (regular or depthwise): `conv_geometry`, the int16 clamp,
    the `_requant_consts` arrays."""
    opts = op.options
    assert isinstance(opts, (Conv2DOptions, DepthwiseConv2DOptions))
    x, filt, bias, out = weighted_tensors(graph, op)
    consts, pointers = _requant_consts(x, filt, bias, out, conv_channels(opts, filt))
    act = activation_range16(opts.activation, out)
    assert act is not None
    params = (*conv_geometry(opts, x, filt, out), ("act_min", act[0]), ("act_max", act[1]),
              *pointers)
    if isinstance(opts, DepthwiseConv2DOptions):
        return KernelCall("td_dwconv2d_s16_ref", "td_dwconv2d_s16_params_t", params, consts,
                          ("in0", "out0"))
    return KernelCall(_symbol16("td_conv2d_s16", graph, op), "td_conv2d_s16_params_t", params,
                      consts, ("in0", "out0"))


# --- DEPTHWISE_CONV_2D 16x8, AVERAGE_POOL_2D / MAX_POOL_2D int16 ---------------------------


def _accepts_dw(graph: Graph, op: Operator) -> str | None:
    return check_conv_op(graph, op, DepthwiseConv2DOptions,
                         _conv_tensors16(None, "1HWC", 3), depth_multiplier_reason, INT16_LIMITS)


def _accepts_pool(graph: Graph, op: Operator) -> str | None:
    return pool_reason(graph, op, _io16)


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


Binary16Check = Callable[[Operator, Tensor, Tensor, Tensor], str | None]


def _binary16_accepts(*checks: Binary16Check) -> Callable[[Graph, Operator], str | None]:
    """The `accepts` of an int16 binary op: `_operands16_reason`, then each of ``checks`` on
    (op, input 0, input 1, output) in order; the first reason wins."""
    def accepts(graph: Graph, op: Operator) -> str | None:
        why = _operands16_reason(graph, op)
        if why:
            return why
        (a, b), out = graph.op_inputs(op), graph.op_outputs(op)[0]
        assert a is not None and b is not None
        for check in checks:
            why = check(op, a, b, out)
            if why:
                return why
        return None
    return accepts


def _rank16_reason(limit: int) -> Binary16Check:
    """A check that no operand has more than ``limit`` dimensions."""
    def reason(op: Operator, a: Tensor, b: Tensor, out: Tensor) -> str | None:
        if max(len(a.shape), len(b.shape), len(out.shape)) > limit:
            return f"rank above {limit}"
        return None
    return reason


def _broadcast16_reason(op: Operator, a: Tensor, b: Tensor, out: Tensor) -> str | None:
    """None when the int16 binary op's two inputs broadcast to exactly its output."""
    bs = broadcast_shape(a.shape, b.shape)
    if bs is None or int(np.prod(bs)) != out.size:
        return f"shapes {list(a.shape)} and {list(b.shape)} do not broadcast to the output"
    return None


def _activation16_reason(op: Operator, a: Tensor, b: Tensor, out: Tensor) -> str | None:
    """None when the op's fused activation (NONE without ActivationOptions) has an int16
    range on ``out``."""
    return check_activation(fused_activation(op), out, INT16_LIMITS)


def _add16_scale_reason(op: Operator, a: Tensor, b: Tensor, out: Tensor) -> str | None:
    """None when the inputs, shifted left by ADD16_LEFT_SHIFT, fit the output's scale."""
    twice_max = 2.0 * max(f32(a.scale), f32(b.scale))
    if not twice_max / ((1 << ADD16_LEFT_SHIFT) * f32(out.scale)) < 1.0:
        return f"output scale {out.scale:g} is too small for input scales {a.scale:g}, {b.scale:g}"
    return None


def _mul16_rank_reason(op: Operator, a: Tensor, b: Tensor, out: Tensor) -> str | None:
    if max(len(a.shape), len(b.shape), len(out.shape)) > 4 and a.shape != b.shape:
        return "TFLM broadcasts int16 MUL up to 4-D"
    return None


# ADD and SUB (TFLM computes both in this scheme for int16), and MUL.
_accepts_add16 = _binary16_accepts(_rank16_reason(BCAST_DIMS), _broadcast16_reason,
                                   _activation16_reason, _add16_scale_reason)
_accepts_mul16 = _binary16_accepts(_mul16_rank_reason, _broadcast16_reason,
                                   _activation16_reason)


def _broadcast16_call(graph: Graph, op: Operator, symbol: str, params_type: str,
                      head: tuple[tuple[str, int | float | str], ...]) -> KernelCall:
    """The call of a broadcasting int16 binary op (ADD, SUB, MUL): its own requantization
    fields ``head``, then the int16 clamp and the broadcast dims and strides (no constant
    operand: `_operands16_reason` keeps both in the arena)."""
    (a, b), out = graph.op_inputs(op), graph.op_outputs(op)[0]
    assert a is not None and b is not None
    rng = activation_range16(fused_activation(op), out)
    assert rng is not None
    bs = broadcast_shape(a.shape, b.shape)
    assert bs is not None
    dims, st0, st1 = broadcast_strides(a.shape, b.shape, bs)
    params = (*head, ("act_min", rng[0]), ("act_max", rng[1]), ("out_dims", "@out_dims"),
              ("in0_strides", "@in0_strides"), ("in1_strides", "@in1_strides"),
              ("in1_const", "NULL"))
    return KernelCall(symbol, params_type, params,
                      (ConstArray("out_dims", "int32_t", np.array(dims, np.int32)),
                       ConstArray("in0_strides", "int32_t", np.array(st0, np.int32)),
                       ConstArray("in1_strides", "int32_t", np.array(st1, np.int32))),
                      ("in0", "in1", "out0"))


def _prepare_add16(graph: Graph, op: Operator) -> KernelCall:
    a, b = graph.op_inputs(op)
    out = graph.op_outputs(op)[0]
    assert a is not None and b is not None
    q = add_params(a.scale, 0, b.scale, 0, out.scale, 0, ADD16_LEFT_SHIFT)
    symbol = "td_sub_s16_ref" if op.opcode == "SUB" else "td_add_s16_ref"
    return _broadcast16_call(graph, op, symbol, "td_add_params_t", tuple(q.items()))


def _prepare_mul16(graph: Graph, op: Operator) -> KernelCall:
    a, b = graph.op_inputs(op)
    out = graph.op_outputs(op)[0]
    assert a is not None and b is not None
    mult, shift = quantize_multiplier(f32(a.scale) * f32(b.scale) / f32(out.scale))
    return _broadcast16_call(graph, op, "td_mul_s16_ref", "td_mul_params_t", (
        ("in0_offset", 0), ("in1_offset", 0), ("out_offset", 0), ("out_mult", mult),
        ("out_shift", shift)))


# --- MAXIMUM / MINIMUM int16 ------------------------------------------------------------------

MINMAX16_DIMS = 6


def _minmax16_scale_reason(op: Operator, a: Tensor, b: Tensor, out: Tensor) -> str | None:
    """TFLM's int16 MAXIMUM/MINIMUM compare the stored values: both inputs and the output
    must share one scale (zero points are 0)."""
    for t in (a, b):
        if f32(t.scale) != f32(out.scale):
            return (f"input '{t.name}' has scale {t.scale:g}, the output {out.scale:g}: TFLM's "
                    f"int16 {op.opcode} compares raw values, so all three must share one scale")
    return None


_accepts_minmax16 = _binary16_accepts(_rank16_reason(MINMAX16_DIMS), _broadcast16_reason,
                                      _minmax16_scale_reason)


def _prepare_minmax16(graph: Graph, op: Operator) -> KernelCall:
    from tinydeploy.kernels.binary import binary_call

    symbol = "td_maximum_s16_ref" if op.opcode == "MAXIMUM" else "td_minimum_s16_ref"
    return binary_call(symbol, graph, op, {"act_min": INT16_MIN, "act_max": INT16_MAX})


# --- MEAN / SUM, CONCATENATION int16 ----------------------------------------------------


def _io16(x: Tensor | None, y: Tensor | None) -> str | None:
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


def _softmax16_output_reason(out: Tensor) -> str | None:
    if out.dtype is not DType.INT16 or out.quant is None or len(out.quant.scale) != 1:
        return f"output '{out.name}' is {out.dtype.name} (this variant: per-tensor INT16)"
    if out.zero_point != INT16_MIN or abs(out.scale - 1 / 65536) > 0.001 / 65536:
        return (f"output '{out.name}' has scale {out.scale:g} and zero point {out.zero_point}; "
                "TFLM requires 1/65536 and -32768 for int8 -> int16 softmax")
    return None


def _accepts_softmax16(graph: Graph, op: Operator) -> str | None:
    return softmax_s8_reason(graph, op, _softmax16_output_reason)


# --- SOFTMAX int16 -> int16 ------------------------------------------------------------------

LUT16_SIZE = 513   # TFLite's int16 tables: 512 steps and the end point


def lut16_populate(input_scale: float, input_zp: int, output_scale: float,
                   transform: Callable[[np.float32], np.float32]) -> np.ndarray:
    """TFLite's ``LUTPopulateInt16<float>`` (output zero point 0): 512 samples of
    ``transform`` over the input range and the end point, each lowered by half the error of
    linear interpolation at the interval's midpoint, all in float32 as TFLite (so the
    device's ``LUTLookup`` interpolation is unbiased)."""
    f = np.float32
    scale_in, scale_out = f(input_scale), f(output_scale)
    in_min = f(scale_in * f(INT16_MIN - input_zp))
    in_max = f(scale_in * f(INT16_MAX - input_zp))
    out_min = f(scale_out * f(INT16_MIN))
    out_max = f(scale_out * f(INT16_MAX))
    steps = LUT16_SIZE - 1
    step = f(f(in_max - in_min) / f(steps))
    half = f(step / f(2))
    inv = f(f(65536) / f(out_max - out_min))

    def rnd(v: np.float32) -> np.float32:
        return f(round_half_away(float(v)))

    def clamp(v: np.float32) -> int:
        return int(min(max(v, f(INT16_MIN)), f(INT16_MAX)))

    lut = []
    for i in range(steps):
        x0 = f(in_min + f(f(i) * step))
        val = transform(x0)
        mid = transform(f(x0 + half))
        nxt = transform(f(in_min + f(f(i + 1) * step)))
        sample = rnd(f(val * inv))
        interp = rnd(f(f(f(nxt * inv) + sample) / f(2)))
        bias = rnd(f(f(interp - rnd(f(mid * inv))) / f(2)))
        lut.append(clamp(f(sample - bias)))
    lut.append(clamp(rnd(f(transform(in_max) * inv))))
    return np.array(lut, dtype=np.int16)


def softmax16_tables() -> tuple[np.ndarray, np.ndarray]:
    """TFLM's int16 SOFTMAX tables: exp over [-10, 0] and 1 / (1 + x) over [0, 1], both
    into Q0.15 (the same for every model)."""
    from tinydeploy.kernels.unary import exp32

    rng = INT16_MAX - INT16_MIN
    f = np.float32
    exp_lut = lut16_populate(float(f(10.0) / f(rng)), INT16_MAX, float(f(2.0) / f(rng)),
                             exp32)
    inv_lut = lut16_populate(float(f(1.0) / f(rng)), INT16_MIN, float(f(2.0) / f(rng)),
                             lambda v: f(f(1.0) / f(f(1.0) + v)))
    return exp_lut, inv_lut


def _accepts_softmax_s16(graph: Graph, op: Operator) -> str | None:
    if not isinstance(op.options, SoftmaxOptions):
        return "missing SoftmaxOptions"
    x, out = graph.tensor(op.inputs[0]), graph.tensor(op.outputs[0])
    why = _io16(x, out)
    if why:
        return why
    if abs(out.scale - 1 / 32768) > 0.001 / 32768:
        return (f"output '{out.name}' has scale {out.scale:g}; TFLM requires 1/32768 for "
                "int16 softmax")
    if not x.shape or x.shape != out.shape:
        return f"shapes {list(x.shape)} -> {list(out.shape)} differ"
    mult, shift = quantize_multiplier(f32(x.scale) * f32(op.options.beta) / (10.0 / 65535.0))
    if mult == 0 or shift > 30:
        return f"input scale {x.scale:g} with beta {op.options.beta:g} is outside TFLM's range"
    return None


def _prepare_softmax_s16(graph: Graph, op: Operator) -> KernelCall:
    assert isinstance(op.options, SoftmaxOptions)
    x = graph.tensor(op.inputs[0])
    mult, shift = quantize_multiplier(f32(x.scale) * f32(op.options.beta) / (10.0 / 65535.0))
    exp_lut, inv_lut = softmax16_tables()
    depth = x.shape[-1]
    return KernelCall("td_softmax_s16_ref", "td_softmax_s16_params_t",
                      (("rows", x.size // depth), ("depth", depth), ("mult", mult),
                       ("shift", shift), ("exp_lut", "@exp_lut"), ("inv_lut", "@inv_lut")),
                      (ConstArray("exp_lut", "int16_t", exp_lut),
                       ConstArray("inv_lut", "int16_t", inv_lut)), ("in0", "out0"))


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

def sigmoid16_table() -> np.ndarray:
    """TFLite's 256-entry sigmoid table (`recurrent.SIGMOID_TABLE_Q16`, measured from the
    interpreter) as the kernels' uint16 constant array."""
    from tinydeploy.kernels.recurrent import SIGMOID_TABLE_Q16

    return np.array(SIGMOID_TABLE_Q16, dtype=np.uint16)


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


for _op, _stem, _acc, _prep in (
        ("FULLY_CONNECTED", "td_fully_connected_s16", _accepts_fc, _prepare_fc),
        ("CONV_2D", "td_conv2d_s16", _accepts_conv, _prepare_conv)):
    for _suffix, _bias in (("", DType.INT64), ("_b32", DType.INT32)):
        register(ref_variant(
            _op, f"{_stem}{_suffix}_ref",
            lambda g, o, _a=_acc, _b=_bias: _a(g, o, _b), _prep,  # type: ignore[misc]
            headers=(f"kernels/ref/{_stem.replace('_s16', '')}_body.h",
                     "kernels/ref/td_accum.h", "kernels/ref/td_requant64.h")))
register(ref_variant("DEPTHWISE_CONV_2D", "td_dwconv2d_s16_ref", _accepts_dw, _prepare_conv,
                     headers=("kernels/ref/td_dwconv2d_body.h", "kernels/ref/td_accum.h",
                              "kernels/ref/td_requant64.h")))
for _op, _sym in (("AVERAGE_POOL_2D", "td_avgpool2d_s16_ref"),
                  ("MAX_POOL_2D", "td_maxpool2d_s16_ref")):
    register(ref_variant(_op, _sym, _accepts_pool, pool_prepare(_sym, (INT16_MIN, INT16_MAX)),
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
                     headers=("kernels/ref/td_bcast_rows.h", "kernels/ref/td_addsub_one.h")))
register(ref_variant("SUB", "td_sub_s16_ref", _accepts_add16, _prepare_add16, inplace=True,
                     headers=("kernels/ref/td_bcast_rows.h", "kernels/ref/td_addsub_one.h")))
register(ref_variant("MUL", "td_mul_s16_ref", _accepts_mul16, _prepare_mul16, inplace=True,
                     headers=("kernels/ref/td_bcast_rows.h", "kernels/ref/td_mul_one.h")))
register(ref_variant("MEAN", "td_mean_s16_ref", _accepts_mean16, _prepare_mean16,
                     headers=("kernels/ref/td_mean_body.h", "kernels/ref/td_bcast_rows.h")))
register(ref_variant("SUM", "td_mean_s16_ref", _accepts_mean16, _prepare_mean16,
                     headers=("kernels/ref/td_mean_body.h", "kernels/ref/td_bcast_rows.h")))
register(ref_variant("CONCATENATION", "td_concatenation_s16_ref", _accepts_concat16,
                     _prepare_concat16, headers=("kernels/ref/td_concatenation_body.h",)))
register(ref_variant("SOFTMAX", "td_softmax_s8_s16_ref", _accepts_softmax16,
                     softmax_s8_prepare("td_softmax_s8_s16_ref"),
                     headers=("kernels/ref/td_softmax_body.h", "kernels/ref/td_gemmlowp.h")))
register(ref_variant("DEQUANTIZE", "td_dequantize_s16_ref", _accepts_dequant16,
                     _prepare_dequant16))
for _op, _sym in (("LOGISTIC", "td_logistic_s16_ref"), ("TANH", "td_tanh_s16_ref")):
    register(ref_variant(_op, _sym, _accepts_sigmoid16, _prepare_sigmoid16, inplace=True,
                         headers=("kernels/ref/td_sigmoid16.h",)))
register(ref_variant("SOFTMAX", "td_softmax_s16_ref", _accepts_softmax_s16, _prepare_softmax_s16,
                     headers=("kernels/ref/td_lut16.h",)))
for _op, _sym in (("MAXIMUM", "td_maximum_s16_ref"), ("MINIMUM", "td_minimum_s16_ref")):
    register(ref_variant(_op, _sym, _accepts_minmax16, _prepare_minmax16, inplace=True))
