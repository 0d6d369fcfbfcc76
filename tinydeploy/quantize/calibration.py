"""Representative data for post-training quantization: reading and validating it.

Calibration data is a ``.npy`` array of inputs, or a ``.npz`` archive with key ``x`` (inputs)
and optionally ``y`` (labels: class ids of shape ``(N,)`` or one-hot rows of shape
``(N, classes)``). Invariants of a `CalibrationData`:

* ``x`` is float32, C-contiguous, with at least one sample along axis 0;
* ``y`` is None or an int64 vector of class ids with ``len(y) == len(x)``.

Shapes are checked against the model only later (`check_input_shape`), because the model's
input shape is known only once the model has been loaded.
"""

from __future__ import annotations

import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tinydeploy.errors import InputDataError

_FORMAT_HINT = ("calibration data is a .npy array of inputs, or a .npz with key 'x' (inputs) "
                "and optional 'y' (labels)")


@dataclass(frozen=True, eq=False)
class CalibrationData:
    """Validated representative inputs, and labels when the user gave some."""

    path: str
    x: np.ndarray
    y: np.ndarray | None = None

    @property
    def count(self) -> int:
        return int(self.x.shape[0])

    @property
    def sample_shape(self) -> tuple[int, ...]:
        return tuple(int(d) for d in self.x.shape[1:])


def load_calibration(path: str | Path) -> CalibrationData:
    """Read and validate a calibration file; every problem is an InputDataError naming it."""
    p = Path(path)
    if not p.exists():
        raise InputDataError(f"{p}: no such calibration file", hint=_FORMAT_HINT)
    if p.is_dir():
        raise InputDataError(f"{p}: is a directory, not a .npy/.npz file", hint=_FORMAT_HINT)
    suffix = p.suffix.lower()
    if suffix not in (".npy", ".npz"):
        raise InputDataError(f"{p}: unknown calibration format '{p.suffix or '(none)'}'",
                             hint=_FORMAT_HINT)
    try:
        loaded = np.load(p, allow_pickle=False)
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as e:
        raise InputDataError(f"{p}: not a readable {suffix} file ({e})",
                             hint=_FORMAT_HINT) from None
    y_raw: np.ndarray | None = None
    if isinstance(loaded, np.ndarray):
        if suffix != ".npy":
            raise InputDataError(f"{p}: expected a .npz archive, got a single array",
                                 hint=_FORMAT_HINT)
        x_raw = loaded
    else:
        with loaded:
            keys = sorted(loaded.files)
            if "x" not in keys:
                raise InputDataError(
                    f"{p}: no array 'x' in the archive (it holds: {', '.join(keys) or 'nothing'})",
                    hint=_FORMAT_HINT)
            try:
                x_raw = loaded["x"]
                y_raw = loaded["y"] if "y" in keys else None
            except ValueError as e:   # object arrays need pickle, which we refuse
                raise InputDataError(f"{p}: cannot read arrays ({e})", hint=_FORMAT_HINT) from None
    return make_calibration(x_raw, y_raw, str(p))


def make_calibration(x: np.ndarray, y: np.ndarray | None = None,
                     label: str = "<calibration>") -> CalibrationData:
    """Validate in-memory arrays (the Python API accepts them directly)."""
    x = np.asarray(x)
    if x.dtype.kind != "f":
        raise InputDataError(
            f"{label}: x has dtype {x.dtype}, expected floating point (float32)",
            hint="the model's input is float: pass the same preprocessed values used in "
                 "training, e.g. x.astype(np.float32)")
    if x.ndim < 1 or x.shape[0] == 0:
        raise InputDataError(f"{label}: the calibration set is empty (x has shape {x.shape})",
                             hint="give at least one representative input; 100-500 is typical")
    if not np.all(np.isfinite(x)):
        bad = int(np.count_nonzero(~np.isfinite(x)))
        raise InputDataError(f"{label}: x holds {bad} NaN or infinite values",
                             hint="calibration ranges would be meaningless; clean the data")
    xs = np.ascontiguousarray(x, dtype=np.float32)
    ys: np.ndarray | None = None
    if y is not None:
        ys = _labels(np.asarray(y), xs.shape[0], label)
    return CalibrationData(label, xs, ys)


def _labels(y: np.ndarray, n: int, label: str) -> np.ndarray:
    if y.ndim == 2 and y.shape[1] > 1:
        if y.dtype.kind not in "fiub":
            raise InputDataError(f"{label}: y has dtype {y.dtype}, expected integer class ids "
                                 "or one-hot rows")
        y = np.argmax(y, axis=1)
    elif y.ndim == 2 and y.shape[1] == 1:
        y = y[:, 0]
    if y.ndim != 1:
        raise InputDataError(f"{label}: y has shape {y.shape}, expected ({n},) class ids "
                             f"or ({n}, classes) one-hot rows")
    if y.shape[0] != n:
        raise InputDataError(f"{label}: y has {y.shape[0]} labels but x has {n} samples",
                             hint="x and y must be aligned sample by sample")
    if y.dtype.kind == "f":
        if not np.all(np.isfinite(y)) or not np.all(y == np.round(y)):
            raise InputDataError(f"{label}: y has non-integer values, expected class ids")
    elif y.dtype.kind not in "iub":
        raise InputDataError(f"{label}: y has dtype {y.dtype}, expected integer class ids")
    ys = y.astype(np.int64)
    if ys.size and ys.min() < 0:
        raise InputDataError(f"{label}: y has a negative class id ({int(ys.min())})")
    return ys


def check_input_shape(data: CalibrationData, model_shape: tuple[int, ...],
                      input_name: str) -> None:
    """Check that every sample fits the model's batch-1 input ``model_shape`` (-1 = any)."""
    expected = tuple(model_shape[1:])
    got = data.sample_shape
    ok = len(expected) == len(got) and all(e in (-1, g) for e, g in zip(expected, got, strict=True))
    if not ok:
        want = "(N, " + ", ".join("?" if d == -1 else str(d) for d in expected) + ")"
        raise InputDataError(
            f"{data.path}: x has shape {tuple(data.x.shape)}, but model input '{input_name}' "
            f"expects {want}",
            hint="axis 0 is the sample axis; each sample must have the model's input shape "
                 "without the batch dimension")


def check_labels(data: CalibrationData, classes: int, output_name: str) -> None:
    """Labels must be class ids below the model's number of output classes."""
    if data.y is None:
        return
    top = int(data.y.max())
    if top >= classes:
        raise InputDataError(
            f"{data.path}: y has class id {top}, but model output '{output_name}' has only "
            f"{classes} classes")
