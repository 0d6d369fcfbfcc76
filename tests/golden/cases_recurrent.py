"""Golden cases of SVDF (int8 input/output, int16 or int8 state), declared as data.

Scales are chosen so that outputs mostly stay inside int8 (a case that only saturates checks
little). `SvdfCase.build` makes a one-invocation model; `steps` inputs drive the multi-step
test that checks the state kept between invocations.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tinydeploy.model.ir import SVDFOptions
from tinydeploy.testing.builder import ModelBuilder

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


@dataclass(frozen=True)
class LstmCase:
    """UNIDIRECTIONAL_SEQUENCE_LSTM, int8 activations and weights, int16 cell state."""

    batches: int
    steps: int
    input_size: int
    state_size: int
    time_major: bool = False
    in_q: tuple[float, int] = (0.05, -3)
    hidden_q: tuple[float, int] = (1.0 / 128, 2)
    cell_scale: float = 2.0 ** -11
    cell_clip: float = 0.0
    w_scale: float = 0.02
    data: str = "random"
    seed: int = 0
    dtype: str = "int8"    # "int16": 16x8 (int16 input, hidden state and output with zero
    #                        point 0, int64 bias), TFLM's EvalLstm<int16, int8, int16, int64>
    op = "UNIDIRECTIONAL_SEQUENCE_LSTM"

    @property
    def name(self) -> str:
        return (f"LSTM {self.dtype} b={self.batches} t={self.steps} in={self.input_size} "
                f"state={self.state_size} time_major={self.time_major} in={self.in_q} "
                f"h={self.hidden_q} c={self.cell_scale:g} clip={self.cell_clip} {self.data}")

    def shape(self) -> tuple[int, int, int]:
        if self.time_major:
            return (self.steps, self.batches, self.input_size)
        return (self.batches, self.steps, self.input_size)

    def model(self) -> bytes:
        from tinydeploy.model.ir import Activation, SequenceLSTMOptions

        rng = np.random.default_rng(self.seed)
        s, n = self.state_size, self.input_size
        b = ModelBuilder()
        wide = self.dtype == "int16"
        in_zp, h_zp = (0, 0) if wide else (self.in_q[1], self.hidden_q[1])
        x = b.tensor("x", self.shape(), self.dtype, scale=self.in_q[0], zero_point=in_zp)
        ins = [x] + [-1] * 23
        for g, k in enumerate((1, 2, 3, 4)):
            ins[k] = b.tensor(f"w_in{g}", (s, n), "int8", scale=self.w_scale, zero_point=0,
                              data=rng.integers(-127, 128, (s, n)))
        for g, k in enumerate((5, 6, 7, 8)):
            ins[k] = b.tensor(f"w_rec{g}", (s, s), "int8", scale=self.w_scale, zero_point=0,
                              data=rng.integers(-127, 128, (s, s)))
        for g, k in enumerate((12, 13, 14, 15)):
            ins[k] = b.tensor(f"bias{g}", (s,), "int64" if wide else "int32",
                              scale=self.in_q[0] * self.w_scale, zero_point=0,
                              data=rng.integers(-3000, 3000, s) * (64 if wide else 1))
        ins[18] = b.tensor("hidden", (self.batches, s), self.dtype, scale=self.hidden_q[0],
                           zero_point=h_zp, is_variable=True,
                           data=np.full(self.batches * s, h_zp))
        ins[19] = b.tensor("cell", (self.batches, s), "int16", scale=self.cell_scale,
                           zero_point=0, is_variable=True)
        out_shape = self.shape()[:2] + (s,)
        y = b.tensor("y", out_shape, self.dtype, scale=self.hidden_q[0], zero_point=h_zp)
        b.op("UNIDIRECTIONAL_SEQUENCE_LSTM", ins, [y],
             SequenceLSTMOptions(Activation.TANH, self.cell_clip, 0.0, self.time_major))
        return b.build([x], [y])

    def inputs(self, steps: int) -> list[np.ndarray]:
        rng = np.random.default_rng(2000 + self.seed)
        if self.dtype == "int16":
            return [rng.integers(-32768, 32768, self.shape()).astype(np.int16)
                    for _ in range(steps)]
        return [int8_inputs(self.shape(), self.data, rng, self.in_q[1]) for _ in range(steps)]

    def build(self) -> Built:
        return Built(self.name, self.model(), (self.inputs(1)[0],))


def lstm_cases() -> list[LstmCase]:
    return [
        LstmCase(1, 5, 8, 6),
        LstmCase(2, 4, 5, 7, seed=1),
        LstmCase(3, 3, 4, 5, time_major=True, seed=2),
        LstmCase(1, 8, 10, 16, in_q=(0.1, -128), hidden_q=(1 / 64, -128),
                 cell_scale=2.0 ** -12, w_scale=0.05, seed=3),
        LstmCase(2, 6, 6, 4, hidden_q=(1 / 128, 127), cell_scale=2.0 ** -9, cell_clip=3.0,
                 data="extreme", seed=4),
        LstmCase(1, 4, 6, 8, cell_scale=2.0 ** -15, w_scale=0.04, seed=5),
        LstmCase(2, 3, 3, 3, time_major=True, cell_scale=2.0 ** -10, cell_clip=0.5,
                 w_scale=0.08, seed=6),
    ]


def lstm16_cases() -> list[LstmCase]:
    """16x8 LSTM: int16 input, hidden state and output (zero point 0), int64 bias; batch
    and time-major layouts, cell scales 2^-9..2^-15, a cell clip, odd sizes."""
    s16 = "int16"
    return [
        LstmCase(1, 5, 8, 6, in_q=(1 / 4096, 0), hidden_q=(1 / 32768, 0), dtype=s16, seed=11),
        LstmCase(2, 4, 5, 7, in_q=(0.0003, 0), hidden_q=(1 / 16384, 0), dtype=s16, seed=12),
        LstmCase(3, 3, 4, 5, time_major=True, in_q=(0.001, 0), hidden_q=(0.0002, 0),
                 cell_scale=2.0 ** -12, dtype=s16, seed=13),
        LstmCase(2, 6, 6, 4, in_q=(1 / 2048, 0), hidden_q=(1 / 32768, 0),
                 cell_scale=2.0 ** -9, cell_clip=3.0, w_scale=0.05, dtype=s16, seed=14),
        LstmCase(1, 4, 9, 8, in_q=(0.0005, 0), hidden_q=(1 / 32768, 0),
                 cell_scale=2.0 ** -15, w_scale=0.04, dtype=s16, seed=15),
    ]


def sweep_cases(n: int = 60, seed: int = 31) -> list[SvdfCase | LstmCase]:
    """Random shapes and quantization for both ops (the --sweep tier)."""
    rng = np.random.default_rng(seed)
    out: list[SvdfCase | LstmCase] = []
    for k in range(n):
        in_q = (float(10 ** rng.uniform(-2, -0.5)), int(rng.integers(-128, 128)))
        if k % 2:
            out.append(SvdfCase(int(rng.integers(1, 4)), int(rng.integers(1, 20)),
                                int(rng.integers(1, 10)), int(rng.integers(1, 4)),
                                int(rng.integers(1, 8)), "int16" if k % 3 else "int8",
                                in_q=in_q, state_zp=int(rng.integers(-128, 128)) if k % 3 == 0
                                else 0, out_q=(float(10 ** rng.uniform(-1, 0.5)),
                                               int(rng.integers(-128, 128))), seed=k))
        else:
            out.append(LstmCase(int(rng.integers(1, 4)), int(rng.integers(1, 6)),
                                int(rng.integers(1, 12)), int(rng.integers(1, 12)),
                                bool(k % 4), in_q,
                                (2.0 ** -int(rng.integers(5, 9)), int(rng.integers(-128, 128))),
                                2.0 ** -int(rng.integers(8, 16)),
                                float(rng.choice([0.0, 0.5, 2.0])),
                                float(10 ** rng.uniform(-2, -1)), seed=k))
    return out
