"""What `quantize_model` tells its caller: typed, and convertible to stable JSON."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from tinydeploy.model.ir import Tensor
from tinydeploy.quantize.evaluate import LayerSQNR
from tinydeploy.quantize.tfconvert import SourceKind


@dataclass(frozen=True)
class TensorInfo:
    """An input or output of the quantized model, as an application feeds or reads it."""

    name: str
    shape: tuple[int, ...]
    dtype: str
    scale: float | None
    zero_point: int | None

    @classmethod
    def of(cls, t: Tensor) -> TensorInfo:
        single = t.quant is not None and not t.quant.per_channel
        return cls(t.name, tuple(t.shape), t.dtype.name.lower(),
                   t.quant.scale[0] if single and t.quant else None,
                   t.quant.zero_point[0] if single and t.quant else None)


@dataclass(frozen=True)
class ClassAccuracy:
    """Accuracy on the samples labelled with one class (None: no sample of that class)."""

    class_id: int
    label: str
    samples: int
    float_accuracy: float | None
    int8_accuracy: float | None


@dataclass(frozen=True)
class QuantizeReport:
    """The result of one quantization.

    ``passthrough`` is True when the source was already an INT8 `.tflite` (copied after the op
    check, nothing measured). Accuracies are fractions in [0, 1], None without labels.
    ``notes`` says why a measurement is missing (e.g. SQNR when TFLite could not run a model).
    ``int8_accuracy`` is measured with tflite-micro. ``layers`` is in op order.
    """

    source: str
    source_kind: SourceKind
    output: str
    sha256: str
    size_bytes: int
    input: TensorInfo
    output_tensor: TensorInfo
    ops: tuple[str, ...]
    calibration_samples: int
    evaluated_samples: int
    float_accuracy: float | None
    int8_accuracy: float | None
    layers: tuple[LayerSQNR, ...]
    classes: tuple[ClassAccuracy, ...] = ()
    passthrough: bool = False
    notes: tuple[str, ...] = ()

    @property
    def accuracy_drop(self) -> float | None:
        """Float minus INT8 accuracy, in points (percent)."""
        if self.float_accuracy is None or self.int8_accuracy is None:
            return None
        return round(100.0 * (self.float_accuracy - self.int8_accuracy), 2)

    @property
    def worst_layer(self) -> LayerSQNR | None:
        finite = [layer for layer in self.layers if layer.sqnr_db is not None]
        return min(finite, key=lambda layer: (layer.sqnr_db, layer.op_index)) if finite else None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict. ``sqnr_db`` is null when infinite: ``exact`` tells +inf (int8
        equals float) from -inf (float all zeros)."""

        def tensor(t: TensorInfo) -> dict[str, Any]:
            return {"name": t.name, "shape": list(t.shape), "dtype": t.dtype,
                    "scale": t.scale, "zero_point": t.zero_point}

        def db(v: float | None) -> float | None:
            return None if v is None or math.isinf(v) else v

        counts: dict[str, int] = {}
        for op in self.ops:
            counts[op] = counts.get(op, 0) + 1
        return {
            "source": self.source,
            "source_kind": self.source_kind.value,
            "output": self.output,
            "sha256": self.sha256,
            "size_bytes": self.size_bytes,
            "passthrough": self.passthrough,
            "input": tensor(self.input),
            "output_tensor": tensor(self.output_tensor),
            "ops": list(self.ops),
            "op_counts": dict(sorted(counts.items())),
            "calibration_samples": self.calibration_samples,
            "evaluated_samples": self.evaluated_samples,
            "float_accuracy": self.float_accuracy,
            "int8_accuracy": self.int8_accuracy,
            "accuracy_drop_points": self.accuracy_drop,
            "layers": [{"op_index": x.op_index, "op": x.op_type, "tensor": x.tensor,
                        "keras_layers": list(x.layers), "sqnr_db": db(x.sqnr_db),
                        "exact": x.sqnr_db is None}
                       for x in self.layers],
            "classes": [{"class_id": c.class_id, "label": c.label, "samples": c.samples,
                         "float_accuracy": c.float_accuracy, "int8_accuracy": c.int8_accuracy}
                        for c in self.classes],
            "notes": list(self.notes),
        }
