"""int8 data-movement and reduction ops: PAD, PADV2, CONCATENATION, STRIDED_SLICE, MEAN.

All index arithmetic is done here, on the host, from static shapes and constant index
tensors, following TFLite Micro's Prepare and reference Eval exactly; the C kernels only walk
precomputed extents and strides:

* PAD/PADV2 (`td_pad_s8_ref`): right-aligned to 5-D; the pad byte is the output zero point
  (PAD) or the constant value (PADV2, which TFLM requires to share the output's scale and
  zero point). Bytes are copied without requantization, as in TFLM.
* CONCATENATION (`td_concatenation_s8_ref`, variadic): TFLM's int8 kernel requires every
  input to have exactly the output's scale and zero point, and no fused activation; anything
  else is rejected with that reason.
* STRIDED_SLICE (`td_strided_slice_s8_ref`): begin/end/strides and the begin/end/shrink
  masks are resolved with TFLM's 5-D StridedSlice logic into (start offset, counts, steps).
  TFLM drops ellipsis and new-axis masks and the ``offset`` option, so models using them
  are rejected rather than silently mis-sliced.
* MEAN (`td_mean_s8_ref`): TFLM's int8 path (QuantizedMeanOrSum): int32 sums in a scratch
  buffer, then one requantization whose multiplier folds in 1/count.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from tinydeploy.fixedpoint import quantize_multiplier
from tinydeploy.kernels.activations import int8_per_tensor_reason
from tinydeploy.kernels.common import (
    TensorReason,
    const_ints,
    elem_variants,
    f32,
    i32,
    parts_reason,
    ref_variant,
)
from tinydeploy.kernels.layout import COPY_ELEMS, gather_io
from tinydeploy.kernels.registry import ConstArray, KernelCall, register
from tinydeploy.model.ir import (
    Activation,
    ConcatenationOptions,
    Graph,
    Operator,
    ReducerOptions,
    StridedSliceOptions,
    Tensor,
)

PAD_DIMS = 5
SLICE_DIMS = 5
TFLM_SLICE_MAX_RANK = 4
MEAN_DIMS = 6


def _io_reason(ins: tuple[Tensor | None, ...], outs: tuple[Tensor, ...],
               n_inputs: tuple[int, ...], expected: str,
               reason: TensorReason = int8_per_tensor_reason) -> str | None:
    """The arity check (``n_inputs`` allowed, ``expected`` in words) and the element checks
    (int8 unless ``reason`` says otherwise) of input 0 and the output, shared by PAD,
    STRIDED_SLICE and MEAN."""
    if len(ins) not in n_inputs or len(outs) != 1:
        return f"expects {expected} and 1 output, has {len(ins)} and {len(outs)}"
    return reason(ins[0], "input") or reason(outs[0], "output")


# --- PAD / PADV2 --------------------------------------------------------------------------


def _pad_plan(graph: Graph, op: Operator, reason: TensorReason
              ) -> tuple[dict[str, object] | None, str | None]:
    ins, outs = graph.op_inputs(op), graph.op_outputs(op)
    why = _io_reason(ins, outs, (2, 3), "2 or 3 inputs", reason)
    if why:
        return None, why
    x, out = ins[0], outs[0]
    assert x is not None
    rank = len(x.shape)
    if rank > PAD_DIMS:
        return None, f"input rank {rank} above {PAD_DIMS} (TFLM's PAD limit)"
    pads, why = const_ints(ins[1], "paddings")
    if why:
        return None, why
    assert pads is not None
    if len(pads) != 2 * len(out.shape) or len(out.shape) != rank:
        return None, f"paddings has {len(pads)} values for rank {rank}"
    before, after = pads[0::2], pads[1::2]
    if min(pads, default=0) < 0:
        return None, f"negative paddings {pads} are not supported"
    for d in range(rank):
        if out.shape[d] != x.shape[d] + before[d] + after[d]:
            return None, (f"output dim {d} is {out.shape[d]}, expected "
                          f"{x.shape[d]} + {before[d]} + {after[d]}")
    pad_value = out.zero_point
    if len(ins) == 3 and ins[2] is not None:
        c = ins[2]
        if c.dtype is not out.dtype or c.data is None or c.size != 1:
            return None, (f"constant_values '{c.name}' must be a constant "
                          f"{out.dtype.name.lower()} scalar")
        if c.quant is None or c.quant.zero_point[0] != out.zero_point or \
                f32(c.quant.scale[0]) != f32(out.scale):
            return None, (f"constant_values '{c.name}' must share the output's scale and "
                          "zero point (TFLM requires it)")
        pad_value = int(np.asarray(c.data).reshape(-1)[0])
    lead = PAD_DIMS - rank
    return {"pad_value": pad_value,
            "in_dims": [1] * lead + list(x.shape),
            "out_dims": [1] * lead + list(out.shape),
            "pad_before": [0] * lead + before}, None


def _accepts_pad(graph: Graph, op: Operator, reason: TensorReason) -> str | None:
    return _pad_plan(graph, op, reason)[1]


def _prepare_pad(graph: Graph, op: Operator, reason: TensorReason, symbol: str) -> KernelCall:
    plan, why = _pad_plan(graph, op, reason)
    assert plan is not None, why
    return KernelCall(
        symbol=symbol, params_type="td_pad_params_t",
        params=(("pad_value", int(plan["pad_value"])),  # type: ignore[call-overload]
                ("in_dims", "@in_dims"), ("out_dims", "@out_dims"),
                ("pad_before", "@pad_before")),
        consts=(ConstArray("in_dims", "int32_t", i32(plan["in_dims"])),  # type: ignore[arg-type]
                ConstArray("out_dims", "int32_t", i32(plan["out_dims"])),  # type: ignore[arg-type]
                ConstArray("pad_before", "int32_t",
                           i32(plan["pad_before"]))),  # type: ignore[arg-type]
        args=("in0", "out0"))


# --- CONCATENATION ------------------------------------------------------------------------


def _concat_axis(op: Operator, rank: int) -> int:
    axis = op.options.axis if isinstance(op.options, ConcatenationOptions) else 0
    return axis + rank if axis < 0 else axis


def concat_reason(graph: Graph, op: Operator,
                  tensor_reason: Callable[[Tensor | None, str], str | None],
                  quant_reason: Callable[[int, Tensor, Tensor], str | None]) -> str | None:
    """TFLM's CONCATENATION checks for any element type: arity, every tensor by
    ``tensor_reason``, no fused activation, the axis, arena inputs only, each input's
    quantization against the output by ``quant_reason(k, input, output)``, and shapes that
    agree off the axis and add up along it."""
    io = gather_io(graph, op, tensor_reason)
    if isinstance(io, str):
        return io
    ins, out = io
    if isinstance(op.options, ConcatenationOptions) and \
            op.options.activation is not Activation.NONE:
        return f"fused activation {op.options.activation.name} (TFLM requires NONE)"
    rank = len(out.shape)
    axis = _concat_axis(op, rank)
    if not 0 <= axis < rank:
        return f"axis {axis} out of range for rank {rank}"
    def arena_input(k: int, t: Tensor) -> str | None:
        if t.is_constant:
            return f"input {k} '{t.name}' is constant (only arena inputs are supported)"
        return quant_reason(k, t, out)

    return parts_reason(ins, out, axis, ("input", "output"), tensor_reason, arena_input)


def _concat_quant8(k: int, t: Tensor, out: Tensor) -> str | None:
    if f32(t.scale) != f32(out.scale) or t.zero_point != out.zero_point:
        return (f"input {k} '{t.name}' has scale {t.scale:g}, zero point {t.zero_point}, "
                f"the output {out.scale:g}, {out.zero_point}: TFLM's int8 CONCATENATION "
                "requires identical quantization (requantize the inputs first)")
    return None


def _accepts_concat(graph: Graph, op: Operator) -> str | None:
    return concat_reason(graph, op, int8_per_tensor_reason, _concat_quant8)


def _prepare_concat(graph: Graph, op: Operator) -> KernelCall:
    ins, out = graph.op_inputs(op), graph.op_outputs(op)[0]
    axis = _concat_axis(op, len(out.shape))
    inner = int(np.prod(out.shape[axis + 1:], dtype=np.int64))
    outer = int(np.prod(out.shape[:axis], dtype=np.int64))
    chunks = [t.shape[axis] * inner for t in ins if t is not None]
    return KernelCall(
        symbol="td_concatenation_s8_ref", params_type="td_concatenation_params_t",
        params=(("num_inputs", len(chunks)), ("outer", outer),
                ("out_chunk", out.shape[axis] * inner), ("chunks", "@chunks")),
        consts=(ConstArray("chunks", "int32_t", i32(chunks)),),
        args=tuple(f"in{k}" for k in range(len(chunks))) + ("out0",),
        instructions=round(outer * (len(chunks) * CONCAT_COST[0] + sum(chunks) * CONCAT_COST[1])))


# td_concatenation_s8_ref: per chunk copied (a memcpy call) and per byte, fitted on the
# residual test model's 12x12x(8 + 8) channel concatenation (11,600 measured)
CONCAT_COST = (36.0, 0.25)


# --- STRIDED_SLICE ------------------------------------------------------------------------


def _clamp(v: int, lo: int, hi: int) -> int:
    return hi if v > hi else (lo if v < lo else v)


def strided_slice_plan(in_shape: tuple[int, ...], begin: list[int], end: list[int],
                       strides: list[int], begin_mask: int, end_mask: int,
                       shrink_mask: int) -> tuple[int, list[int], list[int], list[int]]:
    """TFLM's 5-D StridedSlice: (start offset, counts[5], element steps[5], output shape
    with shrunk axes removed)."""
    rank = len(in_shape)
    pad = SLICE_DIMS - rank
    shape = [1] * pad + list(in_shape)
    b = [0] * pad + list(begin)
    e = [1] * pad + list(end)
    s = [1] * pad + list(strides)
    bm = (begin_mask << pad) | ((1 << pad) - 1)
    em = (end_mask << pad) | ((1 << pad) - 1)
    sm = shrink_mask << pad
    pitch = [1] * SLICE_DIMS
    for d in range(SLICE_DIMS - 2, -1, -1):
        pitch[d] = pitch[d + 1] * shape[d + 1]
    start_off = 0
    counts, steps, out_shape = [], [], []
    for d in range(SLICE_DIMS):
        size, stride = shape[d], s[d]
        # StridedSliceStartForAxis
        start = b[d] + size if b[d] < 0 else b[d]
        start = _clamp(start, 0, size) if stride > 0 else _clamp(start, -1, size - 1)
        if bm & (1 << d):
            start = 0 if stride > 0 else size - 1
        # StridedSliceEndForAxis
        if sm & (1 << d):
            stop = start if start >= size else start + 1
        else:
            stop = e[d] + size if e[d] < 0 else e[d]
            stop = _clamp(stop, 0, size) if stride > 0 else _clamp(stop, -1, size - 1)
            if em & (1 << d):
                stop = size if stride > 0 else -1
        if stride > 0:
            n = max(0, -(-(stop - start) // stride))
        else:
            n = max(0, -(-(start - stop) // -stride))
        counts.append(n)
        steps.append(stride * pitch[d])
        if n:
            start_off += start * pitch[d]
        if d >= pad and not sm & (1 << d):
            out_shape.append(n)
    if 0 in counts:
        start_off = 0
    return start_off, counts, steps, out_shape


def _slice_plan(graph: Graph, op: Operator, reason: TensorReason
                ) -> tuple[tuple[int, list[int], list[int], list[int]] | None, str | None]:
    ins, outs = graph.op_inputs(op), graph.op_outputs(op)
    why = _io_reason(ins, outs, (4,), "4 inputs", reason)
    if why:
        return None, why
    x, out = ins[0], outs[0]
    assert x is not None
    opts = op.options if isinstance(op.options, StridedSliceOptions) else StridedSliceOptions()
    if opts.ellipsis_mask or opts.new_axis_mask:
        return None, (f"ellipsis_mask {opts.ellipsis_mask} / new_axis_mask "
                      f"{opts.new_axis_mask}: TFLM ignores these masks")
    if opts.offset:
        return None, "the offset option is ignored by TFLM"
    rank = len(x.shape)
    if not 1 <= rank <= TFLM_SLICE_MAX_RANK:
        return None, f"input rank {rank} (TFLM supports 1..{TFLM_SLICE_MAX_RANK})"
    vals = []
    for k, role in ((1, "begin"), (2, "end"), (3, "strides")):
        v, why = const_ints(ins[k], role)
        if why:
            return None, why
        assert v is not None
        if len(v) != rank:
            return None, f"{role} has {len(v)} values for rank {rank}"
        vals.append(v)
    if 0 in vals[2]:
        return None, "a stride is 0"
    plan = strided_slice_plan(x.shape, vals[0], vals[1], vals[2], opts.begin_mask,
                              opts.end_mask, opts.shrink_axis_mask)
    if 0 in plan[1]:
        if 0 not in plan[3] and int(np.prod(plan[3])) > 0:
            return None, ("a shrunk axis with a negative stride: TFLM's kernel writes no "
                          "element of the output")
        return None, f"the slice of {list(x.shape)} is empty"
    if list(out.shape) != plan[3]:
        return None, f"output shape {list(out.shape)} differs from the slice's {plan[3]}"
    return plan, None


def _accepts_slice(graph: Graph, op: Operator, reason: TensorReason) -> str | None:
    return _slice_plan(graph, op, reason)[1]


def _prepare_slice(graph: Graph, op: Operator, reason: TensorReason, symbol: str
                   ) -> KernelCall:
    plan, why = _slice_plan(graph, op, reason)
    assert plan is not None, why
    start, counts, steps, _ = plan
    return KernelCall(
        symbol=symbol, params_type="td_strided_slice_params_t",
        params=(("start", start), ("counts", "@counts"), ("steps", "@steps")),
        consts=(ConstArray("counts", "int32_t", i32(counts)),
                ConstArray("steps", "int32_t", i32(steps))),
        args=("in0", "out0"))


# --- MEAN ---------------------------------------------------------------------------------


def mean_multiplier(in_scale: float, out_scale: float, count: int) -> tuple[int, int]:
    """TFLM QuantizedMeanOrSum: the in/out multiplier with 1/count folded in."""
    mult, shift = quantize_multiplier(f32(in_scale) / f32(out_scale))
    s = count.bit_length() - 1  # 63 - CountLeadingZeros(count)
    s = min(s, 32)
    s = min(s, 31 + shift)
    mult = int(np.int32((mult << s) // count))
    return mult, shift - s


def _mean_plan(graph: Graph, op: Operator,
               io_reason: Callable[[Tensor | None, Tensor], str | None] | None = None,
               max_abs: int = 255) -> tuple[dict[str, object] | None, str | None]:
    """MEAN's (and SUM's) plan; ``io_reason`` replaces the int8 checks of the input and
    output (the int16 variants pass theirs, with ``max_abs`` 32767 for the sum bound)."""
    ins, outs = graph.op_inputs(op), graph.op_outputs(op)
    if io_reason is None:
        why = _io_reason(ins, outs, (2,), "2 inputs")
    elif len(ins) != 2 or len(outs) != 1:
        why = f"expects 2 inputs and 1 output, has {len(ins)} and {len(outs)}"
    else:
        why = io_reason(ins[0], outs[0])
    if why:
        return None, why
    x, out = ins[0], outs[0]
    assert x is not None
    rank = len(x.shape)
    if not 1 <= rank <= MEAN_DIMS:
        return None, f"input rank {rank} (supported: 1..{MEAN_DIMS})"
    if 0 in x.shape:
        return None, "empty input"
    axes, why = const_ints(ins[1], "axis")
    if why:
        return None, why
    assert axes is not None
    resolved: list[int] = []
    for a in axes:
        c = a + rank if a < 0 else a
        if not 0 <= c < rank:
            return None, f"axis {a} out of range for rank {rank}"
        if c not in resolved:
            resolved.append(c)
    keep = [d for d in range(rank) if d not in resolved]
    num_out = int(np.prod([x.shape[d] for d in keep], dtype=np.int64))
    count = int(np.prod([x.shape[d] for d in resolved], dtype=np.int64))
    if out.size != num_out:
        return None, f"output has {out.size} elements, the mean {num_out}"
    sum_offset = -x.zero_point * count
    if not -(1 << 31) <= sum_offset < (1 << 31) or count * max_abs >= (1 << 31):
        return None, f"{count} elements per mean overflow int32 sums"
    lead = MEAN_DIMS - rank
    dims = [1] * lead + list(x.shape)
    kept_dims = [1 if (d - lead) in resolved else dims[d] for d in range(MEAN_DIMS)]
    strides = [0] * MEAN_DIMS
    acc = 1
    for d in range(MEAN_DIMS - 1, -1, -1):
        if d >= lead and (d - lead) in resolved:
            continue
        strides[d] = acc if kept_dims[d] > 1 else 0
        acc *= kept_dims[d]
    mult, shift = mean_multiplier(x.scale, out.scale, count)
    return {"num_outputs": num_out, "sum_offset": sum_offset, "out_mult": mult,
            "out_shift": shift, "out_offset": out.zero_point, "in_dims": dims,
            "out_strides": strides}, None


def _accepts_mean(graph: Graph, op: Operator) -> str | None:
    plan, why = _mean_plan(graph, op)
    if why:
        return why
    assert plan is not None
    if not isinstance(op.options, ReducerOptions | None):
        return "unexpected options"
    return None


def _prepare_mean(graph: Graph, op: Operator) -> KernelCall:
    plan, why = _mean_plan(graph, op)
    assert plan is not None, why
    n = int(plan["num_outputs"])  # type: ignore[call-overload]
    return KernelCall(
        symbol="td_mean_s8_ref", params_type="td_mean_params_t",
        params=tuple((k, int(plan[k]))  # type: ignore[call-overload]
                     for k in ("num_outputs", "sum_offset", "out_mult", "out_shift",
                               "out_offset")) + (("in_dims", "@in_dims"),
                                                 ("out_strides", "@out_strides")),
        consts=(ConstArray("in_dims", "int32_t", i32(plan["in_dims"])),  # type: ignore[arg-type]
                ConstArray("out_strides", "int32_t",
                           i32(plan["out_strides"]))),  # type: ignore[arg-type]
        args=("in0", "out0", "scratch"),
        scratch_bytes=4 * n)


for _v in (elem_variants("PAD", "pad", COPY_ELEMS, _accepts_pad, _prepare_pad,
                         headers=("kernels/ref/td_pad_body.h",))
           + elem_variants("PADV2", "pad", COPY_ELEMS, _accepts_pad, _prepare_pad,
                           headers=("kernels/ref/td_pad_body.h",))
           + elem_variants("STRIDED_SLICE", "strided_slice", COPY_ELEMS, _accepts_slice,
                           _prepare_slice, headers=("kernels/ref/td_strided_slice_body.h",))):
    register(_v)
register(ref_variant("CONCATENATION", "td_concatenation_s8_ref", _accepts_concat,
                     _prepare_concat, headers=("kernels/ref/td_concatenation_body.h",)))
register(ref_variant("MEAN", "td_mean_s8_ref", _accepts_mean, _prepare_mean,
                     headers=("kernels/ref/td_mean_body.h", "kernels/ref/td_bcast_rows.h")))
