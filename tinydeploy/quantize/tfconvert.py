"""Everything that touches TensorFlow: loading float models and converting them to TFLite.

TensorFlow is imported lazily (inside functions) and only in this package, so that the rest
of tinydeploy, and `tinydeploy --help`, stay fast and work without it.

Why the batch dimension is fixed to 1: a model traced with a dynamic batch computes shapes at
run time (Keras 3's Flatten becomes SHAPE / STRIDED_SLICE / PACK / RESHAPE), and tinydeploy
plans every buffer statically. Keras models and SavedModel signatures are therefore re-traced
as a `tf.function` with a batch-1 input signature, and their variables frozen into constants,
before the converter sees them. A float `.tflite` cannot be re-traced; it is calibrated and
quantized directly with the TFLite calibrator and MLIR quantizer (the same two steps the
converter itself runs after producing a float flatbuffer), and any shape ops it already holds
are reported by the op check.

Invariants of the converted models: one input, int8 input and output, builtin int8 ops only,
per-channel weight quantization (the converter's default, which is not disabled).
"""

from __future__ import annotations

import contextlib
import enum
import os
import sys
import tempfile
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from tinydeploy.errors import ModelError, TinydeployError, UnsupportedError
from tinydeploy.quantize.calibration import CalibrationData, check_input_shape

#: Called with the number of calibration samples fed so far (progress display).
ProgressFn = Callable[[int], None]


class SourceKind(enum.Enum):
    """What the user gave as the model to quantize."""

    KERAS = "keras"
    SAVED_MODEL = "saved_model"
    FLOAT_TFLITE = "float_tflite"
    INT8_TFLITE = "int8_tflite"
    ONNX = "onnx"


@dataclass(frozen=True)
class FloatModel:
    """A float model re-traced with a batch-1 input, ready for the converter.

    ``concrete`` is a frozen `ConcreteFunction` (no variables); ``input_shape`` is the fixed
    batch-1 input shape; ``float_tflite`` is its float flatbuffer, the reference for the
    float accuracy and the per-layer SQNR.
    """

    source: str
    kind: SourceKind
    concrete: Any
    input_name: str
    input_shape: tuple[int, ...]
    float_tflite: bytes


def import_tf() -> Any:
    """Import TensorFlow with its start-up chatter reduced to errors."""
    from tinydeploy.tfenv import quiet_tensorflow

    quiet_tensorflow()
    try:
        import tensorflow as tf
    except ImportError as e:
        raise TinydeployError(
            f"TensorFlow is not installed ({e}); it is needed to quantize float models",
            hint="pip install 'tinydeploy[quantize]'") from None
    tf.get_logger().setLevel("ERROR")
    try:
        import absl.logging

        absl.logging.set_verbosity(absl.logging.ERROR)
    except ImportError:
        pass
    return tf


@contextlib.contextmanager
def native_output_captured() -> Iterator[Path]:
    """Send what TensorFlow's C++ code prints on file descriptors 1 and 2 to a log file.

    The converter prints progress lines from C++ that would corrupt ``--json`` output on
    stdout and clutter the terminal. Python-level progress must therefore be drawn on a
    console opened on `saved_stderr()` (a duplicate of the real stderr). Yields the log path;
    the log is deleted on exit.
    """
    fd, name = tempfile.mkstemp(prefix="tinydeploy-tf-", suffix=".log")
    _flush_python_streams()
    saved = [os.dup(1), os.dup(2)]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for target in (1, 2):
                os.dup2(fd, target)
            _SAVED_STDERR[:] = [saved[1]]
            try:
                yield Path(name)
            finally:
                _flush_python_streams()   # what Python printed meanwhile goes to the log too
                for target, s in zip((1, 2), saved, strict=True):
                    os.dup2(s, target)
                _SAVED_STDERR[:] = []
    finally:
        for s in saved:
            os.close(s)
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(name)


_SAVED_STDERR: list[int] = []


def _flush_python_streams() -> None:
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()


def saved_stderr() -> int:
    """The file descriptor of the real stderr (inside `native_output_captured` or not)."""
    return _SAVED_STDERR[0] if _SAVED_STDERR else 2


def first_error_line(err: BaseException) -> str:
    """The informative line of a TensorFlow exception (its first 'error:' line, else its first
    line, else its type), at most 300 characters."""
    text = str(err).strip()
    for line in text.splitlines():
        s = line.strip()
        if "error:" in s.lower():
            return s[:300]
    return (text.splitlines()[0] if text else type(err).__name__)[:300]


# --- loading float models -------------------------------------------------------------------


def load_float_model(source: Path, kind: SourceKind, data: CalibrationData) -> FloatModel:
    """Load a Keras file or SavedModel and re-trace it with a batch-1 input.

    The calibration samples must have the model's input shape; their shape fills the
    non-batch dimensions the model leaves unknown.
    """
    tf = import_tf()
    if kind is SourceKind.KERAS:
        fn, name, shape, dtype = _keras_callable(tf, source)
    elif kind is SourceKind.SAVED_MODEL:
        fn, name, shape, dtype = _saved_model_callable(tf, source)
    else:  # pragma: no cover - callers dispatch tflite sources elsewhere
        raise ValueError(kind)
    if dtype not in (tf.float32, tf.float16, tf.float64):
        raise UnsupportedError(
            f"{source}: input '{name}' has dtype {dtype.name}; only float inputs can be "
            "quantized", hint="feed float features (e.g. MFCCs) to the model")
    check_input_shape(data, tuple(-1 if d is None else d for d in shape), name)
    fixed = fix_batch_shape(shape, data.sample_shape)
    assert fixed is not None   # guaranteed by the shape check
    from tensorflow.python.framework.convert_to_constants import (
        convert_variables_to_constants_v2,
    )

    spec = tf.TensorSpec(fixed, tf.float32, name="input")
    try:
        traced = tf.function(lambda x: fn(tf.cast(x, dtype)))
        concrete = traced.get_concrete_function(spec)
        frozen = convert_variables_to_constants_v2(concrete)
    except Exception as e:  # noqa: BLE001 - anything TF raises here is the model's problem
        raise ModelError(f"{source}: cannot trace the model with a batch-1 input of shape "
                         f"{fixed}: {first_error_line(e)}") from None
    float_bytes = _convert(tf, source, frozen, None, None)
    return FloatModel(str(source), kind, frozen, name, fixed, float_bytes)


def fix_batch_shape(shape: tuple[int | None, ...],
                    sample_shape: tuple[int, ...]) -> tuple[int, ...] | None:
    """``shape`` with batch 1 and unknown dims taken from ``sample_shape``; None on mismatch."""
    if len(shape) != len(sample_shape) + 1:
        return None
    out = [1]
    for d, s in zip(shape[1:], sample_shape, strict=True):
        if d is not None and d != s:
            return None
        out.append(int(s))
    return tuple(out)


def _keras_callable(tf: Any, source: Path) -> tuple[Callable[[Any], Any], str, tuple, Any]:
    import keras

    try:
        model = keras.models.load_model(source, compile=False)
    except Exception as e:  # noqa: BLE001 - corrupt/foreign files raise anything
        raise ModelError(f"{source}: not a loadable Keras model: {first_error_line(e)}",
                         hint="save it with model.save('model.keras')") from None
    inputs = getattr(model, "inputs", None) or []
    if len(inputs) != 1:
        raise UnsupportedError(f"{source}: the model has {len(inputs)} inputs; tinydeploy "
                               "quantizes single-input models only")
    kt = inputs[0]
    shape = tuple(None if d is None else int(d) for d in kt.shape)
    dtype = tf.as_dtype(kt.dtype)
    name = getattr(kt, "name", None) or "input"

    def call(x: Any) -> Any:
        return model(x, training=False)

    return call, name, shape, dtype


def _saved_model_callable(tf: Any, source: Path) -> tuple[Callable[[Any], Any], str, tuple, Any]:
    try:
        loaded = tf.saved_model.load(str(source))
    except Exception as e:  # noqa: BLE001
        raise ModelError(f"{source}: not a loadable SavedModel: {first_error_line(e)}") from None
    sigs = getattr(loaded, "signatures", {})
    if "serving_default" not in sigs:
        keys = ", ".join(sorted(sigs)) or "none"
        raise ModelError(f"{source}: the SavedModel has no 'serving_default' signature "
                         f"(signatures: {keys})",
                         hint="export it with model.export(dir) or tf.saved_model.save(..., "
                              "signatures=...)")
    sig = sigs["serving_default"]
    args, kwargs = sig.structured_input_signature
    specs = list(args) + [kwargs[k] for k in sorted(kwargs)]
    if len(specs) != 1:
        raise UnsupportedError(f"{source}: the serving signature has {len(specs)} inputs; "
                               "tinydeploy quantizes single-input models only")
    key = sorted(kwargs)[0] if kwargs else None
    spec = specs[0]
    shape = tuple(None if d is None else int(d) for d in spec.shape.as_list())
    out_keys = sorted(sig.structured_outputs)

    def call(x: Any) -> Any:
        # `loaded` owns the variables `sig` reads: the closure keeps it alive while tracing.
        res = loaded.signatures["serving_default"](**{key: x}) if key is not None else sig(x)
        if isinstance(res, dict):
            vals = [res[k] for k in out_keys]
            return vals[0] if len(vals) == 1 else vals
        return res

    return call, key or spec.name or "input", shape, spec.dtype


# --- conversion -----------------------------------------------------------------------------


ACTIVATIONS = ("int8", "int16")


def _convert(tf: Any, source: Path, frozen: Any, representative: Any,
             progress: ProgressFn | None, activations: str = "int8") -> bytes:
    """``activations`` "int16" is TF's 16x8 mode (int16 activations, int8 weights, int64
    bias; int16 input and output)."""
    converter = tf.lite.TFLiteConverter.from_concrete_functions([frozen])
    if representative is not None:
        converter.optimizations = [tf.lite.Optimize.DEFAULT]
        converter.representative_dataset = representative
        if activations == "int16":
            converter.target_spec.supported_ops = [
                tf.lite.OpsSet.EXPERIMENTAL_TFLITE_BUILTINS_ACTIVATIONS_INT16_WEIGHTS_INT8]
            converter.inference_input_type = tf.int16
            converter.inference_output_type = tf.int16
        else:
            converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
            converter.inference_input_type = tf.int8
            converter.inference_output_type = tf.int8
    try:
        return bytes(converter.convert())
    except Exception as e:  # noqa: BLE001 - ConverterError and friends
        what = "quantize" if representative is not None else "convert"
        raise UnsupportedError(
            f"{source}: the TFLite converter could not {what} the model: "
            f"{first_error_line(e)}",
            hint="the model uses an op that has no int8 builtin kernel; replace that layer "
                 "(the op check lists what tinydeploy supports)") from None


def _representative(x: np.ndarray, progress: ProgressFn | None) -> Callable[[], Iterator[Any]]:
    def gen() -> Iterator[list[np.ndarray]]:
        for i in range(x.shape[0]):
            yield [x[i:i + 1]]
            if progress is not None:
                progress(i + 1)

    return gen


def quantize_float_model(model: FloatModel, x: np.ndarray,
                         progress: ProgressFn | None = None, activations: str = "int8") -> bytes:
    """Full-integer conversion of a re-traced Keras/SavedModel model with the TF converter
    (int8, or 16x8 with ``activations`` "int16")."""
    tf = import_tf()
    return _convert(tf, Path(model.source), model.concrete, _representative(x, progress),
                    progress, activations)


def quantize_float_tflite(source: Path, float_bytes: bytes, x: np.ndarray,
                          progress: ProgressFn | None = None) -> bytes:
    """Full-int8 quantization of a float flatbuffer: calibrate, then MLIR-quantize.

    The public converter API accepts only TensorFlow models; these are the two internal steps
    it runs on its own float flatbuffer, reached through `tensorflow.lite.python` modules.
    If a TensorFlow release moves them, the error says so and names the way out.
    """
    tf = import_tf()
    try:
        from tensorflow.lite.python import convert as tfl_convert
        from tensorflow.lite.python.optimize import calibrator
    except ImportError as e:
        raise UnsupportedError(
            f"{source}: this TensorFlow ({tf.__version__}) has no TFLite calibrator module "
            f"({e}), so a float .tflite cannot be quantized",
            hint="quantize from the Keras model or SavedModel instead") from None
    try:
        with_intermediates = calibrator.add_intermediate_tensors(float_bytes)
        cal = calibrator.Calibrator(with_intermediates)
        calibrated = cal.calibrate(_representative(x, progress))
    except Exception as e:  # noqa: BLE001
        raise ModelError(f"{source}: calibration failed: {first_error_line(e)}") from None
    try:
        return bytes(tfl_convert.mlir_quantize(
            calibrated, disable_per_channel=False, fully_quantize=True,
            input_data_type=tf.int8, output_data_type=tf.int8))
    except Exception as e:  # noqa: BLE001
        raise UnsupportedError(
            f"{source}: the TFLite quantizer could not quantize the model: "
            f"{first_error_line(e)}",
            hint="the model uses an op that has no int8 kernel; replace that layer") from None
