"""int8 elementwise ops: ADD and MUL with broadcasting, QUANTIZE and DEQUANTIZE.

ADD (`td_add_s8_ref`) follows TFLite Micro's int8 scheme: both inputs are offset, shifted left
by 20 bits, rescaled to twice the larger input scale with their own multipliers, summed and
rescaled to the output. MUL (`td_mul_s8_ref`) rescales the product of the offset inputs once.
Both broadcast up to 6-D as TFLM's BroadcastBinaryOpSimple does; the host turns the shapes
into (output dims, input strides) with adjacent dimensions merged when they broadcast alike,
so the kernel's innermost loop is as long as possible.

QUANTIZE int8 -> int8 is TFLM's Requantize, a function of one int8 value: it runs as a
256-entry table on `td_lut_s8_ref` (see `activations`). QUANTIZE float32 -> int8 is
`td_quantize_f32_ref`. DEQUANTIZE int8 -> float32 is a 256-entry table of float bit patterns
computed here in double precision exactly as TFLM does (`td_dequantize_s8_ref`).

Invariants: a constant operand of ADD/MUL (exactly one may be constant) becomes a const
array passed through the params (``in1_const``), and the kernel's ``in1`` argument then
repeats the arena operand; ADD/MUL/QUANTIZE(int8) may run in place (the planner only
overlaps an output with an input of the same size, whose element layout is then the
output's).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from tinydeploy.fixedpoint import (
    multiply_by_quantized_multiplier,
    quantize_multiplier,
    rounding_form_holds,
)
from tinydeploy.kernels.activations import (
    LUT_SOURCE,
    LUT_SYMBOL,
    int8_io_reason,
    int8_per_tensor_reason,
    lut_prepare,
    same_size_reason,
    unary_io,
)
from tinydeploy.kernels.common import REF_DIR, activation_range, f32, ref_variant
from tinydeploy.kernels.registry import ConstArray, KernelCall, KernelVariant, register
from tinydeploy.model.ir import Activation, ActivationOptions, DType, Graph, Operator, Tensor

BCAST_DIMS = 6
ADD_LEFT_SHIFT = 20


# --- broadcasting ------------------------------------------------------------------------


def broadcast_shape(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...] | None:
    """NumPy/TFLite broadcast of two shapes (right-aligned), or None if incompatible."""
    n = max(len(a), len(b))
    aa = (1,) * (n - len(a)) + tuple(a)
    bb = (1,) * (n - len(b)) + tuple(b)
    out = []
    for x, y in zip(aa, bb, strict=True):
        if x != y and x != 1 and y != 1:
            return None
        out.append(y if x == 1 else x)
    return tuple(out)


def broadcast_strides(shape0: tuple[int, ...], shape1: tuple[int, ...],
                      out_shape: tuple[int, ...]
                      ) -> tuple[list[int], list[int], list[int]]:
    """(out_dims, in0_strides, in1_strides), each of BCAST_DIMS entries, for the kernels'
    6-deep loop. Dimensions of extent 1 are dropped and adjacent dimensions in which each
    input is either fully present or fully broadcast, in the same way, are merged."""
    n = len(out_shape)
    s0 = (1,) * (n - len(shape0)) + tuple(shape0)
    s1 = (1,) * (n - len(shape1)) + tuple(shape1)
    # (extent, input 0 present, input 1 present) per non-trivial dimension, merged
    groups: list[list[int]] = []
    for d in range(n):
        e = out_shape[d]
        if e == 1:
            continue
        p0, p1 = int(s0[d] == e), int(s1[d] == e)
        if groups and groups[-1][1] == p0 and groups[-1][2] == p1:
            groups[-1][0] *= e
        else:
            groups.append([e, p0, p1])
    if len(groups) > BCAST_DIMS:  # pragma: no cover - alternating patterns need rank > 6
        raise ValueError(f"broadcast of {shape0} and {shape1} needs {len(groups)} loops")
    dims = [1] * (BCAST_DIMS - len(groups)) + [g[0] for g in groups]
    st0 = [0] * BCAST_DIMS
    st1 = [0] * BCAST_DIMS
    acc0 = acc1 = 1
    for k in range(len(groups) - 1, -1, -1):
        slot = BCAST_DIMS - len(groups) + k
        e, p0, p1 = groups[k]
        if p0:
            st0[slot] = acc0
            acc0 *= e
        if p1:
            st1[slot] = acc1
            acc1 *= e
    return dims, st0, st1


def _shapes_reason(a: Tensor, b: Tensor, out: Tensor, max_rank: int) -> str | None:
    for t in (a, b, out):
        if len(t.shape) > max_rank:
            return (f"'{t.name}' has rank {len(t.shape)}; TFLM broadcasts this op up to "
                    f"{max_rank}-D")
    bs = broadcast_shape(a.shape, b.shape)
    if bs is None:
        return f"shapes {list(a.shape)} and {list(b.shape)} do not broadcast"
    if int(np.prod(bs)) != out.size or tuple(d for d in bs if d != 1) != tuple(
            d for d in out.shape if d != 1):
        return f"output shape {list(out.shape)} is not the broadcast {list(bs)}"
    return None


def binary_reason(graph: Graph, op: Operator, max_rank: int) -> str | None:
    """Arity, int8 per-tensor operands, at most one constant, broadcastable shapes."""
    ins, outs = graph.op_inputs(op), graph.op_outputs(op)
    if len(ins) != 2 or len(outs) != 1:
        return f"expects 2 inputs and 1 output, has {len(ins)} and {len(outs)}"
    for t, role in ((ins[0], "input 0"), (ins[1], "input 1"), (outs[0], "output")):
        why = int8_per_tensor_reason(t, role)
        if why:
            return why
    a, b = ins
    assert a is not None and b is not None
    if a.is_constant and b.is_constant:
        return "both inputs are constant (fold the op before compiling)"
    return _shapes_reason(a, b, outs[0], max_rank)


def _binary_reason(graph: Graph, op: Operator) -> str | None:
    """Common checks of ADD and MUL: binary_reason up to BCAST_DIMS, a supported activation."""
    why = binary_reason(graph, op, BCAST_DIMS)
    if why:
        return why
    out = graph.op_outputs(op)[0]
    act = fused_activation(op)
    if activation_range(act, out) is None:
        return f"fused activation {act.name} is not supported for int8"
    return None


def fused_activation(op: Operator) -> Activation:
    """The op's fused activation, NONE for options without one."""
    return op.options.activation if isinstance(op.options, ActivationOptions) else \
        Activation.NONE


def _operands(graph: Graph, op: Operator) -> tuple[Tensor, Tensor, Tensor, bool]:
    """(arena-or-first operand, second operand, output, swapped): a constant operand is
    always the second (ADD and MUL are symmetric once their parameters swap too)."""
    a, b = graph.op_inputs(op)
    assert a is not None and b is not None
    out = graph.op_outputs(op)[0]
    if a.is_constant:
        return b, a, out, True
    return a, b, out, False


def _bcast_consts(a: Tensor, b: Tensor, out: Tensor) -> tuple[ConstArray, ...]:
    out_shape = broadcast_shape(a.shape, b.shape)
    assert out_shape is not None
    dims, st0, st1 = broadcast_strides(a.shape, b.shape, out_shape)
    return (ConstArray("out_dims", "int32_t", np.array(dims, dtype=np.int32)),
            ConstArray("in0_strides", "int32_t", np.array(st0, dtype=np.int32)),
            ConstArray("in1_strides", "int32_t", np.array(st1, dtype=np.int32)))


def _const_operand(b: Tensor) -> tuple[tuple[ConstArray, ...], str]:
    if not b.is_constant:
        return (), "NULL"
    assert b.data is not None
    return (ConstArray("in1_data", "int8_t", np.asarray(b.data, dtype=np.int8).reshape(-1)),), \
        "@in1_data"


def _args(graph: Graph, op: Operator, swapped: bool, b: Tensor) -> tuple[str, ...]:
    arena_in = "in1" if swapped else "in0"
    second = arena_in if b.is_constant else "in1"
    return (arena_in, second, "out0")


# --- ADD --------------------------------------------------------------------------------


def add_params(s0: float, z0: int, s1: float, z1: int, so: float, zo: int,
               left_shift: int = ADD_LEFT_SHIFT) -> dict[str, int]:
    """TFLM CalculateOpDataAdd (scales are float32 values, ratios in double): both inputs
    rescaled to twice the larger scale after a left shift of ``left_shift`` (20 for int8,
    15 for int16); SUB's Prepare is the same arithmetic."""
    twice_max = 2.0 * max(f32(s0), f32(s1))
    m0, sh0 = quantize_multiplier(f32(s0) / twice_max)
    m1, sh1 = quantize_multiplier(f32(s1) / twice_max)
    mo, sho = quantize_multiplier(twice_max / ((1 << left_shift) * f32(so)))
    return {"left_shift": left_shift, "in0_offset": -z0, "in0_mult": m0, "in0_shift": sh0,
            "in1_offset": -z1, "in1_mult": m1, "in1_shift": sh1, "out_offset": zo,
            "out_mult": mo, "out_shift": sho}


def _accepts_add(graph: Graph, op: Operator) -> str | None:
    why = _binary_reason(graph, op)
    if why:
        return why
    a, b, out, _ = _operands(graph, op)
    twice_max = 2.0 * max(f32(a.scale), f32(b.scale))
    real_out = twice_max / ((1 << ADD_LEFT_SHIFT) * f32(out.scale))
    if not real_out < 1.0:
        return (f"output scale {out.scale:g} is too small for input scales {a.scale:g}, "
                f"{b.scale:g} (TFLM needs 2*max(in)/(2^20*out) < 1, got {real_out:g})")
    return None


def _prepare_add(graph: Graph, op: Operator) -> KernelCall:
    a, b, out, swapped = _operands(graph, op)
    p = add_params(a.scale, a.zero_point, b.scale, b.zero_point, out.scale, out.zero_point)
    rng = activation_range(fused_activation(op), out)
    assert rng is not None
    consts, in1_const = _const_operand(b)
    params: list[tuple[str, int | float | str]] = list(p.items())
    params += [("act_min", rng[0]), ("act_max", rng[1]), ("out_dims", "@out_dims"),
               ("in0_strides", "@in0_strides"), ("in1_strides", "@in1_strides"),
               ("in1_const", in1_const)]
    return KernelCall(symbol="td_add_s8_ref", params_type="td_add_params_t",
                      params=tuple(params), consts=_bcast_consts(a, b, out) + consts,
                      args=_args(graph, op, swapped, b))


def _rescale_form_holds(bound: int, multiplier: int, shift: int, zero_point: int) -> bool:
    """td_add_rescale (td_add_s8_opt.c) equals ``multiply_by_quantized_multiplier(x) +
    zero_point`` for every ``|x| <= bound``: the rounding form for a right shift; for a shift
    of 0 the high multiply alone (SMMULR of 2x is the doubling high multiply when the
    multiplier is positive and 2x fits int32)."""
    if shift == 0:
        return 0 < multiplier and bound < (1 << 30) and bound + abs(zero_point) < (1 << 31)
    return rounding_form_holds(bound, multiplier, shift, zero_point)


def add_rounding_form_reason(p: dict[str, int]) -> str | None:
    """None when td_add_s8_opt's three requantizations in the rounding form are exact for
    every pair of int8 inputs (``p``: `add_params`), else why not. The bounds are exact: each
    rescaled input at its extreme values (requantization is monotonic), the sum of those."""
    ls = p["left_shift"]
    if p["in0_shift"] != 0 and p["in1_shift"] != 0:
        return "neither input's shift is 0 (the kernel's loops take one that is)"
    rescaled = []
    for k in ("in0", "in1"):
        off, m, sh = p[f"{k}_offset"], p[f"{k}_mult"], p[f"{k}_shift"]
        bound = max(abs(-128 + off), abs(127 + off)) << ls
        if not _rescale_form_holds(bound, m, sh, 0):
            return f"the rounding form does not hold for {k} (multiplier {m}, shift {sh})"
        rescaled.append(max(abs(multiply_by_quantized_multiplier((v + off) << ls, m, sh))
                            for v in (-128, 127)))
    total = rescaled[0] + rescaled[1]
    if not _rescale_form_holds(total, p["out_mult"], p["out_shift"], p["out_offset"]):
        return (f"the rounding form does not hold for the sum (|sum| <= {total}, multiplier "
                f"{p['out_mult']}, shift {p['out_shift']})")
    return None


def _accepts_add_opt(graph: Graph, op: Operator) -> str | None:
    why = _accepts_add(graph, op)
    if why:
        return why
    a, b, out, _ = _operands(graph, op)
    if not (tuple(a.shape) == tuple(b.shape) == tuple(out.shape)):
        return f"broadcasting {tuple(a.shape)} with {tuple(b.shape)} (the reference takes it)"
    return add_rounding_form_reason(
        add_params(a.scale, a.zero_point, b.scale, b.zero_point, out.scale, out.zero_point))


def _prepare_add_opt(graph: Graph, op: Operator) -> KernelCall:
    call = _prepare_add(graph, op)
    n = int(np.prod(graph.op_outputs(op)[0].shape))
    # per element: two loads and offsets, three rescales of ~5, the clamp and the store;
    # measured 30.9 per element on the residual test model's 12x12x8 ADD, ~29 on ResNet's
    return replace(call, symbol="td_add_s8_opt", instructions=30 * n)


# --- MUL --------------------------------------------------------------------------------


def _prepare_mul(graph: Graph, op: Operator) -> KernelCall:
    a, b, out, swapped = _operands(graph, op)
    mult, shift = quantize_multiplier(f32(a.scale) * f32(b.scale) / f32(out.scale))
    rng = activation_range(fused_activation(op), out)
    assert rng is not None
    consts, in1_const = _const_operand(b)
    params: tuple[tuple[str, int | float | str], ...] = (
        ("in0_offset", -a.zero_point), ("in1_offset", -b.zero_point),
        ("out_offset", out.zero_point), ("out_mult", mult), ("out_shift", shift),
        ("act_min", rng[0]), ("act_max", rng[1]), ("out_dims", "@out_dims"),
        ("in0_strides", "@in0_strides"), ("in1_strides", "@in1_strides"),
        ("in1_const", in1_const))
    return KernelCall(symbol="td_mul_s8_ref", params_type="td_mul_params_t", params=params,
                      consts=_bcast_consts(a, b, out) + consts,
                      args=_args(graph, op, swapped, b))


# --- QUANTIZE / DEQUANTIZE --------------------------------------------------------------


def requantize_lut(in_scale: float, in_zp: int, out_scale: float, out_zp: int) -> np.ndarray:
    """TFLM Requantize<int8, int8>: multiplier of double(in_scale) / double(out_scale)."""
    mult, shift = quantize_multiplier(f32(in_scale) / f32(out_scale))
    vals = [min(127, max(-128, multiply_by_quantized_multiplier(q - in_zp, mult, shift)
                         + out_zp)) for q in range(-128, 128)]
    return np.array(vals, dtype=np.int8)


def dequantize_lut(scale: float, zp: int) -> np.ndarray:
    """IEEE-754 bits of TFLM's (float)(double(scale) * (q - zp)) for q = -128..127."""
    q = np.arange(-128, 128, dtype=np.float64)
    vals = (np.float64(f32(scale)) * (q - zp)).astype(np.float32)
    return vals.view(np.uint32).copy()


def _one_in_one_out(graph: Graph, op: Operator) -> str | None:
    """The arity check of QUANTIZE and DEQUANTIZE."""
    ins, outs = graph.op_inputs(op), graph.op_outputs(op)
    if len(ins) != 1 or len(outs) != 1 or ins[0] is None:
        return "expects 1 input and 1 output"
    return None


def _convert_reason(graph: Graph, op: Operator, in_dtype: DType, variant: str) -> str | None:
    """The checks QUANTIZE's two variants share: one input of ``in_dtype``, one output."""
    why = _one_in_one_out(graph, op)
    if why:
        return why
    x, _ = unary_io(graph, op)
    if x.dtype is not in_dtype:
        return f"input '{x.name}' is {x.dtype.name} (this variant: {variant})"
    return None


def _accepts_quantize_s8(graph: Graph, op: Operator) -> str | None:
    return (_convert_reason(graph, op, DType.INT8, "int8 -> int8")
            or int8_io_reason(*unary_io(graph, op)))


def _accepts_quantize_f32(graph: Graph, op: Operator) -> str | None:
    why = _convert_reason(graph, op, DType.FLOAT32, "float32 -> int8")
    if why:
        return why
    x, y = unary_io(graph, op)
    return same_size_reason(x, y) or int8_per_tensor_reason(y, "output")


def _prepare_quantize_f32(graph: Graph, op: Operator) -> KernelCall:
    y = graph.op_outputs(op)[0]
    bits = int(np.array([y.scale], dtype=np.float32).view(np.uint32)[0])
    return KernelCall(symbol="td_quantize_f32_ref", params_type="td_quantize_f32_params_t",
                      params=(("size", y.size), ("scale_bits", bits),
                              ("zero_point", y.zero_point)),
                      consts=(), args=("in0", "out0"))


def _accepts_dequantize(graph: Graph, op: Operator) -> str | None:
    why = _one_in_one_out(graph, op)
    if why:
        return why
    x, y = unary_io(graph, op)
    why = int8_per_tensor_reason(x, "input")
    if why:
        return why
    if y.dtype is not DType.FLOAT32:
        return f"output '{y.name}' is {y.dtype.name}, float32 required"
    return same_size_reason(x, y)


def _prepare_dequantize(graph: Graph, op: Operator) -> KernelCall:
    x, _ = unary_io(graph, op)
    return KernelCall(symbol="td_dequantize_s8_ref", params_type="td_dequantize_params_t",
                      params=(("size", x.size), ("lut", "@lut")),
                      consts=(ConstArray("lut", "uint32_t", dequantize_lut(x.scale,
                                                                           x.zero_point)),),
                      args=("in0", "out0"))


# private header of ADD and MUL (the walk over broadcast rows), copied next to their sources
BCAST_HEADER = f"{REF_DIR}/td_bcast_rows.h"

register(ref_variant("ADD", "td_add_s8_ref", _accepts_add, _prepare_add, inplace=True,
                     headers=(BCAST_HEADER, f"{REF_DIR}/td_addsub_one.h")))
# Same shapes and the rounding form proven: ~4x fewer instructions, any core (no feature).
register(KernelVariant(
    op="ADD", impl="opt", symbol="td_add_s8_opt", sources=("kernels/opt/td_add_s8_opt.c",),
    requires=frozenset(), accepts=_accepts_add_opt, prepare=_prepare_add_opt, inplace=True,
    priority=10, code_bytes=720))   # measured 648 B (-O2, M4), + 10 %
register(ref_variant("MUL", "td_mul_s8_ref", _binary_reason, _prepare_mul, inplace=True,
                     headers=(BCAST_HEADER, f"{REF_DIR}/td_mul_one.h")))
register(ref_variant("QUANTIZE", LUT_SYMBOL, _accepts_quantize_s8, lut_prepare(
    lambda x, y, op: requantize_lut(x.scale, x.zero_point, y.scale, y.zero_point)),
                     inplace=True, source=LUT_SOURCE))
register(ref_variant("QUANTIZE", "td_quantize_f32_ref", _accepts_quantize_f32,
                     _prepare_quantize_f32))
register(ref_variant("DEQUANTIZE", "td_dequantize_s8_ref", _accepts_dequantize,
                     _prepare_dequantize))
