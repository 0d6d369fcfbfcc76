"""The op check: does a quantized model contain only what tinydeploy can compile?

Run after conversion (and on an INT8 `.tflite` given as is), before anything is written, so
that a model that could never be built is refused at quantize time with a concrete fix rather
than at build time. Two rules, checked op by op in execution order:

1. the op's builtin name is in the kernel table (`tinydeploy.kernels.registry.SUPPORTED_OPS`);
2. the op computes in integers: no non-constant FLOAT32 input or output. A float tensor means
   the converter left part of the model in float (or the model has float I/O).

The first violation is an `UnsupportedError` naming the op index, its type and a suggestion
from `SUGGESTIONS`; `find_problems` returns all of them for reports.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from tinydeploy.errors import UnsupportedError
from tinydeploy.model.ir import DType, Graph, Operator

# op -> what the user can change in the model so that the op disappears or becomes supported.
_SHAPE_OPS_FIX = ("the graph computes shapes at run time because its batch dimension is "
                  "dynamic (tf.keras.layers.Flatten or Reshape on a batch-None input): quantize "
                  "the Keras model or SavedModel with tinydeploy quantize, which fixes the batch "
                  "to 1, or build the model on keras.Input(shape, batch_size=1) before "
                  "converting (in Keras 3, replacing Flatten by Reshape alone is not enough)")
SUGGESTIONS: dict[str, str] = {
    "SHAPE": _SHAPE_OPS_FIX,
    "STRIDED_SLICE": _SHAPE_OPS_FIX,
    "PACK": _SHAPE_OPS_FIX,
    "UNPACK": _SHAPE_OPS_FIX,
    "GATHER": "avoid indexing/embedding layers; precompute the lookup outside the model",
    "GELU": "use ReLU (or ReLU6) instead of GELU",
    "HARD_SWISH": "use ReLU6 instead of hard-swish",
    "ELU": "use ReLU instead of ELU",
    "EXP": "avoid exp in the model body; use ReLU activations",
    "LOG": "avoid log in the model body; compute it in the feature front end",
    "SQRT": "avoid sqrt in the model body; fold normalisation into the preceding layer",
    "RSQRT": "fold normalisation into the preceding layer (use BatchNormalization after a "
             "convolution, which the converter folds)",
    "POW": "avoid pow in the model body",
    "DIV": "replace division by a multiplication with a constant",
    "BATCH_MATMUL": "use Dense layers on 2-D inputs (FULLY_CONNECTED)",
    "TRANSPOSE": "avoid Permute/transpose layers; lay the input out as the model consumes it",
    "MEAN": "use AveragePooling2D over the whole feature map instead of GlobalAveragePooling2D "
            "(or a Reshape + AveragePooling2D)",
    "SUM": "use AveragePooling2D and scale the next layer instead of a reduction",
    "REDUCE_MAX": "use MaxPooling2D over the whole feature map instead of a global max",
    "PAD": "use padding='same' in the convolution instead of an explicit ZeroPadding2D",
    "PADV2": "use padding='same' in the convolution instead of an explicit padding layer",
    "RESIZE_BILINEAR": "resize inputs on the host, or use UpSampling2D(interpolation='nearest')",
    "RESIZE_NEAREST_NEIGHBOR": "resize inputs on the host before inference",
    "UNIDIRECTIONAL_SEQUENCE_LSTM": "use a convolutional model (e.g. DS-CNN) instead of an LSTM",
    "LSTM": "use a convolutional model (e.g. DS-CNN) instead of an LSTM",
    "UNIDIRECTIONAL_SEQUENCE_RNN": "use a convolutional model instead of an RNN",
    "SPLIT": "use separate convolutions on separate inputs instead of splitting a tensor",
    "SPLIT_V": "use separate convolutions on separate inputs instead of splitting a tensor",
    "TANH": "use ReLU instead of tanh",
    "LOGISTIC": "use ReLU in hidden layers (sigmoid only as the last layer, if supported)",
    "CUSTOM": "custom ops cannot be compiled; use builtin Keras layers only",
    "FLEX": "TensorFlow (Flex) ops cannot run on a microcontroller; use builtin layers only",
    "QUANTIZE": "the model has float input: quantize with int8 input and output "
                "(tinydeploy quantize does this)",
    "DEQUANTIZE": "the model has float output or float weights: quantize fully to int8 "
                  "(tinydeploy quantize does this)",
}
FLOAT_SUGGESTION = ("the model was not fully quantized: re-run tinydeploy quantize from the "
                    "float model (Keras, SavedModel or float .tflite) with representative data")
DEFAULT_SUGGESTION = ("replace the layer that produces this op by a supported one; "
                      "`tinydeploy inspect` lists the supported ops")


@dataclass(frozen=True)
class OpProblem:
    """One op that tinydeploy cannot compile, and what to do about it."""

    op_index: int
    op_type: str
    reason: str
    suggestion: str

    def message(self) -> str:
        return f"op {self.op_index} ({self.op_type}): {self.reason}"


def _float_tensors(graph: Graph, op: Operator) -> list[str]:
    names = []
    for i in (*op.inputs, *op.outputs):
        if i < 0:
            continue
        t = graph.tensor(i)
        if t.dtype in (DType.FLOAT32, DType.FLOAT16, DType.FLOAT64) and not t.is_constant:
            names.append(t.name)
    return names


def find_problems(graph: Graph, supported: Iterable[str]) -> list[OpProblem]:
    """Every op of the main subgraph that breaks rule 1 or 2, in op order."""
    table = frozenset(supported)
    problems = []
    for op in graph.operators:
        name = op.type_name
        if op.opcode == "CUSTOM" and (op.custom_code or "").startswith("Flex"):
            problems.append(OpProblem(op.index, name, "a TensorFlow (Flex) op",
                                      SUGGESTIONS["FLEX"]))
            continue
        if op.opcode not in table:
            hint = SUGGESTIONS.get(op.opcode, SUGGESTIONS.get(name, DEFAULT_SUGGESTION))
            problems.append(OpProblem(op.index, name, "not supported by tinydeploy", hint))
            continue
        floats = _float_tensors(graph, op)
        if floats:
            io_op = op.opcode in ("QUANTIZE", "DEQUANTIZE")
            problems.append(OpProblem(
                op.index, name,
                f"computes in float ({len(floats)} float tensor(s), e.g. '{floats[0]}')",
                SUGGESTIONS[op.opcode] if io_op else FLOAT_SUGGESTION))
    return problems


def supported_ops() -> frozenset[str]:
    """The kernel table's op names (looked up at call time: op modules register lazily)."""
    from tinydeploy.kernels import registry

    return registry.supported_ops()


def check_ops(graph: Graph, supported: Iterable[str] | None = None,
              label: str = "model") -> None:
    """Raise UnsupportedError for the first op tinydeploy cannot compile (see module doc)."""
    table = supported_ops() if supported is None else frozenset(supported)
    problems = find_problems(graph, table)
    if not problems:
        return
    first = problems[0]
    more = ""
    if len(problems) > 1:
        others = sorted({p.op_type for p in problems[1:]})
        more = f" ({len(problems) - 1} more problem op(s): {', '.join(others)})"
    raise UnsupportedError(f"{label}: {first.message()}{more}", hint=first.suggestion)
