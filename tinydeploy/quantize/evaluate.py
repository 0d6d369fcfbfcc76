"""How much did quantization cost? Accuracy and per-layer SQNR.

* INT8 accuracy comes from `tinydeploy.oracle.run_oracle` (the tflite-micro interpreter,
  TFLM's reference kernels, which the firmware is bit-exact with), so the figure is what the
  device computes.
  Float accuracy comes from TFLite's interpreter on the float flatbuffer.
* Per-layer SQNR compares each op's output in the int8 model, dequantized, with the same
  tensor of the float model, both run by TFLite's reference kernels with all intermediate
  tensors kept. Errors accumulate along the graph, so the layer where SQNR drops sharply is
  the one that loses precision. SQNR = 10·log10(Σ f² / Σ (f − dq)²) over all evaluated
  samples; infinite (reported as None) when the two agree exactly.

Inputs are quantized on the host as the firmware's callers do: q = clamp(round(x / scale) + zp)
with halves rounded away from zero (TFLite's rounding).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from tinydeploy.model.ir import Graph, Operator, Tensor

StepFn = Callable[[], None]


@dataclass(frozen=True)
class LayerSQNR:
    """Signal-to-quantization-noise ratio of one op's output, in dB.

    None when int8 and float agree exactly; -inf when the float output is all zeros but the
    int8 one is not.
    """

    op_index: int
    op_type: str
    tensor: str
    sqnr_db: float | None
    layers: tuple[str, ...] = ()    # the model's layer names fused into this op, if known


def quantize_input(x: np.ndarray, t: Tensor) -> np.ndarray:
    """Float samples -> the int8 values the model's input tensor expects."""
    scale, zp = t.scale, t.zero_point
    v = x.astype(np.float64) / scale
    r = np.sign(v) * np.floor(np.abs(v) + 0.5)
    info = np.iinfo(t.dtype.numpy)
    return np.clip(r + zp, info.min, info.max).astype(t.dtype.numpy)


def int8_outputs(model: bytes, graph: Graph, x: np.ndarray,
                 step: StepFn | None = None) -> np.ndarray:
    """Output 0 of the int8 model for every sample, run by the tflite-micro oracle (raw int8)."""
    from tinydeploy.oracle import run_oracle

    tin = graph.inputs[0]
    q = quantize_input(x, tin)
    outs = []
    for i in range(q.shape[0]):
        outs.append(run_oracle(model, [q[i:i + 1].reshape(tin.shape)])[0].reshape(-1))
        if step is not None:
            step()
    return np.stack(outs)


def _tflite_interpreter(model: bytes, keep_all: bool, sample_shape: tuple[int, ...]) -> Any:
    from tinydeploy.quantize.tfconvert import import_tf

    tf = import_tf()
    kwargs: dict[str, Any] = {}
    if keep_all:
        kwargs = {
            "experimental_preserve_all_tensors": True,
            "experimental_op_resolver_type":
                tf.lite.experimental.OpResolverType.BUILTIN_REF,
        }
    it = tf.lite.Interpreter(model_content=model, **kwargs)
    detail = it.get_input_details()[0]
    want = (1, *sample_shape)
    if tuple(int(d) for d in detail["shape"]) != want:
        it.resize_tensor_input(detail["index"], list(want), strict=False)
    it.allocate_tensors()
    return it


def float_outputs(model: bytes, x: np.ndarray, step: StepFn | None = None) -> np.ndarray:
    """Output 0 of the float model for every sample (TFLite interpreter)."""
    it = _tflite_interpreter(model, False, tuple(x.shape[1:]))
    din = it.get_input_details()[0]
    dout = it.get_output_details()[0]
    outs = []
    for i in range(x.shape[0]):
        it.set_tensor(din["index"], x[i:i + 1].astype(din["dtype"]))
        it.invoke()
        outs.append(np.array(it.get_tensor(dout["index"])).reshape(-1))
        if step is not None:
            step()
    return np.stack(outs)


def accuracy(scores: np.ndarray, y: np.ndarray) -> float:
    """Top-1 accuracy of per-sample scores (argmax; ties go to the lowest class)."""
    return float(np.mean(np.argmax(scores, axis=1) == y))


def per_class_accuracy(scores: np.ndarray, y: np.ndarray, classes: int) -> list[float | None]:
    pred = np.argmax(scores, axis=1)
    out: list[float | None] = []
    for c in range(classes):
        mask = y == c
        out.append(float(np.mean(pred[mask] == c)) if mask.any() else None)
    return out


def layer_sqnr(float_model: bytes, int8_model: bytes, graph: Graph, x: np.ndarray,
               step: StepFn | None = None) -> list[LayerSQNR]:
    """SQNR of every op output of the int8 model that has a float counterpart (see module doc).

    Tensors are paired by name (the converter keeps op-output names); when names differ but
    both models have the same op sequence, ops are paired by position. Unpaired ops are left
    out rather than guessed.
    """
    sample_shape = tuple(x.shape[1:])
    fit = _tflite_interpreter(float_model, True, sample_shape)
    qit = _tflite_interpreter(int8_model, True, sample_shape)
    f_by_name = {d["name"]: d for d in fit.get_tensor_details()}
    q_details = {d["index"]: d for d in qit.get_tensor_details()}
    pairs = _pair_tensors(graph, f_by_name, fit)
    if not pairs:
        return []
    sig = np.zeros(len(pairs))
    noise = np.zeros(len(pairs))
    fin = fit.get_input_details()[0]["index"]
    qin_detail = qit.get_input_details()[0]
    tin = graph.inputs[0]
    q = quantize_input(x, tin)
    for i in range(x.shape[0]):
        fit.set_tensor(fin, x[i:i + 1])
        fit.invoke()
        qit.set_tensor(qin_detail["index"], q[i:i + 1].reshape(qin_detail["shape"]))
        qit.invoke()
        for k, (_, t, fidx) in enumerate(pairs):
            f = np.asarray(fit.get_tensor(fidx), dtype=np.float64).reshape(-1)
            raw = np.asarray(qit.get_tensor(t.index), dtype=np.float64).reshape(-1)
            scale = float(q_details[t.index]["quantization_parameters"]["scales"][0])
            zp = float(q_details[t.index]["quantization_parameters"]["zero_points"][0])
            dq = (raw - zp) * scale
            if f.shape != dq.shape:
                continue
            sig[k] += float(np.sum(f * f))
            noise[k] += float(np.sum((f - dq) ** 2))
        if step is not None:
            step()
    names = source_layers([t.name for _, t, _ in pairs])
    out = []
    for k, (op, t, _) in enumerate(pairs):
        out.append(LayerSQNR(op.index, op.type_name, t.name, _db(sig[k], noise[k]), names[k]))
    return out


_WRAPPER = re.compile(r"^(StatefulPartitionedCall|PartitionedCall|functional|sequential|model"
                      r"|serving_default)(_\d+)?(:\d+)?$")


def source_layers(tensor_names: list[str]) -> list[tuple[str, ...]]:
    """The model's layer names behind each op-output tensor name.

    The converter names a fused op's output after every TensorFlow op it absorbed, joined by
    ';' (``functional_1/re_lu_1/Relu;functional_1/conv2d_1/convolution``); each part is
    ``[wrappers/][model/]layer/op...``. Wrapper scopes are dropped, then a first scope shared
    by every name (a custom model name) when names are deep enough to hold one; the first
    remaining scope of each part is a layer. Names without scopes (``Identity``) give none.
    Names are TensorFlow's scopes, which may carry a ``_N`` suffix that the layer's name in
    ``model.summary()`` does not have.
    """
    split = []
    for name in tensor_names:
        parts = []
        for seg in name.split(";"):
            comps = [c for c in seg.split("/") if c]
            while comps and _WRAPPER.match(comps[0]):
                comps = comps[1:]
            parts.append(comps)
        split.append(parts)
    scoped = [c for parts in split for c in parts if len(c) >= 2]
    firsts = {c[0] for c in scoped}
    if len(firsts) == 1 and len(scoped) > 1 and all(len(c) >= 3 for c in scoped):
        split = [[c[1:] if len(c) >= 3 else c for c in parts] for parts in split]
    out = []
    for parts in split:
        seen: list[str] = []
        for c in parts:
            if len(c) >= 2 and c[0] not in seen:
                seen.append(c[0])
        out.append(tuple(seen))
    return out


def _db(signal: float, noise: float) -> float | None:
    if noise == 0.0:
        return None if signal > 0.0 else 0.0
    if signal == 0.0:
        return -math.inf
    return round(10.0 * math.log10(signal / noise), 2)


def _pair_tensors(graph: Graph, f_by_name: dict[str, Any],
                  fit: Any) -> list[tuple[Operator, Tensor, int]]:
    quantized_outputs = []
    for op in graph.operators:
        if not op.outputs or op.outputs[0] < 0:
            continue
        t = graph.tensor(op.outputs[0])
        if t.quant is None or t.quant.per_channel or t.dtype.name not in ("INT8", "INT16"):
            continue
        quantized_outputs.append((op, t))
    named = [(op, t, f_by_name[t.name]["index"]) for op, t in quantized_outputs
             if t.name in f_by_name and tuple(f_by_name[t.name]["shape"]) == t.shape]
    if len(named) == len(quantized_outputs):
        return named
    # Positional fallback: the float model's op outputs in order, if the op counts agree.
    f_ops = fit._get_ops_details()  # noqa: SLF001 - the only way to list ops and their outputs
    if len(f_ops) == len(graph.operators):
        pos = []
        for (op, t) in quantized_outputs:
            fo = f_ops[op.index]
            if fo["op_name"] != op.opcode or not len(fo["outputs"]):
                continue
            pos.append((op, t, int(fo["outputs"][0])))
        if len(pos) > len(named):
            return pos
    return named
