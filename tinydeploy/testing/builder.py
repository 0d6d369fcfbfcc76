"""Write small `.tflite` models directly as flatbuffers, for tests.

Golden tests need single-op models whose quantization parameters they control exactly
(zero points at -128 and 127, per-channel scales spanning many octaves, odd shapes). Running
the TensorFlow converter for each would be slow and would pick its own parameters; this
builder writes the flatbuffer with tflite-micro's generated schema object API (imported
lazily) in milliseconds.

Usage::

    b = ModelBuilder()
    x = b.tensor("x", (1, 8, 8, 3), "int8", scale=0.5, zero_point=-128)
    w = b.tensor("w", (4, 3, 3, 3), "int8", scale=[0.1, 0.2, 0.3, 0.4], axis=0, data=w_data)
    y = b.tensor("y", (1, 8, 8, 4), "int8", scale=0.25, zero_point=3)
    b.op("CONV_2D", [x, w, -1], [y], Conv2DOptions(stride_w=1, stride_h=1))
    model_bytes = b.build(inputs=[x], outputs=[y])

Options are given as the IR option dataclasses of `tinydeploy.model.ir` (so tests speak the
same vocabulary as the loader), or as a raw ``(options_type_name, schema OptionsT)`` pair
for anything the IR does not model. Invariants: buffer 0 is the empty sentinel, every
constant tensor owns one buffer, the output is deterministic for the same calls.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass, fields
from typing import Any

import numpy as np

from tinydeploy.errors import ToolchainError
from tinydeploy.model import ir

# builtin op -> name of its options table in the schema (ops with no options are absent)
OPTIONS_TYPE: dict[str, str] = {
    "CONV_2D": "Conv2DOptions",
    "DEPTHWISE_CONV_2D": "DepthwiseConv2DOptions",
    "FULLY_CONNECTED": "FullyConnectedOptions",
    "AVERAGE_POOL_2D": "Pool2DOptions",
    "MAX_POOL_2D": "Pool2DOptions",
    "SOFTMAX": "SoftmaxOptions",
    "RESHAPE": "ReshapeOptions",
    "SQUEEZE": "SqueezeOptions",
    "ADD": "AddOptions",
    "SUB": "SubOptions",
    "MUL": "MulOptions",
    "CONCATENATION": "ConcatenationOptions",
    "STRIDED_SLICE": "StridedSliceOptions",
    "MEAN": "ReducerOptions",
    "SUM": "ReducerOptions",
    "LEAKY_RELU": "LeakyReluOptions",
    "SVDF": "SVDFOptions",
    "UNIDIRECTIONAL_SEQUENCE_LSTM": "UnidirectionalSequenceLSTMOptions",
    "PAD": "PadOptions",
    "PADV2": "PadV2Options",
    "QUANTIZE": "QuantizeOptions",
    "DEQUANTIZE": "DequantizeOptions",
    "HARD_SWISH": "HardSwishOptions",
    "REDUCE_MAX": "ReducerOptions",
    "L2_NORMALIZATION": "L2NormOptions",
    "RESIZE_BILINEAR": "ResizeBilinearOptions",
    "RESIZE_NEAREST_NEIGHBOR": "ResizeNearestNeighborOptions",
    "SPACE_TO_DEPTH": "SpaceToDepthOptions",
    "DEPTH_TO_SPACE": "DepthToSpaceOptions",
    "SPLIT": "SplitOptions",
    "SPLIT_V": "SplitVOptions",
    "PACK": "PackOptions",
    "TRANSPOSE_CONV": "TransposeConvOptions",
    "BATCH_MATMUL": "BatchMatMulOptions",
    "TRANSPOSE": "TransposeOptions",
    "MAXIMUM": "MaximumMinimumOptions",
    "MINIMUM": "MaximumMinimumOptions",
    "SQUARED_DIFFERENCE": "SquaredDifferenceOptions",
    "LOG_SOFTMAX": "LogSoftmaxOptions",
    "ABS": "AbsOptions",
}

# IR field name -> schema object-API field name, where the camelCase rule is not enough
_FIELD_RENAME = {
    "activation": "fusedActivationFunction",
    "dilation_w": "dilationWFactor",
    "dilation_h": "dilationHFactor",
    "filter_w": "filterWidth",
    "filter_h": "filterHeight",
}


def _schema() -> Any:
    try:
        from tflite_micro.tensorflow.lite.micro.python import schema_py_generated as schema
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ToolchainError(
            "writing .tflite test models needs the TFLite schema shipped with tflite-micro",
            hint="pip install tflite-micro") from e
    return schema


def _camel(name: str) -> str:
    if name in _FIELD_RENAME:
        return _FIELD_RENAME[name]
    head, *rest = name.split("_")
    return head + "".join(p[:1].upper() + p[1:] for p in rest)


def _dtype(d: ir.DType | str) -> ir.DType:
    if isinstance(d, ir.DType):
        return d
    return ir.DType[d.upper()]


@dataclass(frozen=True)
class _TensorSpec:
    name: str
    shape: tuple[int, ...]
    dtype: ir.DType
    scale: tuple[float, ...] | None
    zero_point: tuple[int, ...] | None
    axis: int
    data: np.ndarray | None
    is_variable: bool


@dataclass(frozen=True)
class _OpSpec:
    opcode: str
    inputs: tuple[int, ...]
    outputs: tuple[int, ...]
    options: Any
    version: int


class ModelBuilder:
    """Fluent builder of a one-subgraph TFLite model (see the module docstring)."""

    def __init__(self, description: str = "tinydeploy test model") -> None:
        self.description = description
        self._tensors: list[_TensorSpec] = []
        self._ops: list[_OpSpec] = []

    def tensor(self, name: str, shape: Sequence[int], dtype: ir.DType | str = "int8", *,
               scale: float | Sequence[float] | None = None,
               zero_point: int | Sequence[int] | None = None, axis: int = 0,
               data: np.ndarray | Sequence[Any] | None = None,
               is_variable: bool = False) -> int:
        """Declare a tensor; returns its index. ``scale`` given as a sequence of more than one
        value makes the quantization per-channel along ``axis`` (zero points default to 0).
        ``data`` makes the tensor constant; it is cast to the tensor's dtype and must have
        exactly ``prod(shape)`` elements."""
        dt = _dtype(dtype)
        scales: tuple[float, ...] | None = None
        zps: tuple[int, ...] | None = None
        if scale is not None:
            scales = tuple(float(s) for s in np.atleast_1d(np.asarray(scale, dtype=np.float64)))
            if zero_point is None:
                zps = (0,) * len(scales)
            else:
                zps = tuple(int(z) for z in np.atleast_1d(np.asarray(zero_point)))
                if len(zps) == 1 and len(scales) > 1:
                    zps = zps * len(scales)
        arr = None
        if data is not None:
            arr = np.asarray(data).astype(dt.numpy).reshape(-1)
            n = int(np.prod(shape)) if len(shape) else 1
            if arr.size != n:
                raise ValueError(f"tensor '{name}': {arr.size} values for shape {tuple(shape)}")
        self._tensors.append(_TensorSpec(name, tuple(int(d) for d in shape), dt, scales, zps,
                                         axis, arr, is_variable))
        return len(self._tensors) - 1

    def op(self, opcode: str, inputs: Sequence[int], outputs: Sequence[int],
           options: Any = None, version: int = 1) -> int:
        """Append an operator (execution order = call order); -1 marks an absent input."""
        self._ops.append(_OpSpec(opcode, tuple(inputs), tuple(outputs), options, version))
        return len(self._ops) - 1

    # --- serialisation --------------------------------------------------------------------

    def _options(self, schema: Any, op: _OpSpec) -> tuple[int, Any]:
        if op.options is None:
            kind = OPTIONS_TYPE.get(op.opcode)
            if kind is None:
                return 0, None
            return getattr(schema.BuiltinOptions, kind), getattr(schema, kind + "T")()
        if isinstance(op.options, tuple):
            kind, obj = op.options
            return getattr(schema.BuiltinOptions, kind), obj
        kind = OPTIONS_TYPE.get(op.opcode)
        if kind is None:
            raise ValueError(f"{op.opcode}: no options table known; pass (type_name, OptionsT)")
        obj = getattr(schema, kind + "T")()
        for f in fields(op.options):
            value = getattr(op.options, f.name)
            if isinstance(value, enum.Enum):
                value = value.value
            elif isinstance(value, tuple):
                value = list(value)
            attr = _camel(f.name)
            if not hasattr(obj, attr):
                raise ValueError(f"{op.opcode}: schema {kind} has no field {attr}")
            setattr(obj, attr, value)
        return getattr(schema.BuiltinOptions, kind), obj

    def build(self, inputs: Sequence[int], outputs: Sequence[int]) -> bytes:
        """Serialise to `.tflite` bytes (file identifier TFL3, schema version 3)."""
        import flatbuffers

        schema = _schema()
        model = schema.ModelT()
        model.version = 3
        model.description = self.description
        buffers = [schema.BufferT()]
        tensors = []
        for t in self._tensors:
            tt = schema.TensorT()
            tt.name = t.name
            tt.shape = list(t.shape)
            tt.type = t.dtype.value
            tt.isVariable = t.is_variable
            tt.buffer = 0
            if t.data is not None:
                b = schema.BufferT()
                b.data = np.frombuffer(t.data.astype(t.dtype.numpy).tobytes(), dtype=np.uint8)
                buffers.append(b)
                tt.buffer = len(buffers) - 1
            if t.scale is not None:
                q = schema.QuantizationParametersT()
                q.scale = list(t.scale)
                q.zeroPoint = list(t.zero_point or ())
                q.quantizedDimension = t.axis
                tt.quantization = q
            tensors.append(tt)
        codes: list[tuple[str, int]] = []
        ops = []
        for o in self._ops:
            key = (o.opcode, o.version)
            if key not in codes:
                codes.append(key)
            ot = schema.OperatorT()
            ot.opcodeIndex = codes.index(key)
            ot.inputs = list(o.inputs)
            ot.outputs = list(o.outputs)
            kind, obj = self._options(schema, o)
            ot.builtinOptionsType = kind
            ot.builtinOptions = obj
            ops.append(ot)
        opcodes = []
        for name, version in codes:
            c = schema.OperatorCodeT()
            code = getattr(schema.BuiltinOperator, name)
            c.builtinCode = code
            c.deprecatedBuiltinCode = min(code, 127)
            c.version = version
            opcodes.append(c)
        sg = schema.SubGraphT()
        sg.tensors = tensors
        sg.operators = ops
        sg.inputs = list(inputs)
        sg.outputs = list(outputs)
        sg.name = "main"
        model.subgraphs = [sg]
        model.operatorCodes = opcodes
        model.buffers = buffers
        fb = flatbuffers.Builder(1024)
        fb.Finish(model.Pack(fb), file_identifier=b"TFL3")
        return bytes(fb.Output())
