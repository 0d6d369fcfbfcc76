"""Golden cases of ADD, MUL (with broadcasting), QUANTIZE and DEQUANTIZE, declared as data."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tinydeploy.model.ir import Activation, ActivationOptions
from tinydeploy.testing.builder import ModelBuilder

try:
    from golden_ops import Built, int8_inputs
except ImportError:  # pragma: no cover - when tests/golden is a package
    from .golden_ops import Built, int8_inputs

Q = tuple[float, int]  # (scale, zero point)


@dataclass(frozen=True)
class BinaryCase:
    """ADD or MUL of int8 tensors; ``const`` = index of an operand stored in the model."""

    op: str
    shape0: tuple[int, ...]
    shape1: tuple[int, ...]
    q0: Q
    q1: Q
    qo: Q
    act: Activation = Activation.NONE
    data: str = "random"
    const: int | None = None
    seed: int = 0

    @property
    def name(self) -> str:
        c = f" const{self.const}" if self.const is not None else ""
        return (f"{self.op} {list(self.shape0)}x{list(self.shape1)} q={self.q0},{self.q1}->"
                f"{self.qo} {self.act.name} {self.data}{c}")

    def build(self) -> Built:
        rng = np.random.default_rng(self.seed)
        out_shape = tuple(np.broadcast_shapes(self.shape0, self.shape1))
        arrays = [int8_inputs(s, self.data, rng, q[1])
                  for s, q in ((self.shape0, self.q0), (self.shape1, self.q1))]
        b = ModelBuilder()
        ids = []
        for k, (s, q) in enumerate(((self.shape0, self.q0), (self.shape1, self.q1))):
            data = arrays[k] if self.const == k else None
            ids.append(b.tensor(f"x{k}", s, "int8", scale=q[0], zero_point=q[1], data=data))
        y = b.tensor("y", out_shape, "int8", scale=self.qo[0], zero_point=self.qo[1])
        b.op(self.op, ids, [y], ActivationOptions(self.act))
        graph_inputs = [i for k, i in enumerate(ids) if k != self.const]
        feeds = tuple(a for k, a in enumerate(arrays) if k != self.const)
        return Built(self.name, b.build(graph_inputs, [y]), feeds)


@dataclass(frozen=True)
class ConvertCase:
    """QUANTIZE (int8 or float32 input) or DEQUANTIZE (int8 -> float32)."""

    op: str
    shape: tuple[int, ...]
    in_q: Q | None      # None: float32 input
    out_q: Q | None     # None: float32 output
    data: str = "random"
    seed: int = 0

    @property
    def name(self) -> str:
        return f"{self.op} {list(self.shape)} {self.in_q}->{self.out_q} {self.data}"

    def build(self) -> Built:
        rng = np.random.default_rng(self.seed)
        b = ModelBuilder()
        if self.in_q is None:
            x = b.tensor("x", self.shape, "float32")
            assert self.out_q is not None
            feed = float_inputs(self.shape, self.data, rng, self.out_q)
        else:
            x = b.tensor("x", self.shape, "int8", scale=self.in_q[0], zero_point=self.in_q[1])
            feed = int8_inputs(self.shape, self.data, rng, self.in_q[1])
        if self.out_q is None:
            y = b.tensor("y", self.shape, "float32")
        else:
            y = b.tensor("y", self.shape, "int8", scale=self.out_q[0], zero_point=self.out_q[1])
        b.op(self.op, [x], [y])
        return Built(self.name, b.build([x], [y]), (feed,))


def float_inputs(shape: tuple[int, ...], kind: str, rng: np.random.Generator, q: Q
                 ) -> np.ndarray:
    """float32 data for QUANTIZE: "random" around the representable range, "ties" on exact
    half steps of the scale (rounding halves away from zero), "extreme" far outside it."""
    n = int(np.prod(shape))
    scale, zp = q
    if kind == "random":
        v = (rng.uniform(-160, 160, size=n) - zp) * scale
    elif kind == "ties":
        v = (rng.integers(-140, 140, size=n) + 0.5) * scale
    elif kind == "extreme":
        v = rng.choice([-1e6, 1e6, -3e4, 3e4, 0.0, -0.0, scale * 0.5, -scale * 0.5], size=n)
    else:
        raise ValueError(kind)
    return v.astype(np.float32).reshape(shape)


_BCAST_SHAPES = [
    ((2, 3, 4), (2, 3, 4)), ((2, 3, 4), (4,)), ((2, 3, 4), (3, 1)), ((2, 1, 4), (1, 3, 1)),
    ((1, 8, 8, 16), (1, 1, 1, 16)), ((1, 8, 8, 16), (1, 8, 8, 1)), ((4, 1), (1, 5)),
    ((7,), (1,)), ((1,), (3, 2, 5)), ((2, 1, 3, 1, 2), (1, 4, 1, 5, 1)),
    ((1, 2, 1, 3, 1, 5), (2, 1, 4, 1, 6, 1)), ((1, 1, 1, 1), (1, 1, 1, 1)),
]
_QUANTS = [
    ((0.05, -3), (0.11, 100), (0.1, -20)), ((0.02, -128), (0.02, -128), (0.04, -128)),
    ((0.5, 127), (0.25, 127), (0.75, 127)), ((0.1, 0), (0.3, 5), (0.2, 0)),
    ((0.0078, -128), (1.5, 12), (1.6, -7)), ((0.2, 64), (0.2, -64), (0.35, 0)),
]


def default_binary_cases() -> list[BinaryCase]:
    cases = []
    acts = (Activation.NONE, Activation.RELU, Activation.RELU6, Activation.RELU_N1_TO_1)
    for op in ("ADD", "MUL"):
        for k, (s0, s1) in enumerate(_BCAST_SHAPES):
            q0, q1, qo = _QUANTS[k % len(_QUANTS)]
            if op == "MUL":
                qo = (q0[0] * q1[0] * 40, qo[1])
            cases.append(BinaryCase(op, s0, s1, q0, q1, qo, acts[k % 4], seed=k))
        for k, (q0, q1, qo) in enumerate(_QUANTS):
            if op == "MUL":
                qo = (q0[0] * q1[0] * 60, qo[1])
            cases.append(BinaryCase(op, (3, 5, 7), (3, 5, 7), q0, q1, qo, data="extreme",
                                    seed=100 + k))
        cases.append(BinaryCase(op, (2, 4, 6), (6,), (0.1, 3), (0.07, -9), (0.3, 1),
                                const=1, seed=7))
        cases.append(BinaryCase(op, (1,), (3, 4), (0.1, 3), (0.07, -9), (0.3, 1),
                                const=0, seed=8))
        cases.append(BinaryCase(op, (5, 6), (5, 6), (0.2, 0), (0.1, 0), (0.15, 0),
                                Activation.RELU, const=1, seed=9))
    # exact ties of the rescaling (power-of-two ratios)
    cases.append(BinaryCase("ADD", (64,), (64,), (0.25, 0), (0.125, 1), (0.5, 0), seed=11))
    cases.append(BinaryCase("MUL", (64,), (64,), (0.5, 0), (0.5, 1), (1.0, 0), seed=12))
    cases.append(BinaryCase("MUL", (64,), (64,), (0.3, 0), (0.2, 1), (0.0075, 0), seed=13))
    return cases


def default_convert_cases() -> list[ConvertCase]:
    cases = []
    for k, (qi, qo) in enumerate([((0.1, 5), (0.07, -9)), ((0.02, -128), (0.5, 127)),
                                  ((0.5, 127), (0.01, -128)), ((0.3, 0), (0.2, 0)),
                                  ((0.25, 3), (0.125, 3))]):
        cases.append(ConvertCase("QUANTIZE", (4, 64), qi, qo, "all", seed=k))
    for k, (q, kind) in enumerate([((0.1, 0), "random"), ((0.0625, -128), "ties"),
                                   ((0.5, 127), "ties"), ((0.02, 17), "extreme"),
                                   ((3.0, -4), "random")]):
        cases.append(ConvertCase("QUANTIZE", (2, 3, 40), None, q, kind, seed=10 + k))
    for k, q in enumerate([(0.1, 5), (0.02, -128), (0.5, 127), (1e-3, 0), (7.5, -77)]):
        cases.append(ConvertCase("DEQUANTIZE", (256,), q, None, "all", seed=20 + k))
    return cases


def sweep_cases(n: int = 200, seed: int = 99) -> list[BinaryCase]:
    rng = np.random.default_rng(seed)
    out = []
    for k in range(n):
        s0, s1 = _BCAST_SHAPES[int(rng.integers(len(_BCAST_SHAPES)))]
        if rng.random() < 0.5:
            s0, s1 = s1, s0
        q0 = (float(10 ** rng.uniform(-3, 0.5)), int(rng.integers(-128, 128)))
        q1 = (float(10 ** rng.uniform(-3, 0.5)), int(rng.integers(-128, 128)))
        op = "ADD" if k % 2 else "MUL"
        base = max(q0[0], q1[0]) if op == "ADD" else q0[0] * q1[0] * 64
        qo = (float(base * 10 ** rng.uniform(-0.5, 1)), int(rng.integers(-128, 128)))
        act = (Activation.NONE, Activation.RELU, Activation.RELU6)[k % 3]
        out.append(BinaryCase(op, s0, s1, q0, q1, qo, act,
                              data="extreme" if k % 5 == 0 else "random", seed=k))
    return out
