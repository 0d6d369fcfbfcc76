"""Golden cases of SVDF (int8 input/output, int16 or int8 state), declared as data.

Scales are chosen so that outputs mostly stay inside int8 (a case that only saturates checks
little). `SvdfCase.build` makes a one-invocation model; `steps` inputs drive the multi-step
test that checks the state kept between invocations.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tinydeploy.model.builder import ModelBuilder
from tinydeploy.model.ir import SVDFOptions

try:
    from golden_ops import Built, int8_inputs
except ImportError:  # pragma: no cover - when tests/golden is a package
    from .golden_ops import Built, int8_inputs


@dataclass(frozen=True)
class SvdfCase:
    batches: int
    input_size: int
    units: int
    rank: int
    memory: int
    state: str = "int16"          # dtype of the state and the time weights
    in_q: tuple[float, int] = (0.05, -4)
    state_zp: int = 0             # int8 state only
    out_q: tuple[float, int] = (0.5, 5)
    data: str = "random"
    seed: int = 0

    @property
    def name(self) -> str:
        return (f"SVDF b={self.batches} in={self.input_size} units={self.units} "
                f"rank={self.rank} mem={self.memory} state={self.state}/{self.state_zp} "
                f"in={self.in_q} out={self.out_q} {self.data}")

    def model(self) -> bytes:
        rng = np.random.default_rng(self.seed)
        nf = self.units * self.rank
        b = ModelBuilder()
        x = b.tensor("x", (self.batches, self.input_size), "int8", scale=self.in_q[0],
                     zero_point=self.in_q[1])
        wf = b.tensor("wf", (nf, self.input_size), "int8", scale=0.01, zero_point=0,
                      data=rng.integers(-127, 128, (nf, self.input_size)))
        n_state = self.batches * self.memory * nf
        if self.state == "int16":
            st_scale, wt_scale = 0.004, 1.0 / 4096
            wt = b.tensor("wt", (nf, self.memory), "int16", scale=wt_scale, zero_point=0,
                          data=rng.integers(-4096, 4097, (nf, self.memory)))
            st = b.tensor("state", (self.batches, self.memory * nf), "int16", scale=st_scale,
                          zero_point=0, is_variable=True)
        else:
            st_scale, wt_scale = 0.25, 1.0 / 64
            wt = b.tensor("wt", (nf, self.memory), "int8", scale=wt_scale, zero_point=0,
                          data=rng.integers(-64, 65, (nf, self.memory)))
            # TFLM resets an int8 variable tensor to its zero point; the initializer says so
            # for runners that do not know that rule
            st = b.tensor("state", (self.batches, self.memory * nf), "int8", scale=st_scale,
                          zero_point=self.state_zp, is_variable=True,
                          data=np.full(n_state, self.state_zp) if self.state_zp else None)
        bias = b.tensor("bias", (self.units,), "int32", scale=st_scale * wt_scale,
                        zero_point=0, data=rng.integers(-20000, 20000, self.units))
        y = b.tensor("y", (self.batches, self.units), "int8", scale=self.out_q[0],
                     zero_point=self.out_q[1])
        b.op("SVDF", [x, wf, wt, bias, st], [y], SVDFOptions(self.rank))
        return b.build([x], [y])

    def inputs(self, steps: int) -> list[np.ndarray]:
        rng = np.random.default_rng(1000 + self.seed)
        return [int8_inputs((self.batches, self.input_size), self.data, rng, self.in_q[1])
                for _ in range(steps)]

    def build(self) -> Built:
        return Built(self.name, self.model(), (self.inputs(1)[0],))


def default_cases() -> list[SvdfCase]:
    return [
        SvdfCase(1, 16, 8, 2, 5),
        SvdfCase(2, 10, 4, 1, 3, seed=1),
        SvdfCase(1, 40, 16, 1, 10, in_q=(0.1, -128), out_q=(1.0, -128), seed=2),
        SvdfCase(3, 8, 5, 3, 4, in_q=(0.02, 127), out_q=(0.2, 127), data="extreme", seed=3),
        SvdfCase(1, 16, 8, 2, 5, "int8", seed=4),
        SvdfCase(2, 7, 3, 3, 4, "int8", state_zp=9, seed=5),
        SvdfCase(1, 12, 6, 1, 8, "int8", in_q=(0.03, 100), state_zp=-128,
                 out_q=(0.4, -20), seed=6),
    ]
