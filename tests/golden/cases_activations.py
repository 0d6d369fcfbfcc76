"""Golden cases of RELU, RELU6, LEAKY_RELU, HARD_SWISH, LOGISTIC and TANH, declared as data.

Every case feeds all 256 int8 values (shuffled, then repeated to fill the shape), so each one
checks the op's whole lookup table against tflite-micro. Quantization parameters cover zero
points at both extremes, scales over several octaves, and (LEAKY_RELU) negative and >1 alphas.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tinydeploy.model.ir import LeakyReluOptions
from tinydeploy.testing.builder import ModelBuilder

try:
    from golden_ops import Built
except ImportError:  # pragma: no cover - when tests/golden is a package
    from .golden_ops import Built

# output quantization that TFLM's LOGISTIC / TANH kernels assume
FIXED_OUTPUT = {"LOGISTIC": (1.0 / 256.0, -128), "TANH": (1.0 / 128.0, 0)}


@dataclass(frozen=True)
class ActCase:
    op: str
    shape: tuple[int, ...]
    in_scale: float
    in_zp: int
    out_scale: float = 0.05
    out_zp: int = 0
    alpha: float = 0.2
    seed: int = 0

    @property
    def name(self) -> str:
        extra = f" alpha={self.alpha}" if self.op == "LEAKY_RELU" else ""
        return (f"{self.op}{list(self.shape)} in=({self.in_scale:g},{self.in_zp}) "
                f"out=({self.out_scale:g},{self.out_zp}){extra}")

    def build(self) -> Built:
        out_scale, out_zp = FIXED_OUTPUT.get(self.op, (self.out_scale, self.out_zp))
        b = ModelBuilder()
        x = b.tensor("x", self.shape, "int8", scale=self.in_scale, zero_point=self.in_zp)
        y = b.tensor("y", self.shape, "int8", scale=out_scale, zero_point=out_zp)
        opts = LeakyReluOptions(self.alpha) if self.op == "LEAKY_RELU" else None
        b.op(self.op, [x], [y], opts)
        rng = np.random.default_rng(self.seed)
        n = int(np.prod(self.shape))
        vals = np.resize(rng.permutation(np.arange(-128, 128)), n).astype(np.int8)
        return Built(self.name, b.build([x], [y]), (vals.reshape(self.shape),))


_SCALES = (0.0039, 0.02, 0.1, 0.5, 2.0)
_ZPS = (-128, -5, 0, 64, 127)


def default_cases() -> list[ActCase]:
    cases: list[ActCase] = []
    for op in ("LOGISTIC", "TANH"):
        for k, (s, z) in enumerate(zip(_SCALES + (0.047, 0.0625, 8.0),
                                       _ZPS + (-128, 127, 3), strict=True)):
            cases.append(ActCase(op, (1, 16, 16), s, z, seed=k))
    for op in ("RELU", "HARD_SWISH"):
        for k, (s, z, os_, oz) in enumerate([
                (0.02, -128, 0.01, -128), (0.1, 0, 0.05, -128), (0.5, 127, 0.3, 0),
                (0.05, 10, 0.2, 127), (0.03, -60, 0.03, -60), (2.0, -3, 1.0, -128),
                (0.0039, 5, 0.0039, -100), (0.25, 100, 0.6, 20),
                (0.3, 0, 0.2, 0), (0.75, -1, 0.5, 3)]):  # exact ties of the rescale
            cases.append(ActCase(op, (2, 8, 16), s, z, os_, oz, seed=k))
    for k, (s, z) in enumerate([(0.02, -128), (0.1, 0), (0.05, 127), (0.3, -64), (0.01, 50),
                                (0.024, -128)]):
        cases.append(ActCase("RELU6", (4, 64), s, z, seed=k))
    for k, (s, z, os_, oz, a) in enumerate([
            (0.02, -128, 0.02, -128, 0.1), (0.1, 0, 0.05, 10, 0.2), (0.05, 127, 0.1, 127, 0.01),
            (0.1, 30, 0.08, -20, -0.5), (0.3, -10, 0.2, 0, 1.5), (0.04, 5, 0.01, -128, 0.3),
            (0.5, -100, 0.5, 100, -1.2), (0.01, 0, 0.02, 0, 0.0)]):
        cases.append(ActCase("LEAKY_RELU", (1, 256), s, z, os_, oz, a, seed=k))
    return cases


def sweep_cases(n: int = 300, seed: int = 1234) -> list[ActCase]:
    """Random quantization parameters for every op (the --sweep tier)."""
    rng = np.random.default_rng(seed)
    out = []
    for k in range(n):
        op = ("RELU", "RELU6", "LEAKY_RELU", "HARD_SWISH", "LOGISTIC", "TANH")[k % 6]
        s = float(10 ** rng.uniform(-3, 1))
        os_ = float(10 ** rng.uniform(-3, 0.5))
        if op == "HARD_SWISH":
            os_ = max(os_, s / 100)  # TFLM requires input_scale / 128 < output_scale
        out.append(ActCase(op, (256,), s, int(rng.integers(-128, 128)), os_,
                           int(rng.integers(-128, 128)), float(rng.uniform(-2, 2)), seed=k))
    return out
