"""Data-movement ops: TRANSPOSE, DEPTH_TO_SPACE, SPACE_TO_DEPTH, SPLIT, SPLIT_V, PACK.

None of them computes: TFLite Micro copies the stored values, so the kernels do too and the
host turns every op into a copy pattern, in elements, the same for int8 and int16 (TFLM has
int16 kernels of TRANSPOSE, SPLIT, SPLIT_V and PACK; the block ops are int8 only); each op's
int8 and int16 kernels include one body (`td_<op>_body.h`, see `common.planned_variants`):

* TRANSPOSE and the two block ops become one 6-D permutation on ``td_transpose_s8_ref``:
  DEPTH_TO_SPACE sees its input [N, H, W, C] as [N, H, W, b, b, C/b^2] and writes it as
  [N, H, b, W, b, C/b^2]; SPACE_TO_DEPTH sees [N, H, W, C] as [N, H/b, b, W/b, b, C] and
  writes [N, H/b, W/b, b, b, C] (TFLite's channel order: block row, block column, channel);
* SPLIT and SPLIT_V are `td_split_s8_ref` (chunks per outer slice), PACK is CONCATENATION's
  kernel on the inputs seen with a new axis of extent 1.

The limits are TFLM's: TRANSPOSE up to 5-D with a constant permutation of 0..rank-1, the
block ops on 4-D tensors, SPLIT's axis and SPLIT_V's sizes constant (an output shape that
depends on data is refused: tinydeploy plans static shapes). A negative axis counts from
the end, as in TFLM.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence

import numpy as np

from tinydeploy.kernels.activations import int8_per_tensor_reason
from tinydeploy.kernels.common import (
    TensorReason,
    const_ints,
    i32,
    int16_reason,
    parts_reason,
    planned_variants,
    single_io,
)
from tinydeploy.kernels.registry import ConstArray, KernelCall, register
from tinydeploy.model.ir import BlockSizeOptions, DType, Graph, Operator, PackOptions, Tensor

TRANSPOSE_DIMS = 6
TFLM_TRANSPOSE_MAX_RANK = 5
SPLIT_MAX_OUTPUTS = 16
CONCAT_MAX_INPUTS = 10
S8: tuple[tuple[str, TensorReason], ...] = (("s8", int8_per_tensor_reason),)
COPY_ELEMS: tuple[tuple[str, TensorReason], ...] = S8 + (("s16", int16_reason),)


def permutation_strides(in_shape: tuple[int, ...], perm: list[int]
                        ) -> tuple[list[int], list[int]]:
    """(out_dims, in_strides), right-aligned to TRANSPOSE_DIMS, of out = in.transpose(perm).
    Dimensions of extent 1 are dropped (they never move data)."""
    rank = len(in_shape)
    pitch = [1] * rank
    for d in range(rank - 2, -1, -1):
        pitch[d] = pitch[d + 1] * in_shape[d + 1]
    pairs = [(in_shape[p], pitch[p]) for p in perm if in_shape[p] != 1]
    # merge output neighbours that are also input neighbours in the same order
    merged: list[list[int]] = []
    for e, s in pairs:
        if merged and merged[-1][1] == s * e:
            merged[-1][0] *= e
            merged[-1][1] = s
        else:
            merged.append([e, s])
    if len(merged) > TRANSPOSE_DIMS:  # pragma: no cover - rank <= 6 after the block split
        raise ValueError(f"permutation of {in_shape} needs {len(merged)} loops")
    lead = TRANSPOSE_DIMS - len(merged)
    return [1] * lead + [e for e, _ in merged], [0] * lead + [s for _, s in merged]


def _transpose_call(in_shape: tuple[int, ...], perm: list[int], symbol: str) -> KernelCall:
    dims, strides = permutation_strides(in_shape, perm)
    return KernelCall(symbol=symbol, params_type="td_transpose_params_t",
                      params=(("out_dims", "@out_dims"), ("in_strides", "@in_strides")),
                      consts=(ConstArray("out_dims", "int32_t", i32(dims)),
                              ConstArray("in_strides", "int32_t", i32(strides))),
                      args=("in0", "out0"))


# --- TRANSPOSE ------------------------------------------------------------------------------


def _transpose_plan(graph: Graph, op: Operator, reason: TensorReason
                    ) -> tuple[Tensor, list[int]] | str:
    io = single_io(graph, op, 2, reason)
    if isinstance(io, str):
        return io
    x, y = io
    rank = len(x.shape)
    if rank > TFLM_TRANSPOSE_MAX_RANK:
        return f"input rank {rank}; TFLM transposes up to {TFLM_TRANSPOSE_MAX_RANK}-D"
    perm, why = const_ints(graph.op_inputs(op)[1], "permutation", int64=True)
    if why:
        return why
    assert perm is not None
    if sorted(perm) != list(range(rank)):
        return f"permutation {perm} is not a permutation of 0..{rank - 1} (TFLM requires it)"
    want = tuple(x.shape[p] for p in perm)
    if tuple(y.shape) != want:
        return f"output shape {list(y.shape)}, the permutation gives {list(want)}"
    return x, perm


def _transpose_plan_call(graph: Graph, op: Operator, plan: tuple[Tensor, list[int]],
                         symbol: str) -> KernelCall:
    x, perm = plan
    return _transpose_call(x.shape, perm, symbol)


# --- DEPTH_TO_SPACE / SPACE_TO_DEPTH --------------------------------------------------------


def _block_plan(graph: Graph, op: Operator, reason: TensorReason
                ) -> tuple[tuple[int, ...], list[int]] | str:
    io = single_io(graph, op, 1, reason)
    if isinstance(io, str):
        return io
    x, y = io
    b = op.options.block_size if isinstance(op.options, BlockSizeOptions) else 0
    if b < 1:
        return f"block size {b} (must be >= 1)"
    if len(x.shape) != 4 or len(y.shape) != 4:
        return f"input rank {len(x.shape)}, output rank {len(y.shape)} (TFLM requires 4)"
    n, h, w, c = x.shape
    if op.opcode == "DEPTH_TO_SPACE":
        if c % (b * b):
            return f"{c} channels are not a multiple of block size {b} squared"
        want = (n, h * b, w * b, c // (b * b))
        view, perm = (n, h, w, b, b, c // (b * b)), [0, 1, 3, 2, 4, 5]
    else:
        if h % b or w % b:
            return f"input {h}x{w} is not a multiple of block size {b}"
        want = (n, h // b, w // b, c * b * b)
        view, perm = (n, h // b, b, w // b, b, c), [0, 1, 3, 2, 4, 5]
    if tuple(y.shape) != want:
        return f"output shape {list(y.shape)}, block size {b} gives {list(want)}"
    return view, perm


def _block_call(graph: Graph, op: Operator, plan: tuple[tuple[int, ...], list[int]],
                symbol: str) -> KernelCall:
    return _transpose_call(*plan, symbol)


# --- SPLIT / SPLIT_V --------------------------------------------------------------------------


def _split_plan(graph: Graph, op: Operator, reason: TensorReason
                ) -> tuple[int, list[int]] | str:
    """(outer, chunks) of SPLIT (inputs: axis, value) or SPLIT_V (value, sizes, axis)."""
    ins, outs = graph.op_inputs(op), graph.op_outputs(op)
    n_in = 2 if op.opcode == "SPLIT" else 3
    if len(ins) != n_in or not 1 <= len(outs) <= SPLIT_MAX_OUTPUTS:
        return (f"expects {n_in} inputs and 1..{SPLIT_MAX_OUTPUTS} outputs, has {len(ins)} and "
                f"{len(outs)}")
    x = ins[1] if op.opcode == "SPLIT" else ins[0]
    axis_t = ins[0] if op.opcode == "SPLIT" else ins[2]
    why = reason(x, "input")
    if why:
        return why
    assert x is not None
    if x.is_constant:
        return f"input '{x.name}' is constant (fold the op before compiling)"
    axes, why = const_ints(axis_t, "axis", int64=True)
    if why:
        return why
    assert axes is not None
    rank = len(x.shape)
    axis = axes[0] + rank if axes[0] < 0 else axes[0]
    if not 0 <= axis < rank:
        return f"axis {axes[0]} out of range for rank {rank}"
    why = parts_reason(outs, x, axis, ("output", "input"), reason)
    if why:
        return why
    if op.opcode == "SPLIT_V":
        sizes, why = const_ints(ins[1], "size_splits", int64=True)
        if why:
            return why
        assert sizes is not None
        if len(sizes) != len(outs) or any(s != y.shape[axis] for s, y in zip(sizes, outs,
                                                                               strict=True)):
            return f"size_splits {sizes} do not match the output shapes"
    inner = int(np.prod(x.shape[axis + 1:], dtype=np.int64))
    outer = int(np.prod(x.shape[:axis], dtype=np.int64))
    return outer, [y.shape[axis] * inner for y in outs]


def _split_call(graph: Graph, op: Operator, plan: tuple[int, list[int]], symbol: str
                ) -> KernelCall:
    outer, chunks = plan
    data_input = "in1" if op.opcode == "SPLIT" else "in0"
    return KernelCall(symbol=symbol, params_type="td_split_params_t",
                      params=(("num_outputs", len(chunks)), ("outer", outer),
                              ("chunks", "@chunks")),
                      consts=(ConstArray("chunks", "int32_t", i32(chunks)),),
                      args=(data_input,) + tuple(f"out{k}" for k in range(len(chunks))))


def gather_io(graph: Graph, op: Operator, reason: TensorReason
              ) -> tuple[tuple[Tensor | None, ...], Tensor] | str:
    """(inputs, output) of an op that gathers 1 to CONCAT_MAX_INPUTS inputs into one output
    (PACK, CONCATENATION), the output passing ``reason``; else the reason it is not one."""
    ins, outs = graph.op_inputs(op), graph.op_outputs(op)
    if not 1 <= len(ins) <= CONCAT_MAX_INPUTS or len(outs) != 1:
        return f"expects 1..{CONCAT_MAX_INPUTS} inputs and 1 output, has {len(ins)}"
    why = reason(outs[0], "output")
    if why:
        return why
    return ins, outs[0]


# --- PACK ---------------------------------------------------------------------------------


def _pack_plan(graph: Graph, op: Operator, reason: TensorReason
               ) -> tuple[int, int, int] | str:
    """(outer, chunk, count): each input is ``outer`` chunks of ``chunk`` elements."""
    io = gather_io(graph, op, reason)
    if isinstance(io, str):
        return io
    ins, out = io
    first = ins[0]
    assert first is not None
    for k, t in enumerate(ins):
        why = reason(t, f"input {k}")
        if why:
            return why
        assert t is not None
        if t.is_constant:
            return f"input {k} '{t.name}' is constant (only arena inputs are supported)"
        if t.shape != first.shape:
            return f"input {k} shape {list(t.shape)} differs from input 0's {list(first.shape)}"
    rank = len(out.shape)
    axis = op.options.axis if isinstance(op.options, PackOptions) else 0
    axis = axis + rank if axis < 0 else axis
    if not 0 <= axis < rank:
        return f"axis {axis} out of range for output rank {rank}"
    want = first.shape[:axis] + (len(ins),) + first.shape[axis:]
    if tuple(out.shape) != want:
        return f"output shape {list(out.shape)}, packing gives {list(want)}"
    outer = int(np.prod(first.shape[:axis], dtype=np.int64))
    chunk = int(np.prod(first.shape[axis:], dtype=np.int64))
    return outer, chunk, len(ins)


def _pack_call(graph: Graph, op: Operator, plan: tuple[int, int, int], symbol: str
               ) -> KernelCall:
    outer, chunk, count = plan
    return KernelCall(
        symbol=symbol, params_type="td_concatenation_params_t",
        params=(("num_inputs", count), ("outer", outer), ("out_chunk", chunk * count),
                ("chunks", "@chunks")),
        consts=(ConstArray("chunks", "int32_t", i32([chunk] * count)),),
        args=tuple(f"in{k}" for k in range(count)) + ("out0",))


# op, kernel stem, element types, plan (its checks), call of the plan
_PLANNED: tuple[tuple[str, str, Sequence[tuple[str, TensorReason]], Callable[..., object],
                      Callable[..., KernelCall]], ...] = (
    ("TRANSPOSE", "transpose", COPY_ELEMS, _transpose_plan, _transpose_plan_call),
    ("DEPTH_TO_SPACE", "transpose", S8, _block_plan, _block_call),
    ("SPACE_TO_DEPTH", "transpose", S8, _block_plan, _block_call),
    ("SPLIT", "split", COPY_ELEMS, _split_plan, _split_call),
    ("SPLIT_V", "split", COPY_ELEMS, _split_plan, _split_call),
    ("PACK", "concatenation", COPY_ELEMS, _pack_plan, _pack_call),
)
for _op, _stem, _elems, _plan, _call in _PLANNED:
    for _v in planned_variants(_op, _stem, _elems, _plan, _call,
                               headers=(f"kernels/ref/td_{_stem}_body.h",)):
        register(_v)


def float32_reason(t: Tensor | None, role: str) -> str | None:
    """None when ``t`` is a float32 tensor (a float island's; no quantization)."""
    if t is None:
        return f"{role} is missing"
    if t.dtype is not DType.FLOAT32:
        return f"{role} '{t.name}' is {t.dtype.name}, FLOAT32 required (float variant)"
    return None


# SPLIT and SPLIT_V in float32, as a converter leaves them between DEQUANTIZE and QUANTIZE:
# the same copy on 4-byte elements, offered where the other float ops run (the board feature
# fpu: FPU cores and the host), so that a float island is compiled or refused as a whole
for _op in ("SPLIT", "SPLIT_V"):
    for _v in planned_variants(_op, "split", (("f32", float32_reason),), _split_plan,
                               _split_call, headers=("kernels/ref/td_split_body.h",)):
        register(dataclasses.replace(_v, requires=frozenset({"fpu"})))
