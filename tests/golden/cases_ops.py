"""Golden cases of the ops added for issue 13 (SUB, MAXIMUM/MINIMUM, ABS, TRANSPOSE, ...),
declared as data: one `OpCase` per single-op model, with awkward parameters (odd sizes,
broadcasting, negative axes, non-default options, zero points at the int8 limits).

A case lists its inputs as `In` (shape, quantization, and whether it is stored in the model
as a constant) and its outputs as `Out`; `build()` makes the model with the flatbuffer
builder and the input arrays from the case's seed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from tinydeploy.testing.builder import ModelBuilder

try:
    from golden_ops import Built, int8_inputs
except ImportError:  # pragma: no cover - when tests/golden is a package
    from .golden_ops import Built, int8_inputs

Q = tuple[Any, int]   # (scale or per-channel scales, zero point)


@dataclass(frozen=True)
class In:
    """One op input: int8 with quantization ``q`` (None: an int32 index tensor whose values
    are ``values``), constant in the model when ``const``; ``data`` = int8_inputs kind or
    "range" (values in [lo, hi])."""

    shape: tuple[int, ...]
    q: Q | None = None
    const: bool = False
    values: tuple[int, ...] | None = None
    data: str = "random"
    lo: int = -128
    hi: int = 127
    dtype: str = "int8"
    axis: int = 0       # quantized dimension when q[0] is a tuple of per-channel scales


@dataclass(frozen=True)
class Out:
    shape: tuple[int, ...]
    q: Q | None = None
    dtype: str = "int8"


@dataclass(frozen=True)
class OpCase:
    op: str
    ins: tuple[In, ...]
    outs: tuple[Out, ...]
    options: Any = None
    seed: int = 0
    label: str = ""
    version: int = 1
    extra: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    @property
    def name(self) -> str:
        shapes = "x".join(str(list(i.shape)) for i in self.ins if i.values is None)
        return f"{self.op} {shapes} {self.label}".strip()

    def build(self) -> Built:
        rng = np.random.default_rng(self.seed)
        b = ModelBuilder()
        ids, feeds, graph_inputs = [], [], []
        for k, spec in enumerate(self.ins):
            if spec.values is not None:
                ids.append(b.tensor(f"idx{k}", spec.shape, spec.dtype, data=spec.values))
                continue
            if spec.dtype == "int16" and spec.data == "all":
                arr = np.resize(np.arange(-32768, 32768), spec.shape).astype(np.int16)
            elif spec.dtype == "int16":
                arr = rng.integers(-32768, 32768, size=spec.shape).astype(np.int16)
            elif spec.data == "range":
                arr = rng.integers(spec.lo, spec.hi + 1, size=spec.shape).astype(np.int8)
            else:
                zp = spec.q[1] if spec.q else 0
                arr = int8_inputs(spec.shape, spec.data, rng, zp)
            q = spec.q or (1.0, 0)
            if spec.const:
                ids.append(b.tensor(f"c{k}", spec.shape, spec.dtype, scale=q[0],
                                    zero_point=q[1], data=arr, axis=spec.axis))
            else:
                t = b.tensor(f"x{k}", spec.shape, spec.dtype, scale=q[0], zero_point=q[1])
                ids.append(t)
                graph_inputs.append(t)
                feeds.append(arr)
        outs = []
        for k, o in enumerate(self.outs):
            if o.q is None:
                outs.append(b.tensor(f"y{k}", o.shape, o.dtype))
            else:
                outs.append(b.tensor(f"y{k}", o.shape, o.dtype, scale=o.q[0],
                                     zero_point=o.q[1]))
        b.op(self.op, ids, outs, self.options, version=self.version)
        return Built(self.name, b.build(graph_inputs, outs), tuple(feeds))


# --- SUB, MAXIMUM, MINIMUM, SQUARED_DIFFERENCE, PRELU --------------------------------------

_BCAST = [
    ((2, 3, 5), (2, 3, 5)), ((2, 3, 5), (5,)), ((3, 1, 7), (1, 4, 1)), ((1, 5, 3, 2), (2,)),
    ((4, 1), (1, 3)), ((1,), (2, 3, 3)), ((2, 1, 3, 1, 2), (1, 4, 1, 5, 1)), ((9,), (9,)),
]
_QS = [((0.05, -3), (0.11, 100), (0.1, -20)), ((0.02, -128), (0.02, -128), (0.04, 127)),
       ((0.5, 127), (0.25, 127), (0.75, -128)), ((0.1, 0), (0.3, 5), (0.2, 0)),
       ((0.0078, -128), (1.5, 12), (1.6, -7)), ((0.3, 64), (0.2, -64), (0.1, 1))]


def _out_shape(s0: tuple[int, ...], s1: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(np.broadcast_shapes(s0, s1))


def binary_cases() -> list[OpCase]:
    from tinydeploy.model.ir import Activation, ActivationOptions

    acts = (Activation.NONE, Activation.RELU, Activation.RELU6, Activation.RELU_N1_TO_1)
    cases: list[OpCase] = []
    for k, (s0, s1) in enumerate(_BCAST):
        q0, q1, qo = _QS[k % len(_QS)]
        so = _out_shape(s0, s1)
        if len(so) <= 5:
            cases.append(OpCase("SUB", (In(s0, q0), In(s1, q1)), (Out(so, qo),),
                                ActivationOptions(acts[k % 4]), seed=k, label=acts[k % 4].name))
        for op in ("MAXIMUM", "MINIMUM"):
            cases.append(OpCase(op, (In(s0, q0, data="extreme" if k % 3 == 0 else "random"),
                                     In(s1, q0)), (Out(so, q0),), seed=10 + k))
        if len(so) <= 4:
            qsd = (q0[0] * q1[0] * 30, qo[1])
            cases.append(OpCase("SQUARED_DIFFERENCE", (In(s0, q0), In(s1, q1)),
                                (Out(so, qsd),), seed=20 + k))
    # constant operands on either side, in-place friendly shapes
    cases.append(OpCase("SUB", (In((3, 4), (0.1, 3), const=True), In((2, 3, 4), (0.07, -9))),
                        (Out((2, 3, 4), (0.3, 1)),), ActivationOptions(), seed=31,
                        label="const0"))
    cases.append(OpCase("SUB", (In((2, 3, 4), (0.07, -9)), In((4,), (0.1, 3), const=True)),
                        (Out((2, 3, 4), (0.3, 1)),), ActivationOptions(Activation.RELU),
                        seed=32, label="const1"))
    cases.append(OpCase("SUB", (In((64,), (0.25, 0)), In((64,), (0.125, 1))),
                        (Out((64,), (0.5, 0)),), ActivationOptions(), seed=33, label="ties"))
    cases.append(OpCase("MAXIMUM", (In((1, 4, 4, 3), (0.1, -5)),
                                    In((1, 1, 1, 3), (0.1, -5), const=True)),
                        (Out((1, 4, 4, 3), (0.1, -5)),), seed=34, label="const1"))
    cases.append(OpCase("MINIMUM", (In((5,), (0.2, 7), const=True), In((3, 5), (0.2, 7))),
                        (Out((3, 5), (0.2, 7)),), seed=35, label="const0"))
    cases.append(OpCase("SQUARED_DIFFERENCE", (In((1, 3, 3, 8), (0.05, -128)),
                                               In((1, 1, 1, 8), (0.02, 30), const=True)),
                        (Out((1, 3, 3, 8), (0.001, -128)),), seed=36, label="const1"))
    cases.append(OpCase("SQUARED_DIFFERENCE", (In((40,), (0.5, 127), data="extreme"),
                                               In((40,), (0.5, -128), data="extreme")),
                        (Out((40,), (8.0, -100)),), seed=37, label="extreme"))
    # PRELU: alpha constant per channel (the converter's form), broadcast, and arena alpha
    for k, (xs, alpha_shape, qx, qa, qo) in enumerate([
            ((1, 5, 7, 3), (1, 1, 3), (0.05, -3), (0.004, -10), (0.04, 6)),
            ((1, 4, 4, 6), (6,), (0.1, 127), (0.02, 0), (0.05, -128)),
            ((2, 3, 5), (3, 5), (0.3, 0), (0.01, 100), (0.2, -1)),
            ((1, 9, 2), (1, 1, 1), (0.02, -128), (0.5, -1), (0.05, 0)),
    ]):
        cases.append(OpCase("PRELU", (In(xs, qx), In(alpha_shape, qa, const=True)),
                            (Out(xs, qo),), seed=40 + k, label="const alpha"))
    cases.append(OpCase("PRELU", (In((3, 4), (0.1, 2)), In((3, 4), (0.05, -3))),
                        (Out((3, 4), (0.08, 5)),), seed=45, label="arena alpha"))
    return cases


# --- ABS, RSQRT, ELU (tables) ---------------------------------------------------------------

def unary_cases() -> list[OpCase]:
    cases: list[OpCase] = []
    qs = [((0.05, -3), (0.04, -128)), ((0.1, 10), (0.1, 10)), ((0.02, -128), (0.3, 127)),
          ((0.5, 127), (0.25, -100)), ((0.07, 0), (0.013, -20))]
    for k, (qi, qo) in enumerate(qs):
        cases.append(OpCase("ABS", (In((4, 64), qi, data="all"),), (Out((4, 64), qo),),
                            seed=k, label=f"{qi}->{qo}"))
        cases.append(OpCase("ELU", (In((4, 64), qi, data="all"),), (Out((4, 64), qo),),
                            seed=10 + k, label=f"{qi}->{qo}"))
        # RSQRT is defined for inputs at or above the zero point only (TFLM refuses others)
        cases.append(OpCase("RSQRT", (In((3, 7, 5), qi, data="range", lo=qi[1], hi=127),),
                            (Out((3, 7, 5), qo),), seed=20 + k, label=f"{qi}->{qo}"))
    cases.append(OpCase("RSQRT", (In((1, 200), (0.001, -128), data="range", lo=-128, hi=127),),
                        (Out((1, 200), (0.5, -128)),), seed=30, label="wide"))
    return cases


# --- TRANSPOSE, DEPTH_TO_SPACE, SPACE_TO_DEPTH, SPLIT, SPLIT_V, PACK ------------------------

def layout_cases() -> list[OpCase]:
    from tinydeploy.model.ir import BlockSizeOptions, PackOptions, SplitOptions

    q = (0.07, -5)
    cases: list[OpCase] = []
    for k, (shape, perm) in enumerate([
            ((2, 3, 5), (2, 0, 1)), ((1, 4, 6, 3), (0, 3, 1, 2)), ((3, 7), (1, 0)),
            ((2, 3, 4, 5, 3), (4, 2, 0, 3, 1)), ((5,), (0,)), ((1, 2, 1, 3), (3, 2, 1, 0)),
            ((2, 3, 4), (0, 1, 2))]):
        out = tuple(shape[p] for p in perm)
        cases.append(OpCase("TRANSPOSE", (In(shape, q), In((len(perm),), values=perm,
                                                              dtype="int32")),
                            (Out(out, q),), seed=k, label=f"perm={list(perm)}"))
    for k, (shape, b) in enumerate([((1, 2, 3, 12), 2), ((2, 3, 1, 9), 3), ((1, 1, 1, 5), 1),
                                    ((1, 4, 2, 8), 2)]):
        n, h, w, c = shape
        cases.append(OpCase("DEPTH_TO_SPACE", (In(shape, q),),
                            (Out((n, h * b, w * b, c // (b * b)), q),), BlockSizeOptions(b),
                            seed=10 + k, label=f"b={b}"))
    for k, (shape, b) in enumerate([((1, 4, 6, 3), 2), ((2, 6, 3, 1), 3), ((1, 2, 2, 7), 2),
                                    ((1, 3, 5, 2), 1)]):
        n, h, w, c = shape
        cases.append(OpCase("SPACE_TO_DEPTH", (In(shape, q),),
                            (Out((n, h // b, w // b, c * b * b), q),), BlockSizeOptions(b),
                            seed=20 + k, label=f"b={b}"))
    for k, (shape, axis, n) in enumerate([((2, 6, 5), 1, 3), ((4, 3), -1, 3), ((6,), 0, 2),
                                          ((1, 3, 4, 10), -1, 5), ((3, 2, 2), 0, 1)]):
        ax = axis % len(shape)
        out = tuple(d // n if i == ax else d for i, d in enumerate(shape))
        cases.append(OpCase("SPLIT", (In((1,), values=(axis,), dtype="int32"), In(shape, q)),
                            tuple(Out(out, q) for _ in range(n)), SplitOptions(n),
                            seed=30 + k, label=f"axis={axis} n={n}"))
    for k, (shape, axis, sizes) in enumerate([((2, 7, 3), 1, (1, 4, 2)), ((5, 4), -2, (3, 2)),
                                              ((1, 2, 3, 9), 3, (2, 2, 2, 3)),
                                              ((6,), -1, (6,))]):
        ax = axis % len(shape)
        outs = tuple(Out(tuple(s if i == ax else d for i, d in enumerate(shape)), q)
                     for s in sizes)
        cases.append(OpCase("SPLIT_V", (In(shape, q), In((len(sizes),), values=sizes,
                                                         dtype="int32"),
                                        In((1,), values=(axis,), dtype="int32")),
                            outs, SplitOptions(len(sizes)), seed=40 + k,
                            label=f"axis={axis} sizes={list(sizes)}"))
    for k, (shape, n, axis) in enumerate([((3, 5), 2, 0), ((3, 5), 3, 1), ((3, 5), 4, -1),
                                          ((2, 1, 3), 2, -2), ((7,), 1, 0)]):
        r = len(shape) + 1
        ax = axis % r
        out = shape[:ax] + (n,) + shape[ax:]
        cases.append(OpCase("PACK", tuple(In(shape, q) for _ in range(n)), (Out(out, q),),
                            PackOptions(n, axis), seed=50 + k, label=f"n={n} axis={axis}"))
    return cases


# --- SUM, REDUCE_MAX, RESIZE_NEAREST_NEIGHBOR, RESIZE_BILINEAR ------------------------------

def reduce_resize_cases() -> list[OpCase]:
    from tinydeploy.model.ir import ReducerOptions, ResizeOptions

    cases: list[OpCase] = []
    for k, (shape, axes, keep) in enumerate([
            ((1, 5, 7, 3), (1, 2), True), ((2, 3, 4), (-1,), False), ((3, 6), (0,), True),
            ((2, 3, 5, 2), (0, -1), False), ((4, 5), (1, -1), False), ((1, 9, 1, 4), (2,), True),
            ((2, 2, 3), (0, 1, 2), False)]):
        kept = [d for i, d in enumerate(shape) if i not in [a % len(shape) for a in axes]]
        out = tuple(1 if i in [a % len(shape) for a in axes] else d
                    for i, d in enumerate(shape)) if keep else tuple(kept) or (1,)
        ax = In((len(axes),), values=axes, dtype="int32")
        for qi, qo in (((0.05, -3), (0.9, 10)), ((0.02, -128), (0.3, 127))):
            cases.append(OpCase("SUM", (In(shape, qi), ax), (Out(out, qo),),
                                ReducerOptions(keep), seed=k, label=f"axes={list(axes)}"))
        q = ((0.1, 7), (0.03, -128))[k % 2]
        cases.append(OpCase("REDUCE_MAX", (In(shape, q, data="extreme" if k % 2 else "random"),
                                           ax), (Out(out, q),), ReducerOptions(keep),
                            seed=10 + k, label=f"axes={list(axes)}"))
    q = (0.06, -4)
    sizes = [((1, 3, 4, 3), (7, 9)), ((2, 5, 5, 2), (2, 3)), ((1, 1, 4, 5), (3, 4)),
             ((1, 4, 3, 1), (4, 3)), ((1, 6, 2, 3), (11, 5))]
    for k, (shape, hw) in enumerate(sizes):
        for align, half in ((False, False), (True, False), (False, True)):
            out = (shape[0], hw[0], hw[1], shape[3])
            size = In((2,), values=hw, dtype="int32")
            for op in ("RESIZE_NEAREST_NEIGHBOR", "RESIZE_BILINEAR"):
                cases.append(OpCase(op, (In(shape, q, data="extreme" if k == 1 else "random"),
                                         size), (Out(out, q),), ResizeOptions(align, half),
                                    seed=20 + k, label=f"->{list(hw)} align={align} "
                                                       f"half={half}"))
    return cases


# --- BATCH_MATMUL, TRANSPOSE_CONV, L2_NORMALIZATION -----------------------------------------

def matmul_cases() -> list[OpCase]:
    from tinydeploy.model.ir import Activation as A
    from tinydeploy.model.ir import BatchMatMulOptions, Padding, TransposeConvOptions

    cases: list[OpCase] = []
    for k, (ls, rs, ax, ay, const) in enumerate([
            ((3, 5), (5, 4), False, False, None), ((2, 3, 5), (2, 5, 4), False, False, None),
            ((2, 5, 3), (2, 4, 5), True, True, None), ((1, 3, 7), (4, 7, 2), False, False, 1),
            ((2, 1, 3, 6), (3, 6, 5), False, False, None), ((4, 6, 3), (1, 5, 6), True, True, 1),
            ((3, 2, 4), (4, 5), False, False, 1), ((2, 2, 2, 3, 4), (2, 1, 2, 4, 3), False,
                                                   False, None)]):
        rank = max(len(ls), len(rs))
        l2 = (1,) * (rank - len(ls)) + ls
        r2 = (1,) * (rank - len(rs)) + rs
        rows = l2[-1] if ax else l2[-2]
        cols = r2[-2] if ay else r2[-1]
        batch = tuple(max(a, b) for a, b in zip(l2[:-2], r2[:-2], strict=True))
        depth = l2[-2] if ax else l2[-1]
        qo = (0.02 * 0.05 * depth * 12, (k * 37) % 256 - 128)
        cases.append(OpCase("BATCH_MATMUL", (In(ls, (0.02, (k * 11) % 200 - 100)),
                                             In(rs, (0.05, 0 if const else -7), const=bool(const))),
                            (Out(batch + (rows, cols), qo),), BatchMatMulOptions(ax, ay),
                            seed=k, label=f"adj={ax},{ay}{' const rhs' if const else ''}"))
    for k, (xs, oc, fh, fw, sh, sw, pad, act, bias, hw) in enumerate([
            ((1, 3, 4, 2), 3, 3, 3, 2, 2, Padding.SAME, A.NONE, True, (6, 8)),
            ((1, 3, 3, 5), 4, 2, 2, 2, 2, Padding.VALID, A.RELU, True, (6, 6)),
            ((2, 2, 3, 3), 2, 3, 2, 1, 2, Padding.VALID, A.NONE, False, (4, 6)),
            ((1, 4, 4, 1), 3, 4, 4, 3, 3, Padding.SAME, A.RELU6, True, (12, 12)),
            ((1, 2, 5, 4), 5, 1, 3, 2, 1, Padding.SAME, A.NONE, True, (3, 5))]):
        rng = np.random.default_rng(70 + k)
        scales = tuple(float(v) for v in rng.uniform(0.003, 0.03, oc))
        ins = [In((4,), values=(xs[0], hw[0], hw[1], oc), dtype="int32"),
               In((oc, fh, fw, xs[3]), (scales, 0), const=True, axis=0),
               In(xs, (0.05, -83 + 40 * k))]
        if bias:
            ins.append(In((oc,), values=tuple(int(v) for v in rng.integers(-3000, 3000, oc)),
                          dtype="int32"))
        cases.append(OpCase("TRANSPOSE_CONV", tuple(ins),
                            (Out((xs[0], hw[0], hw[1], oc), (0.08, 5 - 20 * k)),),
                            TransposeConvOptions(pad, sw, sh, act), seed=70 + k, version=3,
                            label=f"{fh}x{fw}/{sh}x{sw} {pad.name} {act.name}"))
    for k, (shape, q) in enumerate([((1, 5, 7), (0.05, -3)), ((3, 16), (0.2, 127)),
                                    ((2, 2, 3, 1), (0.1, 10)), ((1, 300), (0.01, -128)),
                                    ((4, 9), (0.5, 0))]):
        cases.append(OpCase("L2_NORMALIZATION", (In(shape, q, data="extreme" if k == 1
                                                    else "random"),),
                            (Out(shape, (1 / 128, 0)),), seed=80 + k))
    return cases


def log_softmax_cases() -> list[OpCase]:
    cases = []
    for k, (shape, q, data) in enumerate([
            ((1, 10), (0.1, 0), "random"), ((3, 7), (0.05, -128), "random"),
            ((2, 4, 33), (0.5, 127), "extreme"), ((1, 1), (0.2, 3), "random"),
            ((4, 256), (0.02, -5), "all"), ((2, 5), (1.5, 20), "random"),
            ((6, 12), (0.004, 64), "extreme")]):
        cases.append(OpCase("LOG_SOFTMAX", (In(shape, q, data=data),),
                            (Out(shape, (16 / 256, 127)),), seed=90 + k, label=f"q={q}"))
    return cases


def all_cases() -> list[OpCase]:
    """Every declared case of this file (the target tier runs them all at once)."""
    return (binary_cases() + unary_cases() + layout_cases() + reduce_resize_cases()
            + matmul_cases() + log_softmax_cases())


def ops_chain(seed: int = 13) -> bytes:
    """A multi-op model of the issue-13 ops for the firmware tier (codegen, arena plan,
    multi-output SPLIT, in-place ops, constants, scratch): SPLIT, SUB, MINIMUM, SPACE_TO_DEPTH,
    TRANSPOSE_CONV, RESIZE_BILINEAR, ELU, ABS, PRELU, REDUCE_MAX, SQUARED_DIFFERENCE, TRANSPOSE,
    BATCH_MATMUL, L2_NORMALIZATION, LOG_SOFTMAX, RESIZE_NEAREST_NEIGHBOR, DEPTH_TO_SPACE,
    PACK, SUM, MAXIMUM, RSQRT, SPLIT_V; three outputs."""
    from tinydeploy.model import ir

    rng = np.random.default_rng(seed)
    b = ModelBuilder("ops chain")
    q = (0.05, -3)

    def t(name: str, shape: tuple[int, ...], qq: tuple[float, int] = q, data: Any = None,
          dtype: str = "int8", **kw: Any) -> int:
        if dtype == "int32":
            return b.tensor(name, shape, "int32", data=data)
        return b.tensor(name, shape, "int8", scale=qq[0], zero_point=qq[1], data=data, **kw)

    x = t("input", (1, 6, 6, 4))
    axis3 = t("axis3", (1,), dtype="int32", data=[3])
    a, c = t("split_a", (1, 6, 6, 2)), t("split_b", (1, 6, 6, 2))
    b.op("SPLIT", [axis3, x], [a, c], ir.SplitOptions(2))
    s = t("sub", (1, 6, 6, 2), (0.08, 2))
    b.op("SUB", [a, c], [s], ir.ActivationOptions(ir.Activation.RELU))
    m = t("min", (1, 6, 6, 2))
    b.op("MINIMUM", [a, c], [m])
    s2d = t("s2d", (1, 3, 3, 8), (0.08, 2))
    b.op("SPACE_TO_DEPTH", [s], [s2d], ir.BlockSizeOptions(2))
    tshape = t("tc_shape", (4,), dtype="int32", data=[1, 6, 6, 3])
    ws = rng.uniform(0.005, 0.02, 3)
    w = b.tensor("tc_w", (3, 3, 3, 8), "int8", scale=ws, axis=0,
                 data=rng.integers(-127, 128, (3, 3, 3, 8)))
    bias = t("tc_b", (3,), dtype="int32", data=rng.integers(-500, 500, 3))
    tc = t("tconv", (1, 6, 6, 3), (0.1, -10))
    b.op("TRANSPOSE_CONV", [tshape, w, s2d, bias], [tc],
         ir.TransposeConvOptions(ir.Padding.SAME, 2, 2), version=3)
    size = t("size", (2,), dtype="int32", data=[9, 7])
    rz = t("resize", (1, 9, 7, 3), (0.1, -10))
    b.op("RESIZE_BILINEAR", [tc, size], [rz], ir.ResizeOptions(False, True))
    elu = t("elu", (1, 9, 7, 3), (0.06, 20))
    b.op("ELU", [rz], [elu])
    ab = t("abs", (1, 9, 7, 3), (0.05, -128))
    b.op("ABS", [elu], [ab])
    alpha = t("alpha", (3,), (0.01, 0), data=rng.integers(-100, 100, 3))
    pr = t("prelu", (1, 9, 7, 3), (0.07, 0))
    b.op("PRELU", [elu, alpha], [pr])
    axes = t("axes12", (2,), dtype="int32", data=[1, -2])
    rmax = t("reduce_max", (1, 1, 1, 3), (0.07, 0))
    b.op("REDUCE_MAX", [pr, axes], [rmax], ir.ReducerOptions(True))
    sq = t("sqdiff", (1, 9, 7, 3), (0.02, -128))
    b.op("SQUARED_DIFFERENCE", [pr, rmax], [sq])
    perm = t("perm", (4,), dtype="int32", data=[0, 3, 1, 2])
    tr = t("transpose", (1, 3, 9, 7), (0.02, -128))
    b.op("TRANSPOSE", [sq, perm], [tr])
    rhs = t("mm_rhs", (7, 5), (0.03, 0), data=rng.integers(-127, 128, (7, 5)))
    mm = t("matmul", (1, 3, 9, 5), (0.2, 4))
    b.op("BATCH_MATMUL", [tr, rhs], [mm], ir.BatchMatMulOptions())
    l2 = t("l2norm", (1, 3, 9, 5), (1 / 128, 0))
    b.op("L2_NORMALIZATION", [mm], [l2])
    ls = t("log_softmax", (1, 3, 9, 5), (16 / 256, 127))
    b.op("LOG_SOFTMAX", [l2], [ls])
    nn_size = t("nn_size", (2,), dtype="int32", data=[4, 4])
    nn = t("nearest", (1, 4, 4, 2))
    b.op("RESIZE_NEAREST_NEIGHBOR", [m, nn_size], [nn], ir.ResizeOptions(True, False))
    pk = t("pack", (1, 4, 4, 2, 2))
    b.op("PACK", [nn, nn], [pk], ir.PackOptions(2, -1))
    rshape = t("rs_shape", (4,), dtype="int32", data=[1, 4, 4, 4])
    rs = t("reshape", (1, 4, 4, 4))
    b.op("RESHAPE", [pk, rshape], [rs], ir.ReshapeOptions((1, 4, 4, 4)))
    d2s = t("d2s", (1, 8, 8, 1))
    b.op("DEPTH_TO_SPACE", [rs], [d2s], ir.BlockSizeOptions(2))
    floor = t("floor", (1, 1, 1, 1), data=[-20])
    mx = t("max", (1, 8, 8, 1))
    b.op("MAXIMUM", [d2s, floor], [mx])
    sizes = t("sv_sizes", (2,), dtype="int32", data=[3, 5])
    axis1 = t("axis1", (1,), dtype="int32", data=[-3])
    sv0, sv1 = t("sv0", (1, 3, 8, 1)), t("sv1", (1, 5, 8, 1))
    b.op("SPLIT_V", [mx, sizes, axis1], [sv0, sv1], ir.SplitOptions(2))
    sum_axes = t("sum_axes", (2,), dtype="int32", data=[1, 2])
    sm = t("sum", (1, 1), (0.9, -7))
    b.op("SUM", [sv1, sum_axes], [sm], ir.ReducerOptions(False))
    rsq = t("rsqrt", (1, 9, 7, 3), (0.04, -100))
    b.op("RSQRT", [ab], [rsq])
    return b.build([x], [ls, rsq, sv0, sm])


@dataclass(frozen=True)
class FloatChainCase:
    """int8 -> DEQUANTIZE -> float ``op`` -> QUANTIZE -> int8: a float op the converter left
    between the two (runs on cores with an FPU only)."""

    op: str
    shape: tuple[int, ...]
    q_in: Q
    q_out: Q
    seed: int = 0

    @property
    def name(self) -> str:
        return f"float {self.op} {list(self.shape)} {self.q_in}->{self.q_out}"

    def build(self) -> Built:
        rng = np.random.default_rng(self.seed)
        b = ModelBuilder()
        x = b.tensor("x", self.shape, "int8", scale=self.q_in[0], zero_point=self.q_in[1])
        f = b.tensor("xf", self.shape, "float32")
        g = b.tensor("yf", self.shape, "float32")
        y = b.tensor("y", self.shape, "int8", scale=self.q_out[0], zero_point=self.q_out[1])
        b.op("DEQUANTIZE", [x], [f], version=2)
        b.op(self.op, [f], [g])
        b.op("QUANTIZE", [g], [y])
        return Built(self.name, b.build([x], [y]),
                     (int8_inputs(self.shape, "all", rng, self.q_in[1]),))


def float_cases() -> list[FloatChainCase]:
    out = []
    for k, (qi, qo) in enumerate([((0.05, -3), (0.02, 10)), ((0.1, 127), (0.004, -128)),
                                  ((0.3, -128), (0.25, 0))]):
        for op in ("ELU", "ABS", "LOGISTIC", "TANH"):
            qq = (1 / 256, -128) if op == "LOGISTIC" else ((1 / 128, 0) if op == "TANH" else qo)
            out.append(FloatChainCase(op, (4, 64), qi, qq, seed=k))
    return out


# --- 16x8 (int16 activations, int8 weights, int64 bias) -------------------------------------

@dataclass(frozen=True)
class Int16Case:
    """One 16x8 op: "fc", "conv" or a QUANTIZE/DEQUANTIZE between the given dtypes."""

    kind: str
    shape: tuple[int, ...] = (2, 17)
    out_c: int = 5
    kernel: tuple[int, int] = (3, 3)
    stride: int = 1
    padding: str = "SAME"
    act: str = "NONE"
    bias: bool = True
    per_channel: bool = True
    q_in: Q = (0.0004, 0)
    q_out: Q = (0.0009, 0)
    dtypes: tuple[str, str] = ("int16", "int16")
    seed: int = 0
    bias_dtype: str = "int64"   # "int32": TFLM's int32-accumulator 16x8 path

    @property
    def op(self) -> str:
        return {"fc": "FULLY_CONNECTED", "conv": "CONV_2D"}.get(
            self.kind, "DEQUANTIZE" if self.dtypes[1] == "float32" else "QUANTIZE")

    @property
    def name(self) -> str:
        return (f"16x8 {self.kind} {list(self.shape)} oc={self.out_c} k={self.kernel} "
                f"s={self.stride} {self.padding} {self.act} {self.dtypes}"
                + (f" {self.bias_dtype} bias" if self.bias else " no bias"))

    def build(self) -> Built:
        from tinydeploy.model import ir

        rng = np.random.default_rng(self.seed)
        b = ModelBuilder()
        din, dout = self.dtypes
        x = b.tensor("x", self.shape, din, scale=self.q_in[0], zero_point=self.q_in[1])
        info = np.iinfo(np.int16 if din == "int16" else np.int8)
        feed = rng.integers(info.min, info.max + 1, self.shape).astype(info.dtype)
        act = ir.Activation[self.act]
        if self.kind in ("fc", "conv"):
            c = self.shape[-1]
            wshape = (self.out_c, c) if self.kind == "fc" else (self.out_c, *self.kernel, c)
            scales = rng.uniform(0.001, 0.02, self.out_c) if self.per_channel else [0.01]
            w = b.tensor("w", wshape, "int8", scale=scales, axis=0,
                         data=rng.integers(-127, 128, wshape))
            bias = b.tensor("b", (self.out_c,), self.bias_dtype,
                            data=rng.integers(-(1 << 20), 1 << 20, self.out_c)) \
                if self.bias else -1
            if self.kind == "fc":
                oshape: tuple[int, ...] = (self.shape[0], self.out_c)
                opts: object = ir.FullyConnectedOptions(act)
                ver = 7
            else:
                pad = ir.Padding[self.padding]
                from tinydeploy.kernels.common import compute_out_size
                oh = compute_out_size(pad, self.shape[1], self.kernel[0], self.stride)
                ow = compute_out_size(pad, self.shape[2], self.kernel[1], self.stride)
                oshape = (self.shape[0], oh, ow, self.out_c)
                opts = ir.Conv2DOptions(pad, self.stride, self.stride, act)
                ver = 4
            y = b.tensor("y", oshape, "int16", scale=self.q_out[0], zero_point=0)
            b.op("FULLY_CONNECTED" if self.kind == "fc" else "CONV_2D", [x, w, bias], [y],
                 opts, version=ver)
        elif dout == "float32":
            y = b.tensor("y", self.shape, "float32")
            b.op("DEQUANTIZE", [x], [y], version=4)
        else:
            y = b.tensor("y", self.shape, dout, scale=self.q_out[0], zero_point=self.q_out[1])
            b.op("QUANTIZE", [x], [y], version=2)
        return Built(self.name, b.build([x], [y]), (feed,))


def int16_cases() -> list[Int16Case]:
    cases = [
        Int16Case("fc", (2, 17), 5, seed=1), Int16Case("fc", (1, 64), 9, act="RELU", seed=2),
        Int16Case("fc", (3, 33), 4, bias=False, per_channel=False, q_out=(0.002, 0), seed=3),
        Int16Case("fc", (1, 8), 3, act="RELU6", q_in=(0.001, 0), q_out=(0.0004, 0), seed=4),
        Int16Case("conv", (1, 7, 6, 3), 4, (3, 3), 1, "SAME", seed=5),
        Int16Case("conv", (2, 9, 8, 2), 5, (3, 2), 2, "VALID", "RELU", seed=6),
        Int16Case("conv", (1, 5, 5, 4), 3, (1, 1), 1, "SAME", bias=False, seed=7),
        Int16Case("conv", (1, 10, 4, 1), 6, (5, 3), 2, "SAME", "RELU6", q_in=(0.003, 0),
                  q_out=(0.0007, 0), seed=8),
    ]
    for k, (din, dout, qi, qo) in enumerate([
            ("int16", "int8", (0.0004, 0), (0.05, -7)), ("int8", "int16", (0.05, 11), (0.0003, 0)),
            ("int16", "int16", (0.0004, 0), (0.0011, 0)), ("int16", "int32", (0.0004, 0),
                                                            (0.00001, 0)),
            ("int8", "int32", (0.02, -3), (0.0001, 5)), ("int16", "float32", (0.0007, 0), (1, 0))]):
        cases.append(Int16Case("convert", (4, 50), q_in=qi, q_out=qo, dtypes=(din, dout),
                               seed=20 + k))
    return cases


def s16_chain(seed: int = 21) -> bytes:
    """int8 input -> QUANTIZE int16 -> CONV_2D 16x8 (stride 2, RELU) -> CONV_2D 16x8 ->
    RESHAPE -> FULLY_CONNECTED 16x8 -> outputs: int16 logits, and int32 (QUANTIZE) and int8
    (QUANTIZE) copies of them."""
    from tinydeploy.model import ir

    rng = np.random.default_rng(seed)
    b = ModelBuilder("16x8 conv net")
    x = b.tensor("input", (1, 10, 8, 2), "int8", scale=0.04, zero_point=-5)
    x16 = b.tensor("input16", (1, 10, 8, 2), "int16", scale=0.0002, zero_point=0)
    b.op("QUANTIZE", [x], [x16], version=2)

    def conv(name: str, src: int, shape_in: tuple[int, ...], oc: int, k: int, s: int,
             act: ir.Activation, q: float) -> tuple[int, tuple[int, ...]]:
        ic = shape_in[3]
        w = b.tensor(f"{name}/w", (oc, k, k, ic), "int8", scale=rng.uniform(0.002, 0.01, oc),
                     axis=0, data=rng.integers(-127, 128, (oc, k, k, ic)))
        bias = b.tensor(f"{name}/b", (oc,), "int64", data=rng.integers(-5000, 5000, oc))
        oh, ow = (shape_in[1] + s - 1) // s, (shape_in[2] + s - 1) // s
        out_shape = (1, oh, ow, oc)
        y = b.tensor(name, out_shape, "int16", scale=q, zero_point=0)
        b.op("CONV_2D", [src, w, bias], [y],
             ir.Conv2DOptions(ir.Padding.SAME, s, s, act), version=4)
        return y, out_shape

    c1, s1 = conv("conv1", x16, (1, 10, 8, 2), 6, 3, 2, ir.Activation.RELU, 0.0004)
    c2, s2 = conv("conv2", c1, s1, 4, 3, 1, ir.Activation.NONE, 0.0005)
    n = int(np.prod(s2))
    shape = b.tensor("shape", (2,), "int32", data=[1, n])
    flat = b.tensor("flat", (1, n), "int16", scale=0.0005, zero_point=0)
    b.op("RESHAPE", [c2, shape], [flat], ir.ReshapeOptions((1, n)))
    w = b.tensor("fc/w", (5, n), "int8", scale=0.004, data=rng.integers(-127, 128, (5, n)))
    bias = b.tensor("fc/b", (5,), "int64", data=rng.integers(-3000, 3000, 5))
    logits = b.tensor("logits", (1, 5), "int16", scale=0.002, zero_point=0)
    b.op("FULLY_CONNECTED", [flat, w, bias], [logits], ir.FullyConnectedOptions(), version=7)
    l32 = b.tensor("logits32", (1, 5), "int32", scale=0.0001, zero_point=0)
    b.op("QUANTIZE", [logits], [l32], version=2)
    l8 = b.tensor("logits8", (1, 5), "int8", scale=0.2, zero_point=3)
    b.op("QUANTIZE", [logits], [l8], version=2)
    return b.build([x], [logits, l32, l8])


@dataclass(frozen=True)
class Int16WindowCase:
    """16x8 DEPTHWISE_CONV_2D or int16 AVERAGE_POOL_2D / MAX_POOL_2D."""

    op: str
    shape: tuple[int, ...]
    window: tuple[int, int]
    stride: int
    padding: str = "SAME"
    act: str = "NONE"
    multiplier: int = 1
    seed: int = 0

    @property
    def name(self) -> str:
        return (f"16x8 {self.op} {list(self.shape)} k={self.window} s={self.stride} "
                f"{self.padding} {self.act} m={self.multiplier}")

    def build(self) -> Built:
        from tinydeploy.kernels.common import compute_out_size
        from tinydeploy.model import ir

        rng = np.random.default_rng(self.seed)
        b = ModelBuilder()
        n, h, w, c = self.shape
        x = b.tensor("x", self.shape, "int16", scale=0.0005, zero_point=0)
        pad = ir.Padding[self.padding]
        act = ir.Activation[self.act]
        oh = compute_out_size(pad, h, self.window[0], self.stride)
        ow = compute_out_size(pad, w, self.window[1], self.stride)
        if self.op == "DEPTHWISE_CONV_2D":
            oc = c * self.multiplier
            wt = b.tensor("w", (1, *self.window, oc), "int8", scale=rng.uniform(0.002, 0.02, oc),
                          axis=3, data=rng.integers(-127, 128, (1, *self.window, oc)))
            bias = b.tensor("b", (oc,), "int64", data=rng.integers(-30000, 30000, oc))
            y = b.tensor("y", (n, oh, ow, oc), "int16", scale=0.0008, zero_point=0)
            b.op(self.op, [x, wt, bias], [y], ir.DepthwiseConv2DOptions(
                pad, self.stride, self.stride, self.multiplier, act), version=5)
        else:
            y = b.tensor("y", (n, oh, ow, c), "int16", scale=0.0005, zero_point=0)
            b.op(self.op, [x], [y], ir.Pool2DOptions(pad, self.stride, self.stride,
                                                     self.window[1], self.window[0], act),
                 version=3)
        feed = rng.integers(-32768, 32768, self.shape).astype(np.int16)
        return Built(self.name, b.build([x], [y]), (feed,))


def int16_window_cases() -> list[Int16WindowCase]:
    return [
        Int16WindowCase("DEPTHWISE_CONV_2D", (1, 7, 6, 3), (3, 3), 1, seed=1),
        Int16WindowCase("DEPTHWISE_CONV_2D", (1, 9, 8, 2), (3, 2), 2, "VALID", "RELU", 3, 2),
        Int16WindowCase("DEPTHWISE_CONV_2D", (2, 5, 5, 4), (1, 1), 1, act="RELU6", seed=3),
        Int16WindowCase("AVERAGE_POOL_2D", (1, 7, 6, 3), (3, 3), 2, seed=4),
        Int16WindowCase("AVERAGE_POOL_2D", (1, 8, 8, 2), (2, 2), 2, "VALID", "RELU", seed=5),
        Int16WindowCase("AVERAGE_POOL_2D", (1, 5, 9, 1), (5, 9), 1, "VALID", seed=6),
        Int16WindowCase("MAX_POOL_2D", (1, 7, 6, 3), (3, 3), 2, seed=7),
        Int16WindowCase("MAX_POOL_2D", (2, 6, 6, 2), (2, 3), 1, "VALID", "RELU6", seed=8),
    ]


def kws16_chain(seed: int = 31, state: str = "int16") -> bytes:
    """A keyword model shaped like TFLM's keyword_scrambled: int16 input -> QUANTIZE int8 ->
    SVDF (int16 or int8 state) -> FULLY_CONNECTED -> SVDF (rank 2) -> FULLY_CONNECTED ->
    SOFTMAX int8 -> int16 (1/65536, -32768) -> QUANTIZE int16 -> int32."""
    from tinydeploy.model import ir

    rng = np.random.default_rng(seed)
    b = ModelBuilder("kws 16-bit io")
    x16 = b.tensor("input", (1, 40), "int16", scale=0.0005, zero_point=0)
    x = b.tensor("input8", (1, 40), "int8", scale=0.05, zero_point=-4)
    b.op("QUANTIZE", [x16], [x], version=2)

    def svdf(name: str, src: int, n_in: int, units: int, rank: int, memory: int) -> int:
        nf = units * rank
        wf = b.tensor(f"{name}/wf", (nf, n_in), "int8", scale=0.01, zero_point=0,
                      data=rng.integers(-127, 128, (nf, n_in)))
        if state == "int16":
            st_scale, wt_scale = 0.004, 1.0 / 4096
            wt = b.tensor(f"{name}/wt", (nf, memory), "int16", scale=wt_scale, zero_point=0,
                          data=rng.integers(-4096, 4097, (nf, memory)))
            st = b.tensor(f"{name}/state", (1, memory * nf), "int16", scale=st_scale,
                          zero_point=0, is_variable=True)
        else:
            st_scale, wt_scale = 0.25, 1.0 / 64
            wt = b.tensor(f"{name}/wt", (nf, memory), "int8", scale=wt_scale, zero_point=0,
                          data=rng.integers(-64, 65, (nf, memory)))
            st = b.tensor(f"{name}/state", (1, memory * nf), "int8", scale=st_scale,
                          zero_point=0, is_variable=True)
        bias = b.tensor(f"{name}/b", (units,), "int32", scale=st_scale * wt_scale,
                        zero_point=0, data=rng.integers(-20000, 20000, units))
        y = b.tensor(name, (1, units), "int8", scale=0.5, zero_point=5)
        b.op("SVDF", [src, wf, wt, bias, st], [y], ir.SVDFOptions(rank))
        return y

    def fc(name: str, src: int, n_in: int, n_out: int, q: tuple[float, int]) -> int:
        w = b.tensor(f"{name}/w", (n_out, n_in), "int8", scale=0.01,
                     data=rng.integers(-127, 128, (n_out, n_in)))
        bias = b.tensor(f"{name}/b", (n_out,), "int32", scale=0.005,
                        data=rng.integers(-3000, 3000, n_out))
        y = b.tensor(name, (1, n_out), "int8", scale=q[0], zero_point=q[1])
        b.op("FULLY_CONNECTED", [src, w, bias], [y], ir.FullyConnectedOptions(), version=4)
        return y

    s1 = svdf("svdf1", x, 40, 16, 1, 6)
    f1 = fc("fc1", s1, 16, 12, (0.3, -2))
    s2 = svdf("svdf2", f1, 12, 8, 2, 4)
    logits = fc("logits", s2, 8, 3, (0.1, 0))
    probs = b.tensor("probs", (1, 3), "int16", scale=1 / 65536, zero_point=-32768)
    b.op("SOFTMAX", [logits], [probs], ir.SoftmaxOptions(1.0))
    out = b.tensor("probs32", (1, 3), "int32", scale=1 / 65536, zero_point=0)
    b.op("QUANTIZE", [probs], [out], version=2)
    return b.build([x16], [out])


@dataclass(frozen=True)
class Int16AddCase:
    """int16 ADD (zero points 0) with broadcasting and a fused activation."""

    shape0: tuple[int, ...]
    shape1: tuple[int, ...]
    scales: tuple[float, float, float]
    act: str = "NONE"
    seed: int = 0
    op: str = "ADD"

    @property
    def name(self) -> str:
        return (f"int16 {self.op} {list(self.shape0)}x{list(self.shape1)} {self.scales} "
                f"{self.act}")

    def build(self) -> Built:
        from tinydeploy.model import ir

        rng = np.random.default_rng(self.seed)
        b = ModelBuilder()
        x0 = b.tensor("x0", self.shape0, "int16", scale=self.scales[0], zero_point=0)
        x1 = b.tensor("x1", self.shape1, "int16", scale=self.scales[1], zero_point=0)
        out = tuple(np.broadcast_shapes(self.shape0, self.shape1))
        y = b.tensor("y", out, "int16", scale=self.scales[2], zero_point=0)
        b.op(self.op, [x0, x1], [y], ir.ActivationOptions(ir.Activation[self.act]), version=3)
        feeds = tuple(rng.integers(-32768, 32768, s).astype(np.int16)
                      for s in (self.shape0, self.shape1))
        return Built(self.name, b.build([x0, x1], [y]), feeds)


def int16_add_cases() -> list[Int16AddCase]:
    return [Int16AddCase((2, 3, 5), (2, 3, 5), (0.0004, 0.0007, 0.001), seed=1),
            Int16AddCase((1, 4, 4, 6), (6,), (0.0005, 0.0002, 0.0006), "RELU", seed=2),
            Int16AddCase((3, 1, 7), (1, 4, 1), (0.001, 0.001, 0.0015), "RELU6", seed=3),
            Int16AddCase((64,), (64,), (0.00025, 0.000125, 0.0005), seed=4),
            Int16AddCase((2, 3, 5), (5,), (0.0004, 0.0007, 0.001), "RELU", seed=5, op="SUB"),
            Int16AddCase((3, 1, 7), (1, 4, 1), (0.001, 0.0005, 0.0012), seed=6, op="SUB"),
            Int16AddCase((2, 3, 5), (2, 3, 5), (0.004, 0.003, 0.0003), seed=7, op="MUL"),
            Int16AddCase((1, 4, 4, 6), (6,), (0.002, 0.005, 0.0004), "RELU", seed=8, op="MUL"),
            Int16AddCase((3, 1, 7), (1, 4, 1), (0.01, 0.01, 0.004), "RELU6", seed=9, op="MUL")]


@dataclass(frozen=True)
class Int16ShapeCase:
    """int16 MEAN / SUM over axes, or CONCATENATION of int16 inputs sharing one scale."""

    op: str
    shapes: tuple[tuple[int, ...], ...]
    axes: tuple[int, ...] = ()
    keep_dims: bool = False
    q_out: float = 0.0007
    seed: int = 0

    @property
    def name(self) -> str:
        return f"int16 {self.op} {[list(s) for s in self.shapes]} axes={list(self.axes)}"

    def build(self) -> Built:
        from tinydeploy.model import ir

        rng = np.random.default_rng(self.seed)
        b = ModelBuilder()
        xs = [b.tensor(f"x{k}", s, "int16", scale=0.0005, zero_point=0)
              for k, s in enumerate(self.shapes)]
        feeds = tuple(rng.integers(-32768, 32768, s).astype(np.int16) for s in self.shapes)
        if self.op == "CONCATENATION":
            ax = self.axes[0] % len(self.shapes[0])
            out = list(self.shapes[0])
            out[ax] = sum(s[ax] for s in self.shapes)
            y = b.tensor("y", tuple(out), "int16", scale=0.0005, zero_point=0)
            b.op(self.op, xs, [y], ir.ConcatenationOptions(self.axes[0]))
        else:
            shape = self.shapes[0]
            red = {a % len(shape) for a in self.axes}
            out_shape = tuple(1 if d in red else n for d, n in enumerate(shape)) \
                if self.keep_dims else tuple(n for d, n in enumerate(shape) if d not in red)
            axes = b.tensor("axes", (len(self.axes),), "int32", data=list(self.axes))
            y = b.tensor("y", out_shape or (1,), "int16", scale=self.q_out, zero_point=0)
            b.op(self.op, [xs[0], axes], [y], ir.ReducerOptions(self.keep_dims), version=2)
        return Built(self.name, b.build(xs, [y]), feeds)


def int16_shape_cases() -> list[Int16ShapeCase]:
    return [Int16ShapeCase("MEAN", ((1, 5, 7, 3),), (1, 2), True, seed=1),
            Int16ShapeCase("MEAN", ((2, 3, 4),), (-1,), False, 0.0002, seed=2),
            Int16ShapeCase("SUM", ((1, 4, 6, 2),), (1, 2), True, 0.02, seed=3),
            Int16ShapeCase("SUM", ((3, 5),), (0,), False, 0.003, seed=4),
            Int16ShapeCase("CONCATENATION", ((2, 3), (2, 5), (2, 1)), (1,), seed=5),
            Int16ShapeCase("CONCATENATION", ((1, 2, 2, 3), (1, 3, 2, 3)), (-3,), seed=6)]


def _as_int16(case: OpCase) -> OpCase:
    """``case`` on int16 data (16x8 tensors: its scales, zero points 0; index inputs
    unchanged), labelled as such."""
    from dataclasses import replace

    ins = tuple(replace(i, dtype="int16", q=(i.q[0], 0)) if i.values is None and i.q else i
                for i in case.ins)
    outs = tuple(replace(o, dtype="int16", q=(o.q[0], 0)) if o.q else o for o in case.outs)
    return replace(case, ins=ins, outs=outs, label=f"int16 {case.label}".strip())


INT16_COPY_OPS = ("TRANSPOSE", "SPLIT", "SPLIT_V", "PACK", "RESIZE_NEAREST_NEIGHBOR")


def int16_copy_cases() -> list[OpCase]:
    """The layout and nearest-resize cases whose op TFLM also runs on int16 (TRANSPOSE up to
    5-D, SPLIT/SPLIT_V with negative axes, PACK, RESIZE_NEAREST_NEIGHBOR with
    align_corners / half_pixel_centers), on int16 data."""
    return [_as_int16(c) for c in layout_cases() + reduce_resize_cases()
            if c.op in INT16_COPY_OPS]


def int16_sigmoid_cases() -> list[OpCase]:
    """int16 LOGISTIC and TANH (output 2^-15): every int16 input once, at the power-of-two
    input scales of TFLM's shortcut (2^-12, and 2^-11 for TANH), power-of-two scales off it,
    and arbitrary small and large scales (the multiplier's doubling loop, its upper end)."""
    cases = []
    for k, scale in enumerate((2.0 ** -12, 2.0 ** -11, 2.0 ** -10, 2.0 ** -15, 0.0004,
                               1 / 3000, 3e-6, 0.05, 2.5)):
        for op in ("LOGISTIC", "TANH"):
            shape = (65536,) if k < 5 else (3, 7, 5)
            data = "all" if k < 5 else "random"
            cases.append(OpCase(op, (In(shape, (scale, 0), data=data, dtype="int16"),),
                                (Out(shape, (1 / 32768, 0), dtype="int16"),), seed=110 + k,
                                label=f"int16 scale={scale:g}"))
    return cases


def int16_bias32_cases() -> list[Int16Case]:
    """16x8 FULLY_CONNECTED and CONV_2D with an int32 bias (the converter's
    ``_experimental_full_integer_quantization_bias_type`` int32): TFLM accumulates in int32
    and requantizes with the 32-bit multiply; per-channel and per-tensor weights, fused
    activations, strides, odd sizes, deep accumulations."""
    i32 = "int32"
    return [
        Int16Case("fc", (2, 17), 5, seed=41, bias_dtype=i32),
        Int16Case("fc", (1, 300), 9, act="RELU", seed=42, bias_dtype=i32),
        Int16Case("fc", (3, 33), 4, per_channel=False, q_out=(0.002, 0), seed=43,
                  bias_dtype=i32),
        Int16Case("fc", (1, 8), 3, act="RELU6", q_in=(0.001, 0), q_out=(0.0004, 0), seed=44,
                  bias_dtype=i32),
        Int16Case("conv", (1, 7, 6, 3), 4, (3, 3), 1, "SAME", seed=45, bias_dtype=i32),
        Int16Case("conv", (2, 9, 8, 2), 5, (3, 2), 2, "VALID", "RELU", seed=46, bias_dtype=i32),
        Int16Case("conv", (1, 10, 4, 7), 6, (5, 3), 2, "SAME", "RELU6", q_in=(0.003, 0),
                  q_out=(0.0007, 0), seed=47, bias_dtype=i32),
        Int16Case("conv", (1, 5, 5, 16), 3, (3, 3), 1, "SAME", per_channel=False, seed=48,
                  bias_dtype=i32),
    ]


def int16_softmax_cases() -> list[OpCase]:
    """int16 -> int16 SOFTMAX (output 1/32768): odd depths, one-element rows, 3-D inputs,
    betas other than 1, input scales whose differences span less or far more than [-10, 0],
    and rows of all 65,536 values."""
    from tinydeploy.model.ir import SoftmaxOptions

    cases = []
    for k, (shape, scale, beta, data) in enumerate([
            ((1, 10), 0.0005, 1.0, "random"), ((3, 7), 1 / 32768, 1.0, "random"),
            ((2, 4, 33), 0.002, 0.5, "random"), ((1, 1), 0.001, 1.0, "random"),
            ((4, 300), 3e-5, 2.0, "random"), ((2, 5), 0.01, 1.0, "random"),
            ((2, 32768), 0.0003, 1.0, "all"), ((5, 12), 0.00015, 1.7, "random")]):
        cases.append(OpCase("SOFTMAX", (In(shape, (scale, 0), data=data, dtype="int16"),),
                            (Out(shape, (1 / 32768, 0), dtype="int16"),), SoftmaxOptions(beta),
                            seed=130 + k, label=f"int16 scale={scale:g} beta={beta:g}"))
    return cases


def int16_minmax_cases() -> list[OpCase]:
    """MAXIMUM and MINIMUM on int16 data (TFLM's int16 kernels): the int8 cases with both
    operands in the arena (broadcasting up to 5-D), on int16 data."""
    return [_as_int16(c) for c in binary_cases()
            if c.op in ("MAXIMUM", "MINIMUM") and not any(i.const for i in c.ins)]
