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

from tinydeploy.model.builder import ModelBuilder

try:
    from golden_ops import Built, int8_inputs
except ImportError:  # pragma: no cover - when tests/golden is a package
    from .golden_ops import Built, int8_inputs

Q = tuple[float, int]


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
            if spec.data == "range":
                arr = rng.integers(spec.lo, spec.hi + 1, size=spec.shape).astype(np.int8)
            else:
                zp = spec.q[1] if spec.q else 0
                arr = int8_inputs(spec.shape, spec.data, rng, zp)
            q = spec.q or (1.0, 0)
            if spec.const:
                ids.append(b.tensor(f"c{k}", spec.shape, "int8", scale=q[0], zero_point=q[1],
                                    data=arr))
            else:
                t = b.tensor(f"x{k}", spec.shape, "int8", scale=q[0], zero_point=q[1])
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
