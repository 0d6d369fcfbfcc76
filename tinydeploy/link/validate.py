"""validate: the firmware computes exactly what TFLM's reference kernels compute.

Inputs go to the device over the serial protocol, outputs come back, and every byte is
compared with the `tflite-micro` interpreter's output for the same model and inputs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from tinydeploy.errors import InputDataError
from tinydeploy.model.ir import Graph, Tensor


@dataclass(frozen=True)
class Mismatch:
    case: int
    output: int
    index: int             # flat element index
    position: tuple[int, ...]
    actual: int | float
    expected: int | float


@dataclass(frozen=True)
class ValidationReport:
    cases: int
    bit_exact_cases: int
    max_abs_diff: float
    first_mismatch: Mismatch | None
    mismatched_elements: int
    per_op: tuple[int, ...]            # counts of the last case
    unit: str
    stack_peak: int | None = None      # device stack high-water mark after the last case

    def to_json(self) -> dict[str, Any]:
        m = self.first_mismatch
        return {
            "cases": self.cases,
            "bit_exact_cases": self.bit_exact_cases,
            "max_abs_diff": self.max_abs_diff,
            "mismatched_elements": self.mismatched_elements,
            "first_mismatch": None if m is None else {
                "case": m.case, "output": m.output, "index": m.index,
                "position": list(m.position), "actual": m.actual, "expected": m.expected},
            "unit": self.unit,
            "stack_peak_bytes": self.stack_peak,
        }


def _quantize(x: np.ndarray, t: Tensor) -> np.ndarray:
    if t.quant is None:
        raise InputDataError(f"input '{t.name}' is {t.dtype.name} without quantization: "
                             "give it as integers")
    info = np.iinfo(t.dtype.numpy)
    q = x.astype(np.float64) / t.quant.scale[0]
    q = np.where(q >= 0, np.floor(q + 0.5), np.ceil(q - 0.5)) + t.quant.zero_point[0]
    return np.clip(q, info.min, info.max).astype(t.dtype.numpy)


def load_inputs(path: Path, graph: Graph) -> list[list[np.ndarray]]:
    """Cases from a .npz/.npy file: one array per model input (by name, else in order), each
    either one example (the input's shape) or a batch (N, *shape). Float data is quantized
    with the input's scale and zero point."""
    try:
        data = np.load(path, allow_pickle=False)
    except FileNotFoundError:
        raise InputDataError(f"{path}: no such file") from None
    except (OSError, ValueError) as e:
        raise InputDataError(f"{path}: not a .npz/.npy file: {e}") from None
    arrays: list[np.ndarray]
    if isinstance(data, np.ndarray):
        arrays = [data]
    else:
        keys = list(data.keys())
        names = [t.name for t in graph.inputs]
        arrays = ([data[n] for n in names] if all(n in keys for n in names)
                  else [data[k] for k in keys[:len(names)]])
    if len(arrays) != len(graph.inputs):
        raise InputDataError(f"{path}: {len(arrays)} arrays for a model with "
                             f"{len(graph.inputs)} inputs")
    per_input = []
    for t, a in zip(graph.inputs, arrays, strict=True):
        shape = tuple(t.shape)
        if a.shape == shape:
            a = a[None]
        elif a.shape[1:] == shape:
            pass
        elif a.shape[1:] == shape[1:] and shape[0] == 1:
            a = a[:, None]
        else:
            raise InputDataError(f"{path}: input '{t.name}' expects shape {list(shape)} "
                                 f"(or N x {list(shape)}), got {list(a.shape)}")
        if np.issubdtype(a.dtype, np.floating):
            a = _quantize(a, t)
        elif a.dtype != t.dtype.numpy:
            info = np.iinfo(t.dtype.numpy)
            if a.min(initial=0) < info.min or a.max(initial=0) > info.max:
                raise InputDataError(f"{path}: input '{t.name}' is {t.dtype.name.lower()}, "
                                     f"values {a.min()}..{a.max()} do not fit")
            a = a.astype(t.dtype.numpy)
        per_input.append(a.reshape((a.shape[0], *shape)))
    n = {len(a) for a in per_input}
    if len(n) != 1 or 0 in n:
        raise InputDataError(f"{path}: inputs have different or zero case counts {sorted(n)}")
    return [[a[i] for a in per_input] for i in range(n.pop())]


def random_inputs(graph: Graph, n: int, seed: int = 0) -> list[list[np.ndarray]]:
    """``n`` cases: all-minimum and all-maximum first (extremes), then uniform random.
    Float inputs (a model that quantizes on the device) are standard normal."""
    rng = np.random.default_rng(seed)
    cases = []
    for k in range(n):
        case = []
        for t in graph.inputs:
            if not np.issubdtype(t.dtype.numpy, np.integer):
                case.append(rng.standard_normal(t.shape).astype(t.dtype.numpy))
                continue
            info = np.iinfo(t.dtype.numpy)
            if k == 0:
                a = np.full(t.shape, info.min, t.dtype.numpy)
            elif k == 1:
                a = np.full(t.shape, info.max, t.dtype.numpy)
            else:
                a = rng.integers(info.min, info.max, t.shape, endpoint=True,
                                 dtype=t.dtype.numpy)
            case.append(a)
        cases.append(case)
    return cases


def validate_cases(run_device: Callable[[list[np.ndarray]], tuple[list[np.ndarray], Any]],
                   model_bytes: bytes, cases: Sequence[list[np.ndarray]],
                   progress: Callable[[int], None] | None = None) -> ValidationReport:
    from tinydeploy.oracle import Oracle

    # One interpreter for all cases: the device keeps its state tensors across cases too.
    oracle = Oracle(model_bytes)
    exact = 0
    max_diff = 0.0
    first: Mismatch | None = None
    bad = 0
    per_op: tuple[int, ...] = ()
    unit = ""
    peak: int | None = None
    for k, case in enumerate(cases):
        got, res = run_device(case)
        per_op, unit = tuple(res.per_op), res.unit
        peak = getattr(getattr(res, "done", None), "stack_peak", None) or None
        want = oracle.run(case)
        ok = len(got) == len(want)
        if not ok and first is None:
            first = Mismatch(k, len(got), -1, (), float("nan"), float("nan"))
        for o, (g, w) in enumerate(zip(got, want, strict=False)):
            g = np.asarray(g).reshape(-1)
            w = np.asarray(w).reshape(-1)
            if g.shape != w.shape or g.dtype != w.dtype:
                ok = False
                bad += max(g.size, w.size)
                if first is None:
                    first = Mismatch(k, o, -1, (), float("nan"), float("nan"))
                continue
            diff = np.abs(g.astype(np.float64) - w.astype(np.float64))
            wrong = np.flatnonzero(diff != 0)
            if wrong.size:
                ok = False
                bad += int(wrong.size)
                max_diff = max(max_diff, float(diff.max()))
                if first is None:
                    i = int(wrong[0])
                    shape = np.asarray(want[o]).shape
                    pos = tuple(int(p) for p in np.unravel_index(i, shape))
                    first = Mismatch(k, o, i, pos, g[i].item(), w[i].item())
        exact += ok
        if progress:
            progress(k + 1)
    return ValidationReport(len(cases), exact, max_diff, first, bad, per_op, unit, peak)


@dataclass(frozen=True)
class StreamReport:
    """A streamed model against the full window: per step after warm-up, the device's
    output and the oracle's on the window of the last ``window`` frames."""

    steps: int                      # steps compared (after warm-up)
    warmup_steps: int               # steps run before the first comparison
    mismatches: int                 # compared steps whose output differs
    first_mismatch: int | None      # index of the first such step (0 = first compared)
    per_op: tuple[int, ...]         # counts of the last step
    unit: str

    def to_json(self) -> dict[str, Any]:
        return {"steps": self.steps, "warmup_steps": self.warmup_steps,
                "mismatches": self.mismatches, "first_mismatch": self.first_mismatch,
                "per_step": sum(self.per_op), "unit": self.unit}


def random_frames(graph: Graph, n: int, seed: int = 0) -> np.ndarray:
    """``n`` uniformly random int8 frames of the input's row shape."""
    t = graph.inputs[0]
    info = np.iinfo(t.dtype.numpy)
    rng = np.random.default_rng(seed)
    return rng.integers(info.min, info.max, (n, *t.shape[2:]), endpoint=True,
                        dtype=t.dtype.numpy)


def validate_stream(run_step: Callable[[np.ndarray], tuple[list[np.ndarray], Any]],
                    model_bytes: bytes, frames: np.ndarray, hop: int, window: int,
                    steps: int, progress: Callable[[int], None] | None = None
                    ) -> StreamReport:
    """Run warm-up plus ``steps`` steps: each sends the next ``hop`` frames; from the step
    whose window is all written frames on, the output must equal the oracle's on the
    window (the last ``window`` frames) byte for byte. ``frames`` must hold
    ``(warmup + steps) * hop`` frames."""
    from tinydeploy.oracle import Oracle

    warmup = -(-window // hop)
    total = warmup - 1 + steps
    if len(frames) < total * hop:
        raise InputDataError(f"{len(frames)} frames for {total} steps of {hop}")
    oracle = Oracle(model_bytes)
    bad, first = 0, None
    per_op: tuple[int, ...] = ()
    unit = ""
    for k in range(total):
        got, res = run_step(frames[k * hop:(k + 1) * hop][None])
        per_op, unit = tuple(res.per_op), res.unit
        if k < warmup - 1:
            continue
        end = (k + 1) * hop
        want = oracle.run([frames[end - window:end][None]])
        same = all(np.array_equal(np.asarray(g).reshape(-1), np.asarray(w).reshape(-1))
                   for g, w in zip(got, want, strict=True))
        if not same:
            bad += 1
            if first is None:
                first = k - (warmup - 1)
        if progress:
            progress(k - warmup + 2)
    return StreamReport(steps, warmup - 1, bad, first, per_op, unit)
