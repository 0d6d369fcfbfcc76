"""Structural checks of a loaded subgraph: what every later stage may take for granted.

A model file is untrusted. After these checks (run by the loader on the main subgraph):

* the subgraph has at most `MAX_OPERATORS` operators;
* every tensor has fewer than 2^31 elements and 2^31 bytes (all sizes fit the int32 fields
  of TFLite and of the generated C);
* strides, dilations and pooling windows are at least 1;
* every operator of a known op type has the inputs and outputs the op needs (`ARITY`), with
  its required inputs present (not -1), so a kernel never indexes past ``op.inputs``;
* ops run in order: every input is a constant, a graph input, a variable (state) tensor, or
  the output of an *earlier* op — so no op reads its own output or a later op's, there is no
  cycle, and nothing is read that nobody produces;
* every quantized op output has positive scales (the loader already refused NaN, infinite
  and negative ones), so no requantization divides by zero;
* no tensor is written by two ops, and graph inputs and constants are never written.

Each violation is a ModelError (raised by the loader) naming the op, the tensor and the
numbers.
"""

from __future__ import annotations

from dataclasses import dataclass

from tinydeploy.model import ir

MAX_ELEMENTS = (1 << 31) - 1
# Far beyond the models microcontrollers run (tens to a few hundred ops), and small enough
# that every stage stays fast on a hostile 10,000-op file (the planner is quadratic in ops).
MAX_OPERATORS = 1024


@dataclass(frozen=True)
class Arity:
    """``min_in``..``max_in`` inputs (None: any number), ``min_out`` or more outputs;
    ``required``: input positions that must name a tensor (default: the first ``min_in``)."""

    min_in: int
    max_in: int | None
    min_out: int = 1
    max_out: int | None = 1
    required: tuple[int, ...] | None = None

    def required_inputs(self) -> tuple[int, ...]:
        return self.required if self.required is not None else tuple(range(self.min_in))


_UNARY = Arity(1, 1)
_BINARY = Arity(2, 2)
# TFLite's builtin ops as tinydeploy compiles them (inputs as in the TFLite schema / TFLM)
ARITY: dict[str, Arity] = {
    **{op: _UNARY for op in (
        "ABS", "AVERAGE_POOL_2D", "DEPTH_TO_SPACE", "DEQUANTIZE", "ELU", "HARD_SWISH",
        "LEAKY_RELU", "LOGISTIC", "MAX_POOL_2D", "QUANTIZE", "RELU", "RELU6", "RSQRT",
        "SOFTMAX", "SPACE_TO_DEPTH", "SQUEEZE", "TANH", "L2_NORMALIZATION")},
    **{op: _BINARY for op in (
        "ADD", "SUB", "MUL", "MAXIMUM", "MINIMUM", "SQUARED_DIFFERENCE", "PRELU", "MEAN",
        "SUM", "REDUCE_MAX", "REDUCE_MIN", "TRANSPOSE", "RESIZE_BILINEAR",
        "RESIZE_NEAREST_NEIGHBOR", "PAD")},
    "CONCATENATION": Arity(1, None),
    "PACK": Arity(1, None),
    "CONV_2D": Arity(2, 3),
    "DEPTHWISE_CONV_2D": Arity(2, 3),
    "FULLY_CONNECTED": Arity(2, 3),
    "PADV2": Arity(2, 3),
    "RESHAPE": Arity(1, 2),
    "SPLIT": Arity(2, 2, 1, None),
    "SPLIT_V": Arity(3, 3, 1, None),
    "STRIDED_SLICE": Arity(4, 4),
    # input, weights_feature, weights_time, bias (optional), activation state
    "SVDF": Arity(5, 5, required=(0, 1, 2, 4)),
    # input; input-to-{forget,cell,output} and recurrent-to-{forget,cell,output} weights;
    # {forget,cell,output} gate biases; output and cell states (the rest are optional)
    "UNIDIRECTIONAL_SEQUENCE_LSTM": Arity(20, 24,
                                          required=(0, 2, 3, 4, 6, 7, 8, 13, 14, 15, 18, 19)),
}


# option fields that are divisors or window sizes: 0 or negative is never a valid model
_POSITIVE_OPTIONS = ("stride_w", "stride_h", "dilation_w", "dilation_h", "filter_w",
                     "filter_h")


def check_tensor_size(where: str, name: str, shape: tuple[int, ...], itemsize: int) -> None:
    n = 1
    for d in shape:
        n *= d
    if n > MAX_ELEMENTS or n * itemsize > MAX_ELEMENTS:
        raise ValueError(f"{where} ('{name}'): shape {shape} has {n:,} elements "
                         f"({n * itemsize:,} bytes); at most {MAX_ELEMENTS:,} are supported")


def check_subgraph(sg: ir.Subgraph, where: str) -> None:
    """Raise ValueError (the loader makes it a ModelError) on the first violation."""
    if len(sg.operators) > MAX_OPERATORS:
        raise ValueError(f"{where} has {len(sg.operators):,} operators; tinydeploy compiles at "
                         f"most {MAX_OPERATORS:,}")
    tensors = sg.tensors
    available = {i for i, t in enumerate(tensors)
                 if t.data is not None or t.is_variable} | set(sg.inputs)
    writer: dict[int, int] = {}
    for op in sg.operators:
        at = f"{where} operator {op.index} ({op.opcode})"
        ar = ARITY.get(op.opcode)
        if ar is not None:
            n_in, n_out = len(op.inputs), len(op.outputs)
            if n_in < ar.min_in or (ar.max_in is not None and n_in > ar.max_in):
                want = (f"{ar.min_in}" if ar.max_in == ar.min_in else
                        f"{ar.min_in} or more" if ar.max_in is None else
                        f"{ar.min_in} to {ar.max_in}")
                raise ValueError(f"{at}: {n_in} input(s), the op takes {want}")
            if n_out < ar.min_out or (ar.max_out is not None and n_out > ar.max_out):
                raise ValueError(f"{at}: {n_out} output(s), the op has "
                                 f"{ar.min_out if ar.max_out == ar.min_out else 'at least 1'}")
            for k in ar.required_inputs():
                if k < n_in and op.inputs[k] < 0:
                    raise ValueError(f"{at}: required input {k} is absent (-1)")
        for field_name in _POSITIVE_OPTIONS:
            value = getattr(op.options, field_name, None)
            if isinstance(value, int) and value < 1:
                raise ValueError(f"{at}: option {field_name} is {value}; it must be at least 1")
        for i in op.inputs:
            if i < 0:
                continue
            if i in op.outputs:
                raise ValueError(f"{at}: reads its own output, tensor {i} "
                                 f"('{tensors[i].name[:80]}')")
            if i not in available:
                later = next((o.index for o in sg.operators if i in o.outputs), None)
                why = (f"written only by the later operator {later} (ops out of order, or a "
                       "cycle)" if later is not None else
                       "never written: not a graph input, a constant or any op's output")
                raise ValueError(f"{at}: input tensor {i} ('{tensors[i].name[:80]}') is {why}")
        for i in op.outputs:
            t = tensors[i]
            if t.quant is not None and min(t.quant.scale) <= 0:
                raise ValueError(f"{at}: output tensor {i} ('{t.name[:80]}') has quantization "
                                 f"scale {min(t.quant.scale)!r}; an op's output needs a "
                                 "positive scale")
            if i in writer:
                raise ValueError(f"{at}: tensor {i} ('{t.name[:80]}') is already written by "
                                 f"operator {writer[i]}")
            if t.data is not None or i in sg.inputs:
                kind = "a constant" if t.data is not None else "a graph input"
                raise ValueError(f"{at}: writes tensor {i} ('{t.name[:80]}'), which is {kind}")
            writer[i] = op.index
            available.add(i)
    for i in sg.outputs:
        if i not in available:
            raise ValueError(f"{where}: graph output tensor {i} ('{tensors[i].name[:80]}') is "
                             "never written")
