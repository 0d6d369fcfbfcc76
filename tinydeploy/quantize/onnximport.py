"""ONNX models in: convert an ONNX graph (as ``torch.onnx.export`` writes it) to a TensorFlow
SavedModel with onnx2tf, then quantize that like any SavedModel.

Why onnx2tf: it is maintained, handles the opsets PyTorch exports (13 and later) and, above
all, rewrites the graph from PyTorch's NCHW layout to the NHWC layout TFLite kernels (and so
tinydeploy's) compute in, instead of wrapping every op in TRANSPOSEs. The layout change is
the one thing a user must know: the quantized model's input is NHWC, so the application (and
any data fed to ``validate``) must transpose [N, C, H, W] samples to [N, H, W, C].

Calibration data may be given in either layout; `calibration_layout` decides which from the
sample shape and the ONNX input shape and says so (a square input whose channel count equals
its side is ambiguous and is taken as NCHW, the PyTorch convention).

onnx2tf would download sample images from the internet for a 3-channel 4-D input (to compare
the ONNX and TF outputs); tinydeploy gives it the user's own calibration samples instead, so
the conversion runs offline and on the user's data. The input shape (a dynamic batch fixed to
1) is given to onnx2tf explicitly: left dynamic, its shape inference misplaces the axes of
later reductions.

Invariants: onnx, onnx2tf and TensorFlow are imported lazily, here only; a model with more
than one input, an opset below 13 or a non-static shape other than the batch is refused with
the numbers; every failure is a `TinydeployError`.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from tinydeploy.errors import ModelError, ToolchainError, UnsupportedError
from tinydeploy.quantize.calibration import CalibrationData

ONNX_SUFFIX = ".onnx"
MIN_OPSET = 13
CHILD_IMPORT_FAILED = 3      # the exit status of onnx2tf_child when onnx2tf cannot be imported
EXTRA_HINT = ("pip install 'tinydeploy[onnx]' and then pip install --no-deps onnx2tf==1.29.24 "
              "(scripts/setup.sh does both; onnx2tf pins an older TensorFlow than tinydeploy's)")


@dataclass(frozen=True)
class OnnxInput:
    """The single input of an ONNX model: its name and batch-1 shape in ONNX (NCHW) order."""

    name: str
    shape: tuple[int, ...]
    opset: int

    @property
    def nhwc_shape(self) -> tuple[int, ...]:
        """The shape onnx2tf gives the input (channels moved last for 3-D to 5-D inputs)."""
        if 3 <= len(self.shape) <= 5:
            return (self.shape[0], *self.shape[2:], self.shape[1])
        return self.shape


def _import_onnx() -> Any:
    try:
        import onnx
    except ImportError:
        raise ToolchainError("importing ONNX models needs the 'onnx' package",
                             hint=EXTRA_HINT) from None
    return onnx


def read_onnx_input(path: Path) -> OnnxInput:
    """Load ``path`` with onnx and describe its input; refuse what the converter cannot take."""
    onnx = _import_onnx()
    try:
        model = onnx.load(str(path))
    except Exception as e:  # noqa: BLE001 - onnx raises DecodeError, ValueError, OSError...
        raise ModelError(f"{path}: not a valid ONNX model: {e}".strip()) from None
    opset = max((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")),
                default=0)
    if opset < MIN_OPSET:
        raise UnsupportedError(f"{path}: ONNX opset {opset}; tinydeploy imports opset "
                               f"{MIN_OPSET} or later",
                               hint="re-export with torch.onnx.export(..., opset_version=13) "
                                    "or later")
    inits = {i.name for i in model.graph.initializer}
    inputs = [i for i in model.graph.input if i.name not in inits]
    if len(inputs) != 1:
        raise UnsupportedError(f"{path}: the model has {len(inputs)} inputs; tinydeploy "
                               "quantizes single-input models only")
    dims = []
    for k, d in enumerate(inputs[0].type.tensor_type.shape.dim):
        if d.HasField("dim_value") and d.dim_value > 0:
            dims.append(int(d.dim_value))
        elif k == 0:
            dims.append(1)          # a dynamic batch is fixed to 1, as for Keras models
        else:
            raise UnsupportedError(
                f"{path}: input '{inputs[0].name}' dimension {k} is not static "
                f"('{d.dim_param or '?'}'); tinydeploy plans static shapes",
                hint="export with a fixed input size (dynamic_axes only for the batch)")
    return OnnxInput(inputs[0].name, tuple(dims), int(opset))


def calibration_layout(data: CalibrationData, inp: OnnxInput) -> tuple[CalibrationData, str]:
    """The calibration samples in the converted model's (NHWC) layout, and a sentence saying
    which layout was detected."""
    got = data.sample_shape
    nchw, nhwc = tuple(inp.shape[1:]), tuple(inp.nhwc_shape[1:])
    if nchw == nhwc:
        return data, f"calibration samples {list(got)}: no layout change for this input"
    if got == nchw:
        rank = len(got)
        x = np.ascontiguousarray(np.moveaxis(data.x, 1, rank))
        note = (f"calibration samples {list(got)} detected as NCHW (channels first); "
                f"transposed to NHWC {list(nhwc)}")
        if got == nhwc:   # pragma: no cover - needs C == H == W, then NCHW is assumed
            note += " (the shape fits both layouts: assumed NCHW, PyTorch's)"
        return CalibrationData(data.path, x, data.y), note
    if got == nhwc:
        return data, f"calibration samples {list(got)} detected as NHWC (channels last)"
    raise ModelError(
        f"{data.path}: samples have shape {list(got)}, but ONNX input '{inp.name}' is "
        f"{list(inp.shape)} (NCHW {list(nchw)} or NHWC {list(nhwc)} per sample expected)",
        hint="axis 0 is the sample axis")


def convert_onnx(path: Path, inp: OnnxInput, samples_nhwc: np.ndarray, workdir: Path) -> Path:
    """Convert ``path`` to a SavedModel under ``workdir`` with onnx2tf; returns its folder.

    onnx2tf runs in a child process (`tinydeploy.quantize.onnx2tf_child`): importing it sets
    ``TF_USE_LEGACY_KERAS=1`` in ``os.environ`` and seeds the random generators, which would
    turn the caller's later ``tf.keras`` into the legacy Keras. The child's output is read back
    only through the SavedModel folder and its exit status."""
    _import_onnx()
    if importlib.util.find_spec("onnx2tf") is None:
        raise ToolchainError("importing ONNX models needs onnx2tf", hint=EXTRA_HINT)
    out = workdir / "saved_model"
    sample_file = workdir / "onnx2tf_sample.npy"
    np.save(sample_file, np.asarray(samples_nhwc[: max(1, inp.shape[0])], dtype=np.float32))
    shape = f"{inp.name}:{','.join(str(d) for d in inp.shape)}"
    cmd = [sys.executable, "-m", "tinydeploy.quantize.onnx2tf_child", str(path), str(out),
           str(sample_file), shape]
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
    except subprocess.TimeoutExpired:
        raise UnsupportedError(f"{path}: onnx2tf did not finish within 30 minutes") from None
    log = (r.stdout + r.stderr).strip()
    if r.returncode == CHILD_IMPORT_FAILED:
        raise ToolchainError(f"onnx2tf cannot be imported: {log[-1500:]}", hint=EXTRA_HINT)
    if r.returncode != 0:
        raise UnsupportedError(f"{path}: onnx2tf could not convert the model "
                               f"(exit {r.returncode}): {log[-1500:]}")
    if not (out / "saved_model.pb").exists():
        raise UnsupportedError(f"{path}: onnx2tf wrote no SavedModel: {log[-1500:]}")
    return out
