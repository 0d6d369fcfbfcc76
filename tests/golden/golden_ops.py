"""Shared machinery of the golden tests of the elementwise, shape and activation ops.

A case file declares cases as data; each case builds one single-op `.tflite` model with the
flatbuffer builder plus its input arrays (`Built`). `check` runs every model through the
tflite-micro interpreter (the oracle) and all of them through the sanitized host harness in
one C program, and compares the outputs byte for byte. A failure names the case, the output,
and the first mismatching positions with the actual and expected values.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from tinydeploy.kernels.registry import select_kernels
from tinydeploy.model.loader import load_tflite
from tinydeploy.oracle import run_oracle
from tinydeploy.testing.harness import HostCase, run_host
from tinydeploy.toolchain import Core, core_flags

MAX_REPORTED = 8


@dataclass(frozen=True)
class Built:
    """One ready case: a name, the model bytes and one input array per graph input."""

    name: str
    model: bytes
    inputs: tuple[np.ndarray, ...]


def int8_inputs(shape: Sequence[int], kind: str, rng: np.random.Generator,
                zero_point: int = 0) -> np.ndarray:
    """int8 test data: "random" (uniform), "extreme" (only -128, 127 and the zero point's
    neighbours) or "all" (every int8 value, repeated to fill the shape)."""
    n = int(np.prod(shape)) if len(shape) else 1
    if kind == "random":
        v = rng.integers(-128, 128, size=n)
    elif kind == "extreme":
        pool = np.array([-128, -127, 126, 127, zero_point, max(-128, zero_point - 1),
                         min(127, zero_point + 1)])
        v = rng.choice(pool, size=n)
    elif kind == "all":
        v = np.resize(np.arange(-128, 128), n)
    else:
        raise ValueError(kind)
    return v.astype(np.int8).reshape(tuple(shape))


def _positions(diff: np.ndarray, shape: tuple[int, ...]) -> list[tuple[int, ...]]:
    flat = np.flatnonzero(diff)[:MAX_REPORTED]
    return [tuple(int(i) for i in np.unravel_index(f, shape)) if shape else () for f in flat]


def compare(name: str, expected: Sequence[np.ndarray], actual: Sequence[np.ndarray]
            ) -> list[str]:
    """Mismatch descriptions (empty when every output is byte-identical)."""
    problems = []
    for k, (e, a) in enumerate(zip(expected, actual, strict=True)):
        if e.shape != a.shape or e.dtype != a.dtype:
            problems.append(f"{name}: output {k} is {a.dtype}{list(a.shape)}, expected "
                            f"{e.dtype}{list(e.shape)}")
            continue
        eb = np.ascontiguousarray(e).view(np.uint8).reshape(-1, e.dtype.itemsize)
        ab = np.ascontiguousarray(a).view(np.uint8).reshape(-1, a.dtype.itemsize)
        diff = np.any(eb != ab, axis=1).reshape(e.shape)
        if diff.any():
            lines = [f"{name}: output {k}: {int(diff.sum())} of {diff.size} elements differ"]
            for pos in _positions(diff, e.shape):
                lines.append(f"    at {list(pos)}: actual {a[pos]!r}, expected {e[pos]!r}")
            problems.append("\n".join(lines))
    return problems


def check(built: Sequence[Built], kernel: Callable[[str], bool] | None = None) -> None:
    """Oracle vs host kernels for every case; one assertion listing all failures. With
    ``kernel``, each case is one op whose selected kernel symbol it must accept."""
    graphs = [load_tflite(b.model) for b in built]
    if kernel is not None:
        for b, g in zip(built, graphs, strict=True):
            (choice,) = select_kernels(g).choices
            assert kernel(choice.variant.symbol), (b.name, choice.variant.symbol)
    expected = [run_oracle(b.model, b.inputs) for b in built]
    actual = run_host([HostCase(g, b.inputs) for g, b in zip(graphs, built, strict=True)])
    problems: list[str] = []
    for b, e, a in zip(built, expected, actual, strict=True):
        problems += compare(b.name, e, a)
    assert not problems, f"{len(problems)} of {len(built)} cases differ from tflite-micro:\n" \
        + "\n".join(problems)


# the cores whose flags differ most: no FPU and no DSP, FPU + DSP, MVE
ARM_TARGETS = tuple((c.value, core_flags(c))
                    for c in (Core.CORTEX_M0, Core.CORTEX_M4F, Core.CORTEX_M55))


def arm_compile_errors(sources: Sequence[str]) -> list[str]:
    """Compile each kernel source (relative to firmware/) for every ARM_TARGETS core with
    warnings as errors; returns the failures. The toolchain must be installed (CI has it)."""
    import shutil
    import subprocess
    import tempfile

    from tinydeploy.testing.harness import FIRMWARE_DIR, KERNEL_INCLUDE

    cc = shutil.which("arm-none-eabi-gcc")
    assert cc, "arm-none-eabi-gcc is required for this test (apt-get install gcc-arm-none-eabi)"
    errors = []
    with tempfile.TemporaryDirectory() as d:
        for src in sorted(set(sources)):
            for core, flags in ARM_TARGETS:
                proc = subprocess.run(
                    [cc, "-std=c99", "-O2", "-Wall", "-Wextra", "-Werror", "-Wpedantic",
                     *flags, "-I", str(KERNEL_INCLUDE), "-c", str(FIRMWARE_DIR / src),
                     "-o", f"{d}/k.o"], capture_output=True, text=True)
                if proc.returncode:
                    errors.append(f"{src} for {core}:\n{proc.stderr[-2000:]}")
    return errors
