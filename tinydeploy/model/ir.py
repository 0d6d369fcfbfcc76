"""The typed intermediate representation every stage after `load` works on.

The IR is a faithful, read-only picture of one `.tflite` file: tensors with shapes, dtypes,
quantization and constant data; operators in execution order with their typed builtin
options. It holds no decisions (kernel choice, offsets): later stages add those in their own
dataclasses. Invariants:

* operator order is the file's execution order;
* an operator input index of -1 means "optional input absent" (as in TFLite);
* constant data is a read-only numpy array already shaped like the tensor;
* per-channel quantization has ``len(scale) > 1`` and a valid ``axis``; a per-channel
  ``axis`` that does not fit the tensor's rank (a known converter quirk on bias tensors) is
  clamped to the last dimension by the loader.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

import numpy as np


class DType(enum.Enum):
    """TFLite TensorType values that tinydeploy can name (value = schema enum value)."""

    FLOAT32 = 0
    FLOAT16 = 1
    INT32 = 2
    UINT8 = 3
    INT64 = 4
    STRING = 5
    BOOL = 6
    INT16 = 7
    COMPLEX64 = 8
    INT8 = 9
    FLOAT64 = 10
    COMPLEX128 = 11
    UINT64 = 12
    RESOURCE = 13
    VARIANT = 14
    UINT32 = 15
    UINT16 = 16
    INT4 = 17
    BFLOAT16 = 18

    @property
    def itemsize(self) -> int:
        """Bytes per element on the device (INT4 is stored one value per byte once unpacked)."""
        return _ITEMSIZE.get(self, 0)

    @property
    def numpy(self) -> np.dtype:
        """The numpy dtype of this element type; raises KeyError for types without one."""
        return np.dtype(_NUMPY[self])

    @property
    def c_type(self) -> str:
        return _CTYPE[self]


_ITEMSIZE = {
    DType.FLOAT32: 4, DType.FLOAT16: 2, DType.INT32: 4, DType.UINT8: 1, DType.INT64: 8,
    DType.BOOL: 1, DType.INT16: 2, DType.INT8: 1, DType.FLOAT64: 8, DType.UINT64: 8,
    DType.UINT32: 4, DType.UINT16: 2, DType.INT4: 1, DType.BFLOAT16: 2, DType.COMPLEX64: 8,
    DType.COMPLEX128: 16,
}
_NUMPY = {
    DType.FLOAT32: "<f4", DType.FLOAT16: "<f2", DType.INT32: "<i4", DType.UINT8: "u1",
    DType.INT64: "<i8", DType.BOOL: "?", DType.INT16: "<i2", DType.INT8: "i1",
    DType.FLOAT64: "<f8", DType.UINT64: "<u8", DType.UINT32: "<u4", DType.UINT16: "<u2",
    DType.COMPLEX64: "<c8", DType.COMPLEX128: "<c16",
}
_CTYPE = {
    DType.FLOAT32: "float", DType.INT32: "int32_t", DType.UINT8: "uint8_t",
    DType.INT64: "int64_t", DType.BOOL: "uint8_t", DType.INT16: "int16_t", DType.INT8: "int8_t",
    DType.UINT32: "uint32_t", DType.UINT16: "uint16_t",
}


class Padding(enum.Enum):
    SAME = 0
    VALID = 1


class Activation(enum.Enum):
    """Fused activation functions (schema ActivationFunctionType)."""

    NONE = 0
    RELU = 1
    RELU_N1_TO_1 = 2
    RELU6 = 3
    TANH = 4
    SIGN_BIT = 5


@dataclass(frozen=True)
class Quantization:
    """Affine quantization: real = scale * (q - zero_point).

    Per-tensor when ``len(scale) == 1``; per-channel along ``axis`` otherwise.
    """

    scale: tuple[float, ...]
    zero_point: tuple[int, ...]
    axis: int = 0

    @property
    def per_channel(self) -> bool:
        return len(self.scale) > 1


@dataclass(frozen=True, eq=False)
class Tensor:
    index: int
    name: str
    shape: tuple[int, ...]
    dtype: DType
    quant: Quantization | None = None
    data: np.ndarray | None = None
    is_variable: bool = False
    shape_signature: tuple[int, ...] | None = None
    buffer: int = 0   # the file's buffer index (0: none); several tensors may share one

    @property
    def is_constant(self) -> bool:
        """Constant data lives in flash. A variable (state) tensor is never constant, even
        when the file gives it a buffer: TFLM resets state to its zero point, not to data."""
        return self.data is not None and not self.is_variable

    @property
    def size(self) -> int:
        """Number of elements (1 for a scalar)."""
        n = 1
        for d in self.shape:
            n *= d
        return n

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    @property
    def scale(self) -> float:
        """The per-tensor scale; raises ValueError when per-channel or unquantized."""
        if self.quant is None or self.quant.per_channel:
            raise ValueError(f"tensor '{self.name}' has no single scale")
        return self.quant.scale[0]

    @property
    def zero_point(self) -> int:
        if self.quant is None or self.quant.per_channel:
            raise ValueError(f"tensor '{self.name}' has no single zero point")
        return self.quant.zero_point[0]


# --- builtin options, one dataclass per options table the supported ops use ---------------


@dataclass(frozen=True)
class Conv2DOptions:
    padding: Padding = Padding.SAME
    stride_w: int = 1
    stride_h: int = 1
    activation: Activation = Activation.NONE
    dilation_w: int = 1
    dilation_h: int = 1
    quantized_bias_type: int = 0    # TensorType of the bias the converter meant (0: default)


@dataclass(frozen=True)
class DepthwiseConv2DOptions:
    padding: Padding = Padding.SAME
    stride_w: int = 1
    stride_h: int = 1
    depth_multiplier: int = 1
    activation: Activation = Activation.NONE
    dilation_w: int = 1
    dilation_h: int = 1


@dataclass(frozen=True)
class FullyConnectedOptions:
    activation: Activation = Activation.NONE
    weights_format: int = 0
    keep_num_dims: bool = False
    asymmetric_quantize_inputs: bool = False
    quantized_bias_type: int = 0    # TensorType of the bias the converter meant (0: default)


@dataclass(frozen=True)
class Pool2DOptions:
    padding: Padding = Padding.SAME
    stride_w: int = 1
    stride_h: int = 1
    filter_w: int = 1
    filter_h: int = 1
    activation: Activation = Activation.NONE


@dataclass(frozen=True)
class SoftmaxOptions:
    beta: float = 1.0


@dataclass(frozen=True)
class ReshapeOptions:
    new_shape: tuple[int, ...] = ()


@dataclass(frozen=True)
class SqueezeOptions:
    squeeze_dims: tuple[int, ...] = ()


@dataclass(frozen=True)
class ActivationOptions:
    """For ADD, MUL, SUB (fused activation only)."""

    activation: Activation = Activation.NONE


@dataclass(frozen=True)
class ConcatenationOptions:
    axis: int = 0
    activation: Activation = Activation.NONE


@dataclass(frozen=True)
class StridedSliceOptions:
    begin_mask: int = 0
    end_mask: int = 0
    ellipsis_mask: int = 0
    new_axis_mask: int = 0
    shrink_axis_mask: int = 0
    offset: bool = False


@dataclass(frozen=True)
class ReducerOptions:
    keep_dims: bool = False


@dataclass(frozen=True)
class LeakyReluOptions:
    alpha: float = 0.0


@dataclass(frozen=True)
class SVDFOptions:
    rank: int = 0
    activation: Activation = Activation.NONE
    asymmetric_quantize_inputs: bool = False


@dataclass(frozen=True)
class SequenceLSTMOptions:
    """UnidirectionalSequenceLSTMOptions."""

    activation: Activation = Activation.NONE
    cell_clip: float = 0.0
    proj_clip: float = 0.0
    time_major: bool = False
    asymmetric_quantize_inputs: bool = False
    diagonal_recurrent_tensors: bool = False


@dataclass(frozen=True)
class SplitOptions:
    """SPLIT and SPLIT_V."""

    num_splits: int = 0


@dataclass(frozen=True)
class PackOptions:
    values_count: int = 0
    axis: int = 0


@dataclass(frozen=True)
class TransposeConvOptions:
    padding: Padding = Padding.SAME
    stride_w: int = 1
    stride_h: int = 1
    activation: Activation = Activation.NONE
    quantized_bias_type: int = 0


@dataclass(frozen=True)
class BatchMatMulOptions:
    adj_x: bool = False
    adj_y: bool = False
    asymmetric_quantize_inputs: bool = False


@dataclass(frozen=True)
class ResizeOptions:
    """RESIZE_BILINEAR and RESIZE_NEAREST_NEIGHBOR."""

    align_corners: bool = False
    half_pixel_centers: bool = False


@dataclass(frozen=True)
class BlockSizeOptions:
    """DEPTH_TO_SPACE and SPACE_TO_DEPTH."""

    block_size: int = 0


@dataclass(frozen=True)
class SubgraphOptions:
    """Options of ops that call other subgraphs (IF, WHILE, CALL_ONCE): subgraph indices."""

    subgraphs: tuple[int, ...] = ()


Options = (
    Conv2DOptions | DepthwiseConv2DOptions | FullyConnectedOptions | Pool2DOptions
    | SoftmaxOptions | ReshapeOptions | SqueezeOptions | ActivationOptions
    | ConcatenationOptions | StridedSliceOptions | ReducerOptions | LeakyReluOptions
    | SVDFOptions | SequenceLSTMOptions | SubgraphOptions | SplitOptions | PackOptions
    | TransposeConvOptions | BatchMatMulOptions | ResizeOptions | BlockSizeOptions | None
)


@dataclass(frozen=True)
class Operator:
    """One operator. ``opcode`` is the builtin name (``"CONV_2D"``) or ``"CUSTOM"``."""

    index: int
    opcode: str
    version: int
    inputs: tuple[int, ...]
    outputs: tuple[int, ...]
    options: Options = None
    custom_code: str | None = None
    intermediates: tuple[int, ...] = ()

    @property
    def type_name(self) -> str:
        """What a user calls the op: the builtin name, or the custom code."""
        if self.opcode == "CUSTOM" and self.custom_code:
            return self.custom_code
        return self.opcode


@dataclass(frozen=True)
class Subgraph:
    name: str
    tensors: tuple[Tensor, ...]
    operators: tuple[Operator, ...]
    inputs: tuple[int, ...]
    outputs: tuple[int, ...]


@dataclass(frozen=True)
class Graph:
    """A loaded model. The top-level fields are those of the main subgraph (index 0)."""

    sha256: str
    subgraphs: tuple[Subgraph, ...]
    description: str = ""
    schema_version: int = 3
    metadata: dict[str, bytes] = field(default_factory=dict)

    @property
    def main(self) -> Subgraph:
        return self.subgraphs[0]

    @property
    def tensors(self) -> tuple[Tensor, ...]:
        return self.main.tensors

    @property
    def operators(self) -> tuple[Operator, ...]:
        return self.main.operators

    @property
    def inputs(self) -> tuple[Tensor, ...]:
        return tuple(self.main.tensors[i] for i in self.main.inputs)

    @property
    def outputs(self) -> tuple[Tensor, ...]:
        return tuple(self.main.tensors[i] for i in self.main.outputs)

    def tensor(self, index: int) -> Tensor:
        return self.main.tensors[index]

    def op_inputs(self, op: Operator) -> tuple[Tensor | None, ...]:
        """The op's input tensors; None where an optional input is absent (-1)."""
        return tuple(None if i < 0 else self.main.tensors[i] for i in op.inputs)

    def op_outputs(self, op: Operator) -> tuple[Tensor, ...]:
        return tuple(self.main.tensors[i] for i in op.outputs)
