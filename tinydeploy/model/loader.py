"""`.tflite` bytes -> `Graph`. The only code that knows the TFLite flatbuffer schema.

No TensorFlow on this path: the file is read with the bounds-checked reader in `flatbuf.py`,
and every failure, whatever the bytes, is a `ModelError` naming the file and the problem.
Field indices below are those of TFLite's `schema.fbs` (schema version 3).
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from struct import error as struct_error
from typing import Any

import numpy as np

from tinydeploy.errors import ModelError
from tinydeploy.model import ir
from tinydeploy.model.flatbuf import Buffer, FlatBufferError, Table
from tinydeploy.model.opcodes import BUILTIN_OPS
from tinydeploy.model.structure import MAX_OPERATORS, check_subgraph, check_tensor_size

FILE_IDENTIFIER = b"TFL3"
MAX_MODEL_BYTES = 1 << 31

# BuiltinOptions union type values used by supported ops.
_OPT_CONV2D = 1
_OPT_DEPTHWISE = 2
_OPT_POOL2D = 5
_OPT_SVDF = 6
_OPT_FULLY_CONNECTED = 8
_OPT_SOFTMAX = 9
_OPT_CONCATENATION = 10
_OPT_ADD = 11
_OPT_RESHAPE = 17
_OPT_MUL = 21
_OPT_REDUCER = 27
_OPT_SUB = 28
_OPT_SQUEEZE = 30
_OPT_STRIDED_SLICE = 32
_OPT_SEQUENCE_LSTM = 71
_OPT_LEAKY_RELU = 75
_OPT_L2NORM = 12
_OPT_RESIZE_BILINEAR = 15
_OPT_SPACE_TO_DEPTH = 19
_OPT_SPLIT = 35
_OPT_TRANSPOSE_CONV = 49
_OPT_PACK = 59
_OPT_RESIZE_NEAREST = 74
_OPT_SPLIT_V = 79
_OPT_DEPTH_TO_SPACE = 94
_OPT_BATCH_MATMUL = 101
_OPT_IF = 92
_OPT_WHILE = 93
_OPT_CALL_ONCE = 103


def _padding(v: Any, where: str) -> ir.Padding:
    try:
        return ir.Padding(int(v))
    except ValueError:
        raise FlatBufferError(f"{where}: unknown padding {v}") from None


def _act(v: Any, where: str) -> ir.Activation:
    try:
        return ir.Activation(int(v))
    except ValueError:
        raise FlatBufferError(f"{where}: unknown fused activation {v}") from None


def _ints(arr: np.ndarray | None) -> tuple[int, ...]:
    return () if arr is None else tuple(int(x) for x in arr)


def _parse_options(kind: int, t: Table | None, where: str) -> ir.Options:
    if t is None:
        t_default = True
    else:
        t_default = False

    def s(i: int, fmt: str, d: Any = 0) -> Any:
        return d if t_default else t.scalar(i, fmt, d)  # type: ignore[union-attr]

    if kind == _OPT_CONV2D:
        return ir.Conv2DOptions(_padding(s(0, "b"), where), int(s(1, "i")), int(s(2, "i")),
                                _act(s(3, "b"), where), int(s(4, "i", 1)), int(s(5, "i", 1)),
                                int(s(6, "b")))
    if kind == _OPT_DEPTHWISE:
        return ir.DepthwiseConv2DOptions(
            _padding(s(0, "b"), where), int(s(1, "i")), int(s(2, "i")), int(s(3, "i")),
            _act(s(4, "b"), where), int(s(5, "i", 1)), int(s(6, "i", 1)))
    if kind == _OPT_POOL2D:
        return ir.Pool2DOptions(_padding(s(0, "b"), where), int(s(1, "i")), int(s(2, "i")),
                                int(s(3, "i")), int(s(4, "i")), _act(s(5, "b"), where))
    if kind == _OPT_FULLY_CONNECTED:
        return ir.FullyConnectedOptions(_act(s(0, "b"), where), int(s(1, "b")),
                                        bool(s(2, "?")), bool(s(3, "?")), int(s(4, "b")))
    if kind == _OPT_SOFTMAX:
        return ir.SoftmaxOptions(float(s(0, "f", 0.0)))
    if kind == _OPT_CONCATENATION:
        return ir.ConcatenationOptions(int(s(0, "i")), _act(s(1, "b"), where))
    if kind in (_OPT_ADD, _OPT_MUL, _OPT_SUB):
        return ir.ActivationOptions(_act(s(0, "b"), where))
    if kind == _OPT_RESHAPE:
        shape = None if t is None else t.numbers(0, "<i4", f"{where} new_shape")
        return ir.ReshapeOptions(_ints(shape))
    if kind == _OPT_SQUEEZE:
        dims = None if t is None else t.numbers(0, "<i4", f"{where} squeeze_dims")
        return ir.SqueezeOptions(_ints(dims))
    if kind == _OPT_STRIDED_SLICE:
        return ir.StridedSliceOptions(int(s(0, "i")), int(s(1, "i")), int(s(2, "i")),
                                      int(s(3, "i")), int(s(4, "i")), bool(s(5, "?")))
    if kind == _OPT_REDUCER:
        return ir.ReducerOptions(bool(s(0, "?")))
    if kind == _OPT_LEAKY_RELU:
        return ir.LeakyReluOptions(float(s(0, "f", 0.0)))
    if kind == _OPT_SVDF:
        return ir.SVDFOptions(int(s(0, "i")), _act(s(1, "b"), where), bool(s(2, "?")))
    if kind == _OPT_SEQUENCE_LSTM:
        return ir.SequenceLSTMOptions(_act(s(0, "b"), where), float(s(1, "f", 0.0)),
                                      float(s(2, "f", 0.0)), bool(s(3, "?")), bool(s(4, "?")),
                                      bool(s(5, "?")))
    if kind == _OPT_L2NORM:
        return ir.ActivationOptions(_act(s(0, "b"), where))
    if kind == _OPT_RESIZE_BILINEAR:
        return ir.ResizeOptions(bool(s(2, "?")), bool(s(3, "?")))
    if kind == _OPT_RESIZE_NEAREST:
        return ir.ResizeOptions(bool(s(0, "?")), bool(s(1, "?")))
    if kind in (_OPT_SPACE_TO_DEPTH, _OPT_DEPTH_TO_SPACE):
        return ir.BlockSizeOptions(int(s(0, "i")))
    if kind in (_OPT_SPLIT, _OPT_SPLIT_V):
        return ir.SplitOptions(int(s(0, "i")))
    if kind == _OPT_PACK:
        return ir.PackOptions(int(s(0, "i")), int(s(1, "i")))
    if kind == _OPT_TRANSPOSE_CONV:
        return ir.TransposeConvOptions(_padding(s(0, "b"), where), int(s(1, "i")),
                                       int(s(2, "i")), _act(s(3, "b"), where), int(s(4, "b")))
    if kind == _OPT_BATCH_MATMUL:
        return ir.BatchMatMulOptions(bool(s(0, "?")), bool(s(1, "?")), bool(s(2, "?")))
    if kind == _OPT_IF or kind == _OPT_WHILE:
        return ir.SubgraphOptions((int(s(0, "i")), int(s(1, "i"))))
    if kind == _OPT_CALL_ONCE:
        return ir.SubgraphOptions((int(s(0, "i")),))
    return None


# Ops whose options table is absent in some converters' output but whose defaults matter.
_OPTION_KIND_FOR_OP = {
    "CONV_2D": _OPT_CONV2D, "DEPTHWISE_CONV_2D": _OPT_DEPTHWISE,
    "AVERAGE_POOL_2D": _OPT_POOL2D, "MAX_POOL_2D": _OPT_POOL2D,
    "FULLY_CONNECTED": _OPT_FULLY_CONNECTED, "SOFTMAX": _OPT_SOFTMAX,
    "CONCATENATION": _OPT_CONCATENATION, "ADD": _OPT_ADD, "MUL": _OPT_MUL, "SUB": _OPT_SUB,
    "RESHAPE": _OPT_RESHAPE, "SQUEEZE": _OPT_SQUEEZE, "STRIDED_SLICE": _OPT_STRIDED_SLICE,
    "MEAN": _OPT_REDUCER, "SUM": _OPT_REDUCER, "REDUCE_MAX": _OPT_REDUCER,
    "LEAKY_RELU": _OPT_LEAKY_RELU, "SVDF": _OPT_SVDF,
    "UNIDIRECTIONAL_SEQUENCE_LSTM": _OPT_SEQUENCE_LSTM,
    "L2_NORMALIZATION": _OPT_L2NORM, "RESIZE_BILINEAR": _OPT_RESIZE_BILINEAR,
    "RESIZE_NEAREST_NEIGHBOR": _OPT_RESIZE_NEAREST, "SPACE_TO_DEPTH": _OPT_SPACE_TO_DEPTH,
    "DEPTH_TO_SPACE": _OPT_DEPTH_TO_SPACE, "SPLIT": _OPT_SPLIT, "SPLIT_V": _OPT_SPLIT_V,
    "PACK": _OPT_PACK, "TRANSPOSE_CONV": _OPT_TRANSPOSE_CONV, "BATCH_MATMUL": _OPT_BATCH_MATMUL,
    "REDUCE_MIN": _OPT_REDUCER,
}


def _read_buffers(buf: Buffer, model: Table) -> list[bytes | None]:
    out: list[bytes | None] = []
    for i, b in enumerate(model.tables(4, "buffers")):
        data = b.strings_as_bytes(0, f"buffer {i} data")
        if data is None:
            off = int(b.scalar(1, "Q", 0))
            size = int(b.scalar(2, "Q", 0))
            if off > 1 and size:
                buf.check(off, size, f"buffer {i} (offset {off}, size {size})")
                data = bytes(buf.view[off: off + size])
        out.append(data if data else None)
    return out


def _read_quant(t: Table | None, where: str, rank: int) -> ir.Quantization | None:
    if t is None:
        return None
    scale = t.numbers(2, "<f4", f"{where} scale")
    zp = t.numbers(3, "<i8", f"{where} zero_point")
    if scale is None or len(scale) == 0:
        return None
    scales = tuple(float(x) for x in scale)
    bad = next((s for s in scales if not np.isfinite(s) or s < 0), None)
    if bad is not None:
        raise FlatBufferError(f"{where}: quantization scale {bad!r} (scales must be finite and "
                              "not negative)")
    zps = _ints(zp) if zp is not None and len(zp) else (0,) * len(scales)
    if len(zps) == 1 and len(scales) > 1:
        zps = zps * len(scales)
    if len(zps) != len(scales):
        raise FlatBufferError(f"{where}: {len(scales)} scales but {len(zps)} zero points")
    axis = int(t.scalar(6, "i", 0))
    if len(scales) > 1 and not (0 <= axis < max(rank, 1)):
        # Known converter quirk (public person-detection model): a per-channel bias whose
        # quantized dimension does not fit its rank. Channels live on the last dimension.
        axis = max(rank - 1, 0)
    return ir.Quantization(scales, zps, axis)


class _SparseTensor(Exception):
    """A tensor stored in TFLite's sparse format: valid, but not something tinydeploy runs."""


def _read_tensor(i: int, t: Table, buffers: list[bytes | None], sg: int) -> ir.Tensor:
    where = f"subgraph {sg} tensor {i}"
    if t.table(6, f"{where} sparsity") is not None:
        raise _SparseTensor(f"{where} ('{t.string(3, f'{where} name') or i}')")
    shape = _ints(t.numbers(0, "<i4", f"{where} shape"))
    sig = t.numbers(7, "<i4", f"{where} shape_signature")
    tcode = int(t.scalar(1, "b", 0))
    try:
        dtype = ir.DType(tcode)
    except ValueError:
        raise FlatBufferError(f"{where}: unknown tensor type {tcode}") from None
    name = t.string(3, f"{where} name") or f"tensor_{i}"
    # A dynamic batch dimension (-1 in the signature, or in the shape itself) is fixed to 1:
    # the firmware runs one inference at a time on static shapes.
    if any(d < -1 for d in shape):
        raise FlatBufferError(f"{where} ('{name[:80]}'): negative dimension in shape {shape}")
    shape = tuple(1 if d < 0 else d for d in shape)
    if any(d > (1 << 24) for d in shape):
        raise FlatBufferError(f"{where} ('{name[:80]}'): implausible shape {shape}")
    try:
        check_tensor_size(where, name[:80], shape, dtype.itemsize)
    except ValueError as e:
        raise FlatBufferError(str(e)) from None
    bidx = int(t.scalar(2, "I", 0))
    if bidx >= len(buffers) and bidx != 0:
        raise FlatBufferError(f"{where} ('{name}'): buffer index {bidx} but the model has "
                              f"{len(buffers)} buffers")
    raw = buffers[bidx] if bidx < len(buffers) else None
    data = None
    if raw is not None:
        try:
            npdt = dtype.numpy
        except KeyError:
            npdt = None
        if npdt is not None:
            n = 1
            for d in shape:
                n *= d
            if len(raw) != n * npdt.itemsize:
                raise FlatBufferError(
                    f"{where} ('{name}'): constant data has {len(raw)} bytes, shape {shape} "
                    f"of {dtype.name} needs {n * npdt.itemsize}")
            data = np.frombuffer(raw, dtype=npdt).reshape(shape)
    return ir.Tensor(
        index=i, name=name, shape=shape, dtype=dtype,
        quant=_read_quant(t.table(4, f"{where} quantization"), where, len(shape)),
        data=data, is_variable=bool(t.scalar(5, "?", False)),
        shape_signature=_ints(sig) if sig is not None else None,
        buffer=bidx if raw is not None else 0,
    )


def _read_subgraph(sg: int, t: Table, opcodes: list[tuple[str, str | None, int]],
                   buffers: list[bytes | None]) -> ir.Subgraph:
    op_tables = t.tables(3, f"subgraph {sg} operators")
    if len(op_tables) > MAX_OPERATORS:    # before reading anything else: fail fast
        raise FlatBufferError(f"subgraph {sg} has {len(op_tables):,} operators; tinydeploy "
                              f"compiles at most {MAX_OPERATORS:,}")
    tensors = tuple(_read_tensor(i, tt, buffers, sg)
                    for i, tt in enumerate(t.tables(0, f"subgraph {sg} tensors")))
    n = len(tensors)

    def idx(arr: np.ndarray | None, what: str, allow_absent: bool) -> tuple[int, ...]:
        vals = _ints(arr)
        for v in vals:
            if v >= n or v < (-1 if allow_absent else 0):
                raise FlatBufferError(f"subgraph {sg} {what}: tensor index {v} out of range "
                                      f"(the subgraph has {n} tensors)")
        return vals

    ops = []
    for k, o in enumerate(op_tables):
        where = f"subgraph {sg} operator {k}"
        oc = int(o.scalar(0, "I", 0))
        if oc >= len(opcodes):
            raise FlatBufferError(f"{where}: opcode index {oc} but the model has "
                                  f"{len(opcodes)} operator codes")
        name, custom, version = opcodes[oc]
        kind = int(o.scalar(3, "B", 0))
        opt_table = o.table(4, f"{where} options")
        if not kind:
            kind = _OPTION_KIND_FOR_OP.get(name, 0)
            opt_table = None
        ops.append(ir.Operator(
            index=k, opcode=name, version=version,
            inputs=idx(o.numbers(1, "<i4", f"{where} inputs"), f"{where} inputs", True),
            outputs=idx(o.numbers(2, "<i4", f"{where} outputs"), f"{where} outputs", False),
            options=_parse_options(kind, opt_table, where),
            custom_code=custom,
            intermediates=idx(o.numbers(8, "<i4", f"{where} intermediates"),
                              f"{where} intermediates", True),
        ))
    return ir.Subgraph(
        name=t.string(4, f"subgraph {sg} name") or "",
        tensors=tensors,
        operators=tuple(ops),
        inputs=idx(t.numbers(1, "<i4", f"subgraph {sg} inputs"), "inputs", False),
        outputs=idx(t.numbers(2, "<i4", f"subgraph {sg} outputs"), "outputs", False),
    )


def _parse(data: bytes) -> ir.Graph:
    if len(data) < 8:
        raise FlatBufferError(f"the file has only {len(data)} bytes")
    if data[4:8] != FILE_IDENTIFIER:
        raise FlatBufferError("missing the TFLite file identifier 'TFL3' at byte 4")
    buf = Buffer(data)
    model = buf.root()
    version = int(model.scalar(0, "I", 0))
    opcodes: list[tuple[str, str | None, int]] = []
    for i, oc in enumerate(model.tables(1, "operator codes")):
        code = int(oc.scalar(3, "i", 0))
        dep = int(oc.scalar(0, "b", 0))
        code = max(code, dep)  # schema: builtin_code supersedes the deprecated i8 field
        name = BUILTIN_OPS.get(code, f"BUILTIN_{code}")
        custom = oc.string(1, f"operator code {i} custom_code")
        opcodes.append((name, custom, int(oc.scalar(2, "i", 1))))
    buffers = _read_buffers(buf, model)
    sgs = tuple(_read_subgraph(i, t, opcodes, buffers)
                for i, t in enumerate(model.tables(2, "subgraphs")))
    if not sgs:
        raise FlatBufferError("the model has no subgraph")
    try:
        check_subgraph(sgs[0], "subgraph 0")
    except ValueError as e:
        raise FlatBufferError(str(e)) from None
    metadata: dict[str, bytes] = {}
    for i, m in enumerate(model.tables(6, "metadata")):
        mname = m.string(0, f"metadata {i} name") or f"metadata_{i}"
        b = int(m.scalar(1, "I", 0))
        if b < len(buffers) and buffers[b] is not None:
            metadata[mname] = buffers[b]  # type: ignore[assignment]
    return ir.Graph(
        sha256=hashlib.sha256(data).hexdigest(),
        subgraphs=sgs,
        description=model.string(3, "description") or "",
        schema_version=version,
        metadata=metadata,
    )


def load_tflite(source: str | Path | bytes) -> ir.Graph:
    """Read a TFLite model from a path or bytes. Raises only `ModelError`."""
    if isinstance(source, (bytes, bytearray, memoryview)):
        label = "<bytes>"
        data = bytes(source)
    else:
        path = Path(source)
        label = str(path)
        if not path.exists():
            raise ModelError(f"{label}: no such file")
        if path.is_dir():
            raise ModelError(f"{label}: is a directory, not a .tflite file",
                             hint="a SavedModel directory must be converted first: "
                                  "tinydeploy quantize DIR --calibration DATA -o model.tflite")
        try:
            size = path.stat().st_size
            if size > MAX_MODEL_BYTES:
                raise ModelError(f"{label}: {size} bytes is larger than any microcontroller "
                                 "model tinydeploy accepts (2 GiB)")
            data = path.read_bytes()
        except OSError as e:
            raise ModelError(f"{label}: cannot read: {e.strerror or e}") from None
    if not data:
        raise ModelError(f"{label}: the file is empty")
    try:
        return _parse(data)
    except FlatBufferError as e:
        raise ModelError(f"{label}: not a valid TFLite model: {e}") from None
    except _SparseTensor as e:
        raise ModelError(f"{label}: {e} uses TFLite's sparse tensor storage, which tinydeploy "
                         "does not support",
                         hint="convert the model without sparsity (dense weights)") from None
    except (ValueError, OverflowError, MemoryError, TypeError, struct_error) as e:
        raise ModelError(f"{label}: not a valid TFLite model: {e}") from None
    except RecursionError:
        raise ModelError(f"{label}: not a valid TFLite model: nesting too deep") from None

