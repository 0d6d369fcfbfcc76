"""Measurements of tflite-micro's own tables through its interpreter, which keep the
constants the kernels copy honest (the golden tests compare them)."""

from __future__ import annotations

import numpy as np

from tinydeploy.kernels.recurrent import GATE_OUT_SCALE
from tinydeploy.oracle import run_oracle
from tinydeploy.testing.builder import ModelBuilder


def probe_sigmoid_table() -> tuple[int, ...]:
    """Measure TFLM's 16-bit sigmoid table through the interpreter's int16 TANH.

    With input scale 1/48 the kernel's rescaled input is exactly 256 * x, which lands on table
    entry x with no interpolation, so the output is entry x - 32768; entry 255 (only reached
    by interpolation) follows from x = 32639 at scale 1/6144 (rescaled input 254 * 256 + 254).
    Needs tflite-micro; used by the tests that keep `SIGMOID_TABLE_Q16` honest.
    """
    def tanh16(scale: float, xs: list[int]) -> list[int]:
        b = ModelBuilder()
        x = b.tensor("x", (len(xs),), "int16", scale=scale, zero_point=0)
        y = b.tensor("y", (len(xs),), "int16", scale=GATE_OUT_SCALE, zero_point=0)
        b.op("TANH", [x], [y])
        out = run_oracle(b.build([x], [y]), [np.array(xs, dtype=np.int16)])[0]
        return [int(v) + 32768 for v in out]

    table = tanh16(1.0 / 48.0, list(range(255)))
    extra = tanh16(1.0 / 6144.0, [32639])[0] - table[254]   # (254 * d + 128) >> 8
    if extra not in (0, 1, 2):
        raise ValueError(f"unexpected sigmoid table slope {extra} at the end")
    return tuple(table + [table[254] + extra])
