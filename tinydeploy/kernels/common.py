"""Prepare-time helpers shared by the op modules: TFLite's padding, activation-range and
per-channel requantization rules, and the dtype/quantization checks of `accepts` functions.

CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED and the pooling ops share their checks (int8
input/output, filter and bias, fused activation, windowed output shape) and the constants of
per-channel requantization from here, so a rule is written once and all four ops agree on the
reason a model is rejected.

All of these reproduce TFLite Micro's Prepare functions exactly (float32 scales widened to
double, ``std::round`` halves away from zero), because the C kernels only apply what is
computed here.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable, Sequence
from typing import TypeVar

import numpy as np

from tinydeploy.fixedpoint import quantize_multiplier, round_half_away
from tinydeploy.kernels.registry import ConstArray, KernelCall, KernelVariant
from tinydeploy.model.ir import (
    Activation,
    Conv2DOptions,
    DepthwiseConv2DOptions,
    DType,
    Graph,
    Operator,
    Padding,
    Tensor,
)

Param = tuple[str, int | float | str]

INT8_MIN, INT8_MAX = -128, 127
INT16_MIN, INT16_MAX = -(1 << 15), (1 << 15) - 1
REF_DIR = "kernels/ref"


def i32(values: Sequence[int]) -> np.ndarray:
    """An int32 constant array for a KernelCall (dims, strides, offsets)."""
    return np.array(values, dtype=np.int32)


def const_ints(t: Tensor | None, role: str, *, int64: bool = False
               ) -> tuple[list[int] | None, str | None]:
    """(values, None) of a constant integer index tensor (axis, permutation, begin/end,
    paddings), or (None, the reason it is unusable). It must be constant because the
    output shape may depend on it and every shape is planned statically; int32, or also
    int64 where TFLM accepts both (``int64``)."""
    if t is None:
        return None, f"{role} is missing"
    if t.data is None:
        return None, (f"{role} '{t.name}' is not constant: the output shape would depend on "
                      "data, and tinydeploy plans static shapes")
    if t.dtype.name not in (("INT32", "INT64") if int64 else ("INT32",)):
        return None, f"{role} '{t.name}' is {t.dtype.name}, int32 required"
    return [int(v) for v in np.asarray(t.data).reshape(-1)], None


def f32(x: float | np.floating) -> float:
    """The double TFLite sees for a float32 value stored in the model."""
    return float(np.float32(x))


def compute_out_size(padding: Padding, size: int, filt: int, stride: int,
                     dilation: int = 1) -> int:
    """TFLite ``ComputeOutSize``."""
    eff = (filt - 1) * dilation + 1
    if padding == Padding.SAME:
        return (size + stride - 1) // stride
    return (size + stride - eff) // stride


def compute_padding(stride: int, dilation: int, size: int, filt: int, out: int) -> int:
    """TFLite ``ComputePaddingWithOffset``: the top/left padding (the odd extra goes to the
    bottom/right and is never read explicitly: the kernels skip out-of-image taps)."""
    eff = (filt - 1) * dilation + 1
    total = (out - 1) * stride + eff - size
    total = max(total, 0)
    return total // 2


def activation_range(act: Activation, out: Tensor, limits: tuple[int, int] = (INT8_MIN, INT8_MAX)
                     ) -> tuple[int, int] | None:
    """TFLite ``CalculateActivationRangeQuantized`` for an output whose type spans ``limits``
    (int8 unless said; the 16x8 kernels pass int16's); None when the fused activation has no
    clamp form (TANH, SIGN_BIT)."""
    scale = np.float32(out.scale)
    zp = out.zero_point
    lo, hi = limits

    def q(v: float) -> int:
        with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
            x = float(np.float32(v) / scale)
        if not math.isfinite(x):
            # a scale so small (or 0) that the bound is beyond any integer: it clamps
            # nothing (0 / 0: the zero point)
            return zp if v == 0.0 else (1 << 40) if v > 0 else -(1 << 40)
        return zp + round_half_away(x)

    if act == Activation.NONE:
        return lo, hi
    if act == Activation.RELU:
        return max(lo, q(0.0)), hi
    if act == Activation.RELU6:
        return max(lo, q(0.0)), min(hi, q(6.0))
    if act == Activation.RELU_N1_TO_1:
        return max(lo, q(-1.0)), min(hi, q(1.0))
    return None


def per_channel_multipliers(input_scale: float, filter_scales: Sequence[float],
                            output_scale: float, channels: int) -> tuple[np.ndarray, np.ndarray]:
    """TFLite ``PopulateConvolutionQuantizationParams`` (int8): one (multiplier, shift) per
    output channel from in_scale * filter_scale[c] / out_scale, in double. A per-tensor
    filter scale is repeated for every channel."""
    mult = np.zeros(channels, dtype=np.int32)
    shift = np.zeros(channels, dtype=np.int32)
    for c in range(channels):
        fs = filter_scales[c] if len(filter_scales) > 1 else filter_scales[0]
        eff = f32(input_scale) * f32(fs) / f32(output_scale)
        mult[c], shift[c] = quantize_multiplier(eff)
    return mult, shift


def check_requant(inp: Tensor, filt: Tensor, out: Tensor, channels: int) -> str | None:
    """None when every output channel's effective scale (input scale x filter scale / output
    scale) has a (multiplier, shift) that the kernels can apply (shift in [-31, 30]), else the
    reason, naming the filter, the channel and the scale. A damaged or hand-made model can
    hold any scales; this is an `accepts` check so that such a model is refused, not crashed
    on, wherever its kernels are looked at."""
    assert filt.quant is not None
    _, shift = per_channel_multipliers(inp.scale, filt.quant.scale, out.scale, channels)
    bad = [c for c in range(channels) if not -31 <= int(shift[c]) <= 30]
    if not bad:
        return None
    c = bad[0]
    fs = filt.quant.scale[c] if len(filt.quant.scale) > 1 else filt.quant.scale[0]
    eff = f32(inp.scale) * f32(fs) / f32(out.scale)
    return (f"filter '{filt.name}' channel {c}: effective scale {eff:.6g} (input "
            f"'{inp.name}' {inp.scale:.6g} x filter {fs:.6g} / output '{out.name}' "
            f"{out.scale:.6g}) needs shift {int(shift[c])}, outside the kernels' [-31, 30]")


def int8_shifts(shift: np.ndarray) -> np.ndarray:
    """The per-channel shifts as the int8 array the kernels read (``const int8_t *shift``): a
    quarter of the flash of int32. Every shift of `quantize_multiplier` that a kernel can apply
    lies in [-31, 30] (td_requant.h); one outside would wrap, so it is refused here."""
    s = np.asarray(shift, dtype=np.int64).reshape(-1)
    if s.size and (int(s.min()) < -31 or int(s.max()) > 30):
        raise ValueError(f"per-channel shift range [{int(s.min())}, {int(s.max())}] is outside "
                         "[-31, 30]: an effective scale of 2^30 or more is not representable")
    return s.astype(np.int8)


@functools.cache
def private_headers(source: str) -> tuple[str, ...]:
    """The headers next to ``source`` (a path relative to firmware/) that it includes,
    directly or through one another, sorted: the private bodies a kernel's source needs
    copied beside it (``#include "x.h"`` of a file in the same folder; the shared
    firmware/kernels headers are copied into every project anyway). Empty when the source
    is not there (a variant declared before its C exists fails at build time instead)."""
    from tinydeploy.resources import firmware_dir

    root = firmware_dir()
    found: set[str] = set()
    todo = [source]
    while todo:
        path = root / todo.pop()
        if not path.is_file():
            continue
        for name in re.findall(r'^\s*#\s*include\s+"([^"/]+)"', path.read_text(), re.M):
            rel = str(path.parent.relative_to(root) / name)
            if (root / rel).is_file() and rel not in found:
                found.add(rel)
                todo.append(rel)
    return tuple(sorted(found))


def ref_variant(op: str, symbol: str, accepts: Callable[[Graph, Operator], str | None],
                prepare: Callable[[Graph, Operator], KernelCall], *, inplace: bool = False,
                source: str | None = None, headers: tuple[str, ...] = (),
                access: Callable[[KernelCall], object] | None = None) -> KernelVariant:
    """A reference kernel variant: no board feature required, priority 0, the one source
    ``kernels/ref/<symbol>.c`` unless ``source`` names another (a kernel shared by ops),
    then the private ``headers`` it includes (copied into the project, never compiled):
    those listed, then any other the source includes (`private_headers`), so a kernel
    whose body moves into a shared header needs no change where it is registered."""
    src = source or f"{REF_DIR}/{symbol}.c"
    found = tuple(h for h in private_headers(src) if h not in headers)
    return KernelVariant(op=op, impl="ref", symbol=symbol,
                         sources=(src, *headers, *found),
                         requires=frozenset(), accepts=accepts, prepare=prepare,
                         inplace=inplace, access=access)


def check_int8_tensor(t: Tensor | None, role: str, *, per_tensor: bool = True) -> str | None:
    """None if ``t`` is an int8 tensor with usable quantization, else the reason."""
    if t is None:
        return f"{role} is missing"
    if t.dtype != DType.INT8:
        return f"{role} '{t.name}' is {t.dtype.name}, int8 required"
    if t.quant is None or not t.quant.scale:
        return f"{role} '{t.name}' has no quantization parameters"
    if per_tensor and t.quant.per_channel:
        return f"{role} '{t.name}' is quantized per channel, per-tensor required"
    if any(s <= 0 for s in t.quant.scale):
        return f"{role} '{t.name}' has a non-positive scale"
    return None


def plan_reason(plan: object) -> str | None:
    """The `accepts` answer of an op's plan function, which returns either its plan or the
    reason there is none (a str): that reason, else None."""
    return plan if isinstance(plan, str) else None


def first_reason(*reasons: str | None) -> str | None:
    for r in reasons:
        if r is not None:
            return r
    return None


def io(graph: Graph, op: Operator) -> tuple[tuple[Tensor | None, ...], tuple[Tensor, ...]]:
    return graph.op_inputs(op), graph.op_outputs(op)


def optional_input(graph: Graph, op: Operator, k: int) -> Tensor | None:
    if len(op.inputs) <= k or op.inputs[k] < 0:
        return None
    return graph.tensor(op.inputs[k])


def single_io(graph: Graph, op: Operator, n_in: int, reason: TensorReason, *,
              arena_input: bool = True) -> tuple[Tensor, Tensor] | str:
    """(input 0, output) of an op with ``n_in`` inputs (the others are its constant
    parameters) and one output, both passing ``reason``, the input in the arena unless
    ``arena_input`` is False; else the reason it is not such an op."""
    ins, outs = graph.op_inputs(op), graph.op_outputs(op)
    if len(ins) != n_in or len(outs) != 1:
        return f"expects {n_in} input(s) and 1 output, has {len(ins)} and {len(outs)}"
    why = reason(ins[0], "input") or reason(outs[0], "output")
    if why:
        return why
    x = ins[0]
    assert x is not None
    if arena_input and x.is_constant:
        return f"input '{x.name}' is constant (fold the op before compiling)"
    return x, outs[0]


IoCheck = Callable[[Tensor, Tensor], str | None]


def then_check(base: Callable[[Graph, Operator], str | None], check: IoCheck
               ) -> Callable[[Graph, Operator], str | None]:
    """An `accepts` that runs ``base`` (which has checked input 0 and output 0), then
    ``check`` on those two: for an op that is another op's kernel with one more rule."""
    def accepts(graph: Graph, op: Operator) -> str | None:
        why = base(graph, op)
        if why:
            return why
        x, y = graph.op_inputs(op)[0], graph.op_outputs(op)[0]
        assert x is not None
        return check(x, y)
    return accepts


def nhwc(t: Tensor) -> tuple[int, int, int, int]:
    n, h, w, c = t.shape
    return n, h, w, c


# --- shared by CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED and the pooling ops -------------


def check_io_int8(inp: Tensor | None, out: Tensor | None) -> str | None:
    """The first reason the op's input or output is not a usable per-tensor int8 tensor."""
    return first_reason(check_int8_tensor(inp, "input"), check_int8_tensor(out, "output"))


def check_activation(act: Activation, out: Tensor,
                     limits: tuple[int, int] = (INT8_MIN, INT8_MAX)) -> str | None:
    """None when the fused activation has a clamp form for ``out``, whose type spans
    ``limits`` (see `activation_range`)."""
    if activation_range(act, out, limits) is None:
        return f"fused activation {act.name} is not supported"
    return None


def check_bias(bias: Tensor | None, channels: int) -> str | None:
    """None when ``bias`` is absent or a constant int32 tensor of ``channels`` values."""
    if bias is None:
        return None
    if bias.dtype != DType.INT32:
        return f"bias '{bias.name}' is {bias.dtype.name}, int32 required"
    if not bias.is_constant:
        return f"bias '{bias.name}' is not constant"
    if bias.size != channels:
        return f"bias '{bias.name}' has {bias.size} values for {channels} output channels"
    return None


def check_filter(filt: Tensor | None, channels: int, axis: int) -> str | None:
    """None when ``filt`` is a constant int8 filter with one scale, or one per output channel
    along ``axis``."""
    r = check_int8_tensor(filt, "filter", per_tensor=False)
    if r:
        return r
    assert filt is not None and filt.quant is not None   # check_int8_tensor checked them
    if not filt.is_constant:
        return f"filter '{filt.name}' is not constant"
    n = len(filt.quant.scale)
    if n not in (1, channels):
        return f"filter '{filt.name}' has {n} scales for {channels} output channels"
    if n > 1 and filt.quant.axis != axis:
        return f"filter '{filt.name}' is quantized along axis {filt.quant.axis}, {axis} required"
    return None


def check_conv_tensors(graph: Graph, op: Operator, layout: str, channel_axis: int
                       ) -> str | None:
    """The tensor checks CONV_2D and DEPTHWISE_CONV_2D share: int8 input and output, all
    three 4-D (``layout`` names their layouts in the reason), a filter with one scale per
    output channel along ``channel_axis`` (or one in all), an optional int32 bias."""
    inp, filt = graph.tensor(op.inputs[0]), graph.tensor(op.inputs[1])
    out = graph.tensor(op.outputs[0])
    r = check_io_int8(inp, out)
    if r:
        return r
    if len(inp.shape) != 4 or len(filt.shape) != 4 or len(out.shape) != 4:
        return f"input, filter and output must be 4-D ({layout})"
    oc = filt.shape[channel_axis]
    return first_reason(check_filter(filt, oc, channel_axis),
                        check_bias(optional_input(graph, op, 2), oc))


def check_window_output(out: Tensor, padding: Padding, inp_shape: tuple[int, ...],
                        window: tuple[int, int], stride: tuple[int, int],
                        dilation: tuple[int, int], out_c: int) -> str | None:
    """None when ``out`` has the NHWC shape TFLite computes for a 2-D window (filter or pool)
    of ``window`` = (h, w) sliding over ``inp_shape`` with ``stride`` and ``dilation``."""
    n, h, w, _ = inp_shape
    oh = compute_out_size(padding, h, window[0], stride[0], dilation[0])
    ow = compute_out_size(padding, w, window[1], stride[1], dilation[1])
    if out.shape != (n, oh, ow, out_c):
        return f"output shape {out.shape} differs from the computed {(n, oh, ow, out_c)}"
    return None


def padding_params(in_hw: tuple[int, int], window: tuple[int, int], out_hw: tuple[int, int],
                   stride: tuple[int, int], dilation: tuple[int, int] = (1, 1)
                   ) -> tuple[Param, Param]:
    """The ``pad_h`` and ``pad_w`` fields of a windowed op (see `compute_padding`)."""
    return (("pad_h", compute_padding(stride[0], dilation[0], in_hw[0], window[0], out_hw[0])),
            ("pad_w", compute_padding(stride[1], dilation[1], in_hw[1], window[1], out_hw[1])))


def weighted_tensors(graph: Graph, op: Operator
                     ) -> tuple[Tensor, Tensor, Tensor | None, Tensor]:
    """The input, filter, optional bias and output of a weighted op (CONV_2D,
    DEPTHWISE_CONV_2D, FULLY_CONNECTED; inputs 0 to 2 and output 0), in that order."""
    return (graph.tensor(op.inputs[0]), graph.tensor(op.inputs[1]), optional_input(graph, op, 2),
            graph.tensor(op.outputs[0]))


# --- shared by CONV_2D and DEPTHWISE_CONV_2D, int8 and 16x8 --------------------------------

ConvOptions = Conv2DOptions | DepthwiseConv2DOptions
ConvReason = Callable[[Graph, Operator], str | None]
ShapeReason = Callable[[ConvOptions, Tensor, Tensor], str | None]


def conv_channels(opts: ConvOptions, filt: Tensor) -> int:
    """The output channels of a convolution: the filter's first dimension (OHWI), or its last
    for a depthwise one (1HWC)."""
    return filt.shape[3] if isinstance(opts, DepthwiseConv2DOptions) else filt.shape[0]


def groups_reason(opts: ConvOptions, inp: Tensor, filt: Tensor) -> str | None:
    """None when a CONV_2D's input channels split into groups that its filter (OHWI) and
    output channels fit (int8 and 16x8 alike); a reason for zero or negative channel counts
    too, so that no count is divided by 0."""
    oc, c, fc = filt.shape[0], inp.shape[3], filt.shape[3]
    if fc <= 0 or c <= 0 or c % fc:
        return f"input channels {c} are not a positive multiple of the filter's {fc}"
    if oc % (c // fc):
        return f"output channels {oc} are not a multiple of the {c // fc} groups"
    return None


def depth_multiplier_reason(opts: ConvOptions, inp: Tensor, filt: Tensor) -> str | None:
    """None when a DEPTHWISE_CONV_2D's filter is [1, H, W, C * M] for its C input channels and
    its depth multiplier M (int8 and 16x8 alike)."""
    assert isinstance(opts, DepthwiseConv2DOptions)
    oc, c = filt.shape[3], inp.shape[3]
    if filt.shape[0] != 1:
        return f"filter '{filt.name}' has leading dimension {filt.shape[0]}, 1 required"
    if c == 0 or oc % c:
        return f"filter channels {oc} are not a multiple of the input channels {c}"
    if opts.depth_multiplier != oc // c:
        return (f"depth_multiplier {opts.depth_multiplier} does not match "
                f"{oc} filter channels / {c} input channels")
    return None


def check_conv_op(graph: Graph, op: Operator, options: type[ConvOptions],
                  tensors_reason: ConvReason, shape_reason: ShapeReason,
                  limits: tuple[int, int] = (INT8_MIN, INT8_MAX)) -> str | None:
    """The `accepts` of every convolution (int8 and 16x8, regular and depthwise), in this
    order: its ``options`` type, ``tensors_reason`` (dtypes, ranks, filter and bias),
    ``shape_reason`` (how input, filter and output channels relate), then a fused activation
    with a clamp form for an output spanning ``limits`` and the output shape TFLite computes
    for the filter window. The first reason wins, so an op is refused for the same reason
    whichever variant looks at it."""
    opts = op.options
    if not isinstance(opts, options):
        return f"missing {options.__name__}"
    why = tensors_reason(graph, op)
    if why:
        return why
    inp, filt, _, out = weighted_tensors(graph, op)
    return (shape_reason(opts, inp, filt) or check_activation(opts.activation, out, limits)
            or check_window_output(out, opts.padding, inp.shape, (filt.shape[1], filt.shape[2]),
                                   (opts.stride_h, opts.stride_w),
                                   (opts.dilation_h, opts.dilation_w), conv_channels(opts, filt))
            or check_requant(inp, filt, out, conv_channels(opts, filt)))


def conv_geometry(opts: ConvOptions, inp: Tensor, filt: Tensor, out: Tensor
                  ) -> tuple[Param, ...]:
    """The shape and window fields that open every convolution's params struct, in their
    declaration order: ``batches, in_h, in_w, in_c, out_h, out_w, out_c``, then
    ``depth_multiplier`` (depthwise), ``filter_h, filter_w``, ``filter_c`` (regular), then
    ``stride_h/w, dilation_h/w, pad_h/w`` (padding as TFLite computes it for ``out``)."""
    n, h, w, c = inp.shape
    _, oh, ow, _ = out.shape
    fh, fw = filt.shape[1], filt.shape[2]
    oc = conv_channels(opts, filt)
    depthwise = isinstance(opts, DepthwiseConv2DOptions)
    stride, dilation = (opts.stride_h, opts.stride_w), (opts.dilation_h, opts.dilation_w)
    return (("batches", n), ("in_h", h), ("in_w", w), ("in_c", c),
            ("out_h", oh), ("out_w", ow), ("out_c", oc),
            *((("depth_multiplier", oc // c),) if depthwise else ()),
            ("filter_h", fh), ("filter_w", fw),
            *(() if depthwise else (("filter_c", filt.shape[3]),)),
            ("stride_h", stride[0]), ("stride_w", stride[1]),
            ("dilation_h", dilation[0]), ("dilation_w", dilation[1]),
            *padding_params((h, w), (fh, fw), (oh, ow), stride, dilation))


def conv_call_s8(graph: Graph, op: Operator, symbol: str, params_type: str) -> KernelCall:
    """The call of an int8 convolution (regular or depthwise; `check_conv_op` accepted it):
    `conv_geometry`, the input and output offsets, the clamp, the `per_channel_requant`
    arrays."""
    opts = op.options
    assert isinstance(opts, (Conv2DOptions, DepthwiseConv2DOptions))
    inp, filt, bias, out = weighted_tensors(graph, op)
    consts, act, pointers = per_channel_requant(inp, filt, bias, out, opts.activation,
                                                conv_channels(opts, filt))
    params = (*conv_geometry(opts, inp, filt, out),
              ("input_offset", -inp.zero_point), ("output_offset", out.zero_point),
              ("act_min", act[0]), ("act_max", act[1]), *pointers)
    return KernelCall(symbol, params_type, params, consts, ("in0", "out0"))


def per_channel_requant(inp: Tensor, filt: Tensor, bias: Tensor | None, out: Tensor,
                        act: Activation, channels: int
                        ) -> tuple[tuple[ConstArray, ...], tuple[int, int], tuple[Param, ...]]:
    """What CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED prepare alike: the const arrays
    ``filter`` (int8, in the file's layout), ``bias`` (int32, when present), ``mult`` and
    ``shift`` (int32 and int8, one per output channel), in that order; the activation's clamp range;
    and the pointer fields ``filter, bias, mult, shift`` of the params (``bias`` is NULL when
    the op has none). The caller's `accepts` has checked every tensor."""
    assert filt.quant is not None
    mult, shift = per_channel_multipliers(inp.scale, filt.quant.scale, out.scale, channels)
    rng = activation_range(act, out)
    assert rng is not None
    consts = [ConstArray("filter", "int8_t", np.asarray(filt.data, np.int8).reshape(-1)),
              ConstArray("mult", "int32_t", mult),
              ConstArray("shift", "int8_t", int8_shifts(shift))]
    if bias is not None:
        consts.insert(1, ConstArray("bias", "int32_t",
                                    np.asarray(bias.data, np.int32).reshape(-1)))
    pointers: tuple[Param, ...] = (
        ("filter", "@filter"), ("bias", "@bias" if bias is not None else "NULL"),
        ("mult", "@mult"), ("shift", "@shift"))
    return tuple(consts), rng, pointers


# --- copy ops: one body for int8 and int16 ------------------------------------------------

TensorReason = Callable[[Tensor | None, str], str | None]


def elem_variants(op: str, stem: str, elems: Sequence[tuple[str, TensorReason]],
                  accepts: Callable[[Graph, Operator, TensorReason], str | None],
                  prepare: Callable[[Graph, Operator, TensorReason, str], KernelCall], *,
                  headers: tuple[str, ...] = ()) -> list[KernelVariant]:
    """The reference variants of a pure data-movement op, one per element type: for each
    (short, tensor_reason) of ``elems`` (("s8", int8 check), ("s16", int16 check)) the kernel
    ``td_<stem>_<short>_ref``, whose `accepts` runs the op's checks with that element
    check and whose `prepare` is told the symbol. Such ops copy stored values and never
    requantize, so the host's counts, offsets and strides are in elements and the same for
    both types; the C kernels of both include one body (``headers``, typically
    ``td_<stem>_body.h``)."""
    variants = []
    for short, reason in elems:
        symbol = f"td_{stem}_{short}_ref"

        def acc(graph: Graph, op_: Operator, reason: TensorReason = reason) -> str | None:
            return accepts(graph, op_, reason)

        def prep(graph: Graph, op_: Operator, reason: TensorReason = reason,
                 symbol: str = symbol) -> KernelCall:
            return prepare(graph, op_, reason, symbol)

        variants.append(ref_variant(op, symbol, acc, prep, headers=headers))
    return variants


Plan = TypeVar("Plan")


def planned_variants(op: str, stem: str, elems: Sequence[tuple[str, TensorReason]],
                     plan: Callable[[Graph, Operator, TensorReason], Plan | str],
                     call: Callable[[Graph, Operator, Plan, str], KernelCall], *,
                     headers: tuple[str, ...] = ()) -> list[KernelVariant]:
    """`elem_variants` of an op whose checks and call derive from one ``plan`` function,
    which returns the op's plan or the reason it has none: `accepts` is that reason, and
    `prepare` passes the plan (with the symbol) to ``call``. So what is checked and what is
    emitted are computed once, and cannot disagree."""
    def accepts(graph: Graph, op_: Operator, reason: TensorReason) -> str | None:
        return plan_reason(plan(graph, op_, reason))

    def prepare(graph: Graph, op_: Operator, reason: TensorReason, symbol: str) -> KernelCall:
        found = plan(graph, op_, reason)
        assert not isinstance(found, str), found
        return call(graph, op_, found, symbol)

    return elem_variants(op, stem, elems, accepts, prepare, headers=headers)


def parts_reason(parts: Sequence[Tensor | None], whole: Tensor, axis: int, roles: tuple[str, str],
                 reason: TensorReason,
                 part_reason: Callable[[int, Tensor], str | None] | None = None) -> str | None:
    """None when ``parts`` are the pieces of ``whole`` cut along ``axis`` (CONCATENATION's
    inputs of its output, SPLIT's outputs of its input): each passes ``reason`` and
    ``part_reason`` (its index, itself), has the rank of ``whole`` and its extent off the
    axis, and their extents along it add up to the whole's. ``roles`` names a part and the
    whole in the reasons ("input", "output")."""
    part, whole_role = roles
    rank = len(whole.shape)
    total = 0
    for k, t in enumerate(parts):
        why = reason(t, f"{part} {k}")
        if why:
            return why
        assert t is not None
        why = part_reason(k, t) if part_reason is not None else None
        if why:
            return why
        if len(t.shape) != rank or any(t.shape[d] != whole.shape[d]
                                       for d in range(rank) if d != axis):
            return (f"{part} {k} shape {list(t.shape)} does not fit {whole_role} "
                    f"{list(whole.shape)}")
        total += t.shape[axis]
    if total != whole.shape[axis]:
        return (f"{part}s add up to {total} along axis {axis}, the {whole_role} has "
                f"{whole.shape[axis]}")
    return None


def int16_reason(t: Tensor | None, role: str) -> str | None:
    """None when ``t`` is a per-tensor int16 tensor with zero point 0."""
    if t is None:
        return f"{role} is missing"
    if t.dtype is not DType.INT16:
        return f"{role} '{t.name}' is {t.dtype.name}, INT16 required (16x8 variant)"
    if t.quant is None or len(t.quant.scale) != 1 or not t.quant.scale[0] > 0:
        return f"{role} '{t.name}' is not per-tensor quantized"
    if t.quant.zero_point[0] != 0:
        return f"{role} '{t.name}' has zero point {t.quant.zero_point[0]}; 16x8 requires 0"
    return None
