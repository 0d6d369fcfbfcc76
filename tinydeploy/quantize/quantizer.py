"""`quantize_model`: float model + representative data -> a full-INT8 `.tflite` tinydeploy can
compile, with the cost of quantization measured.

Order of work, chosen so that nothing is written unless everything succeeded:

1. check the output path (parent exists; no existing file unless ``force``) — cheap, first;
2. identify the source (Keras file, SavedModel directory, float or INT8 `.tflite`);
3. read and validate the calibration data against the model's input;
4. convert (batch fixed to 1, int8 I/O, builtin int8 ops, per-channel weights);
5. check the int8 I/O and every op against the kernel table (`opcheck`);
6. measure: float vs INT8 accuracy when labels exist (INT8 on tflite-micro), per-layer SQNR;
7. write the file atomically (temporary file in the same directory, then rename).

An INT8 `.tflite` source skips 3, 4 and 6: it is checked and copied.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from tinydeploy.errors import InputDataError, ModelError, TinydeployError, UnsupportedError
from tinydeploy.model.ir import DType, Graph
from tinydeploy.quantize import evaluate, opcheck
from tinydeploy.quantize.calibration import (
    CalibrationData,
    check_input_shape,
    check_labels,
    load_calibration,
    make_calibration,
)
from tinydeploy.quantize.report import ClassAccuracy, QuantizeReport, TensorInfo
from tinydeploy.quantize.tfconvert import SourceKind

KERAS_SUFFIXES = (".keras", ".h5", ".hdf5")
DEFAULT_CALIBRATION_SAMPLES = 500
DEFAULT_SQNR_SAMPLES = 32
_SOURCE_HINT = ("give a Keras .keras/.h5 file, a SavedModel directory, a float .tflite or an "
                ".onnx model")

CalibrationLike = CalibrationData | str | Path | np.ndarray | tuple[np.ndarray, np.ndarray]


def check_output_path(out_path: str | Path, force: bool, source: str | Path | None = None) -> Path:
    """Refuse an output that cannot or should not be written, before any work is done."""
    out = Path(out_path)
    if out.exists() and out.is_dir():
        raise TinydeployError(f"{out}: is a directory; give a file name such as "
                              f"{out / 'model_int8.tflite'}")
    parent = out.parent if str(out.parent) else Path(".")
    if not parent.is_dir():
        raise TinydeployError(f"{out}: the directory '{parent}' does not exist",
                              hint=f"create it first (mkdir -p {parent})")
    if source is not None and out.exists() and out.resolve() == Path(source).resolve():
        raise TinydeployError(f"{out}: is the source model itself; refusing to overwrite it",
                              hint="choose another output file")
    if out.exists() and not force:
        raise TinydeployError(f"{out}: already exists", hint="pass --force to overwrite it")
    return out


def identify_source(source: str | Path) -> tuple[SourceKind, Graph | None]:
    """What kind of model ``source`` is; for a `.tflite`, also its loaded graph."""
    p = Path(source)
    if not p.exists():
        raise ModelError(f"{p}: no such file or directory", hint=_SOURCE_HINT)
    if p.is_dir():
        if (p / "saved_model.pb").exists() or (p / "saved_model.pbtxt").exists():
            return SourceKind.SAVED_MODEL, None
        raise ModelError(f"{p}: a directory without saved_model.pb is not a SavedModel",
                         hint=_SOURCE_HINT)
    suffix = p.suffix.lower()
    if suffix in KERAS_SUFFIXES:
        return SourceKind.KERAS, None
    if suffix == ".onnx":
        return SourceKind.ONNX, None
    if suffix == ".tflite":
        from tinydeploy.model.loader import load_tflite

        graph = load_tflite(p)
        return (SourceKind.INT8_TFLITE if _is_quantized(graph) else SourceKind.FLOAT_TFLITE,
                graph)
    raise ModelError(f"{p}: unknown model format '{p.suffix or '(no extension)'}'",
                     hint=_SOURCE_HINT)


def _is_quantized(graph: Graph) -> bool:
    """True when the model already holds integer-quantized tensors (even if only partly)."""
    for t in graph.tensors:
        if t.dtype in (DType.INT8, DType.INT16, DType.UINT8) and t.quant is not None:
            return True
    return False


def _as_calibration(calibration: CalibrationLike) -> CalibrationData:
    if isinstance(calibration, CalibrationData):
        return calibration
    if isinstance(calibration, (str, Path)):
        return load_calibration(calibration)
    if isinstance(calibration, tuple):
        x, y = calibration
        return make_calibration(np.asarray(x), np.asarray(y))
    return make_calibration(np.asarray(calibration))


class _Progress:
    """Rich progress bars on the real stderr, or nothing when disabled.

    The bars start with the first task, so an early error leaves no empty progress display.
    """

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self._progress: Any = None
        self._stack: contextlib.ExitStack | None = None

    @contextlib.contextmanager
    def active(self) -> Iterator[_Progress]:
        with contextlib.ExitStack() as stack:
            self._stack = stack
            try:
                yield self
            finally:
                self._stack = None
                self._progress = None

    def _start(self) -> Any:
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

        from tinydeploy.quantize.tfconvert import saved_stderr

        assert self._stack is not None
        stream = self._stack.enter_context(os.fdopen(os.dup(saved_stderr()), "w"))
        console = Console(file=stream, highlight=False)
        progress = Progress(TextColumn("{task.description:<24}"), BarColumn(),
                            MofNCompleteColumn(), console=console)
        return self._stack.enter_context(progress)

    def task(self, description: str, total: int) -> Any:
        if not self.enabled or self._stack is None:
            return _NoTask()
        if self._progress is None:
            self._progress = self._start()
        return _Task(self._progress, self._progress.add_task(description, total=total))


class _NoTask:
    def advance(self, n: int = 1) -> None:
        pass

    def update_to(self, done: int) -> None:
        pass


class _Task(_NoTask):
    def __init__(self, progress: Any, task_id: Any) -> None:
        self.progress, self.id = progress, task_id

    def advance(self, n: int = 1) -> None:
        self.progress.advance(self.id, n)

    def update_to(self, done: int) -> None:
        self.progress.update(self.id, completed=done)


def quantize_model(
    source: str | Path,
    calibration: CalibrationLike | None,
    out_path: str | Path,
    *,
    force: bool = False,
    labels: Sequence[str] | None = None,
    max_calibration_samples: int = DEFAULT_CALIBRATION_SAMPLES,
    sqnr_samples: int = DEFAULT_SQNR_SAMPLES,
    supported_ops: Iterable[str] | None = None,
    progress: bool = False,
    activations: str = "int8",
) -> QuantizeReport:
    """Quantize ``source`` to a full-INT8 `.tflite` at ``out_path`` (see the module doc).

    ``calibration``: a `.npy`/`.npz` path, an array of inputs, an ``(x, y)`` tuple or a
    `CalibrationData`; may be None only for an INT8 `.tflite` source. The first
    ``max_calibration_samples`` samples calibrate; all of them are evaluated when labelled.
    ``labels`` names the output classes (their count must match). ``supported_ops`` overrides
    the kernel table (tests). ``activations`` "int16" selects TF's 16x8 mode (int16
    activations and model input/output, int8 weights; Keras, SavedModel and ONNX sources).
    Raises only `TinydeployError` subclasses for user errors.
    """
    if activations not in ("int8", "int16"):
        raise InputDataError(f"activations must be int8 or int16, got {activations!r}")
    if max_calibration_samples < 1:
        raise InputDataError(f"max_calibration_samples must be ≥ 1, got {max_calibration_samples}")
    out = check_output_path(out_path, force, source)
    kind, graph = identify_source(source)
    src = str(source)
    table = opcheck.supported_ops() if supported_ops is None else frozenset(supported_ops)
    data = _as_calibration(calibration) if calibration is not None else None

    if activations == "int16" and kind is SourceKind.FLOAT_TFLITE:
        raise UnsupportedError(f"{src}: --activations int16 is not supported for a float "
                               ".tflite source", hint="quantize the Keras model, SavedModel or "
                               "ONNX model instead")
    if kind is SourceKind.INT8_TFLITE:
        assert graph is not None
        _check_int8_io(graph, src, activations)
        opcheck.check_ops(graph, table, label=src)
        model = Path(source).read_bytes()
        _check_label_names(graph, labels, src)
        _write_atomically(out, model, force)
        return _report(src, kind, out, model, graph, 0, 0, None, None, (), (), True)

    if data is None:
        raise InputDataError(f"{src}: a float model needs calibration data to be quantized",
                             hint="pass --calibration DATA.npz (key 'x', optional 'y')")
    onnx_notes: tuple[str, ...] = ()
    onnx_input = None
    if kind is SourceKind.ONNX:
        from tinydeploy.quantize import onnximport

        onnx_input = onnximport.read_onnx_input(Path(src))
        data, layout_note = onnximport.calibration_layout(data, onnx_input)
        onnx_notes = (f"ONNX input '{onnx_input.name}' {list(onnx_input.shape)} (NCHW) is "
                      f"{list(onnx_input.nhwc_shape)} (NHWC) in the quantized model: feed it "
                      "channels-last (onnx2tf moves channels last, as TFLite computes)",
                      layout_note)
    calib_x = data.x[:max_calibration_samples]
    from tinydeploy.quantize import tfconvert

    bar = _Progress(progress)
    with tfconvert.native_output_captured(), bar.active(), \
            tempfile.TemporaryDirectory(prefix="td-onnx-") as onnx_dir:
        if kind is SourceKind.FLOAT_TFLITE:
            assert graph is not None
            tin = graph.inputs[0] if len(graph.inputs) == 1 else None
            if tin is None:
                raise UnsupportedError(f"{src}: the model has {len(graph.inputs)} inputs; "
                                       "tinydeploy quantizes single-input models only")
            if tin.dtype is not DType.FLOAT32:
                raise UnsupportedError(
                    f"{src}: input '{tin.name}' is {tin.dtype.name.lower()}; only a float32 "
                    "input can be quantized to int8")
            variables = [op for op in graph.operators
                         if op.opcode in ("VAR_HANDLE", "READ_VARIABLE", "CALL_ONCE")]
            if variables:
                raise UnsupportedError(
                    f"{src}: op {variables[0].index} ({variables[0].opcode}): the float model "
                    "keeps its weights in resource variables, which the calibrator cannot run",
                    hint="convert it with frozen weights (TFLiteConverter.from_keras_model, or "
                         "from_concrete_functions without a trackable object), or quantize the "
                         "Keras model / SavedModel directly")
            shape = tin.shape_signature or tin.shape
            check_input_shape(data, tuple(shape), tin.name)
            float_bytes = Path(source).read_bytes()
            task = bar.task("calibrating", calib_x.shape[0])
            int8 = tfconvert.quantize_float_tflite(Path(src), float_bytes, calib_x,
                                                   task.update_to)
        elif kind is SourceKind.ONNX:
            from tinydeploy.quantize import onnximport

            assert onnx_input is not None
            saved = onnximport.convert_onnx(Path(src), onnx_input, calib_x, Path(onnx_dir))
            fm = tfconvert.load_float_model(saved, SourceKind.SAVED_MODEL, data)
            float_bytes = fm.float_tflite
            task = bar.task("calibrating", calib_x.shape[0])
            int8 = tfconvert.quantize_float_model(fm, calib_x, task.update_to, activations)
        else:
            fm = tfconvert.load_float_model(Path(src), kind, data)
            float_bytes = fm.float_tflite
            task = bar.task("calibrating", calib_x.shape[0])
            int8 = tfconvert.quantize_float_model(fm, calib_x, task.update_to, activations)

        from tinydeploy.model.loader import load_tflite

        qgraph = load_tflite(int8)
        _check_int8_io(qgraph, src, activations)
        opcheck.check_ops(qgraph, table, label=src)
        _check_label_names(qgraph, labels, src)

        float_acc = int8_acc = None
        classes: tuple[ClassAccuracy, ...] = ()
        evaluated = 0
        if data.y is not None:
            n_classes = qgraph.outputs[0].size
            check_labels(data, n_classes, qgraph.outputs[0].name)
            evaluated = data.count
            t = bar.task("float accuracy", evaluated)
            try:
                f_scores = evaluate.float_outputs(float_bytes, data.x, t.advance)
            except (RuntimeError, ValueError) as e:
                raise ModelError(f"{src}: TFLite's interpreter cannot run the float model: "
                                 f"{tfconvert.first_error_line(e)}") from None
            t = bar.task("int8 accuracy (tflm)", evaluated)
            q_scores = evaluate.int8_outputs(int8, qgraph, data.x, t.advance)
            float_acc = evaluate.accuracy(f_scores, data.y)
            int8_acc = evaluate.accuracy(q_scores, data.y)
            classes = _class_table(f_scores, q_scores, data.y, n_classes, labels)
        n_sqnr = min(sqnr_samples, data.count)
        layers: tuple[evaluate.LayerSQNR, ...] = ()
        notes: tuple[str, ...] = ()
        if n_sqnr > 0:
            t = bar.task("per-layer SQNR", n_sqnr)
            try:
                layers = tuple(evaluate.layer_sqnr(float_bytes, int8, qgraph, data.x[:n_sqnr],
                                                   t.advance))
            except Exception as e:  # noqa: BLE001 - a diagnostic must not sink a good model
                notes = (f"per-layer SQNR unavailable: TFLite's interpreter failed "
                         f"({type(e).__name__}: {tfconvert.first_error_line(e)})",)
            if not layers and not notes:
                notes = ("per-layer SQNR unavailable: no op output of the int8 model could be "
                         "paired with the float model",)
    _write_atomically(out, int8, force)
    if activations == "int16":
        onnx_notes += ("16x8 mode: int16 activations (zero point 0), int8 weights, int64 "
                       "bias; the model's input and output are int16",)
    return _report(src, kind, out, int8, qgraph, int(calib_x.shape[0]), evaluated, float_acc,
                   int8_acc, layers, classes, False, onnx_notes + notes)


def _check_int8_io(graph: Graph, src: str, activations: str = "int8") -> None:
    want = DType.INT16 if activations == "int16" else DType.INT8
    for role, tensors in (("input", graph.inputs), ("output", graph.outputs)):
        for t in tensors:
            if t.dtype is not want:
                raise UnsupportedError(
                    f"{src}: {role} tensor '{t.name}' is {t.dtype.name.lower()}, tinydeploy "
                    f"needs {want.name.lower()} inputs and outputs",
                    hint=opcheck.FLOAT_SUGGESTION)


def _check_label_names(graph: Graph, labels: Sequence[str] | None, src: str) -> None:
    if labels is None:
        return
    classes = graph.outputs[0].size
    if len(labels) != classes:
        raise InputDataError(f"{src}: {len(labels)} labels given but output "
                             f"'{graph.outputs[0].name}' has {classes} classes",
                             hint="give one label per output class, in class-id order")


def _class_table(f: np.ndarray, q: np.ndarray, y: np.ndarray, n: int,
                 labels: Sequence[str] | None) -> tuple[ClassAccuracy, ...]:
    fa = evaluate.per_class_accuracy(f, y, n)
    qa = evaluate.per_class_accuracy(q, y, n)
    return tuple(ClassAccuracy(c, labels[c] if labels else str(c), int(np.sum(y == c)),
                               fa[c], qa[c]) for c in range(n))


def _write_atomically(out: Path, data: bytes, force: bool) -> None:
    """Temporary file beside the target, fsync, rename: readers never see a partial model."""
    if out.exists() and not force:   # it may have appeared while we worked
        raise TinydeployError(f"{out}: already exists", hint="pass --force to overwrite it")
    parent = out.parent if str(out.parent) else Path(".")
    fd, tmp = tempfile.mkstemp(prefix=f".{out.name}.", suffix=".tmp", dir=parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, out)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _report(src: str, kind: SourceKind, out: Path, model: bytes, graph: Graph, calibrated: int,
            evaluated: int, float_acc: float | None, int8_acc: float | None,
            layers: tuple[evaluate.LayerSQNR, ...], classes: tuple[ClassAccuracy, ...],
            passthrough: bool, notes: tuple[str, ...] = ()) -> QuantizeReport:
    return QuantizeReport(
        source=src, source_kind=kind, output=str(out),
        sha256=hashlib.sha256(model).hexdigest(), size_bytes=len(model),
        input=TensorInfo.of(graph.inputs[0]), output_tensor=TensorInfo.of(graph.outputs[0]),
        ops=tuple(op.type_name for op in graph.operators),
        calibration_samples=calibrated, evaluated_samples=evaluated,
        float_accuracy=float_acc, int8_accuracy=int8_acc, layers=layers, classes=classes,
        passthrough=passthrough, notes=notes)
