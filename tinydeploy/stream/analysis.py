"""Time-axis analysis of a graph: which part is local in time, where time is reduced.

A streamable graph is a chain: the input's time axis (the first non-batch axis, NHWC's H)
runs through ops that are local in time (CONV_2D, DEPTHWISE_CONV_2D, PAD that pads no time)
to one op that reduces all of time (AVERAGE_POOL_2D over the whole map); the ops after it
see no time. Per local op the analysis records, along time, the rows in and out, the
receptive field (kernel extent with dilation), the stride and the padding above and below,
as TFLite computes them for the full window. Anything else is refused with a `StreamError`
naming the op and the reason: the stage never guesses.
"""

from __future__ import annotations

from dataclasses import dataclass

from tinydeploy.errors import UnsupportedError
from tinydeploy.kernels.common import compute_padding
from tinydeploy.model.ir import (
    Conv2DOptions,
    DepthwiseConv2DOptions,
    Graph,
    Operator,
    Padding,
    Pool2DOptions,
)

# ops local in time that the step function runs on row windows
LOCAL_OPS = ("CONV_2D", "DEPTHWISE_CONV_2D", "PAD")
# the ops that may reduce all of time
REDUCING_OPS = ("AVERAGE_POOL_2D",)
# parameter structs whose contract is geometric along rows (td_kernels.h: in_h rows read
# from the pointer, pad_h rows of padding above, taps outside the rows skipped): a variant
# taking one of them runs on a row window with no change
ROW_WINDOW_PARAMS = ("td_conv2d_params_t", "td_dwconv2d_params_t", "td_pad_params_t")


class StreamError(UnsupportedError):
    """A graph (or one of its ops) that cannot be streamed; the message names the op and
    the reason."""


@dataclass(frozen=True)
class TimeLayer:
    """One op local in time, along the time axis (rows = positions along time)."""

    op_index: int
    op_type: str
    in_tensor: int
    out_tensor: int
    in_rows: int
    out_rows: int
    kernel: int           # receptive field of one output row in input rows (with dilation)
    stride: int
    pad_top: int          # TFLite's padding offset above the first row
    pad_bottom: int       # the rows of padding the last output row reads below the input
    in_row_bytes: int     # bytes of one input row (all other axes)
    out_row_bytes: int
    # a PAD of the feature axis folded into this convolution (its padding taps are skipped,
    # exactly what the PAD's zero-point values contribute): (PAD op, left, right columns);
    # in_tensor is then the PAD's input, the op's own input tensor `op_input`
    folded_pad: tuple[int, int, int] | None = None
    op_input: int = -1

    @property
    def kernel_input(self) -> int:
        """The tensor the op itself reads in the graph (its PAD's output when folded)."""
        return self.op_input if self.folded_pad else self.in_tensor


@dataclass(frozen=True)
class Reduction:
    """The op that reduces all of time (its input holds `rows` rows of `cols` x
    `channels`)."""

    op_index: int
    op_type: str
    in_tensor: int
    out_tensor: int
    rows: int
    cols: int
    channels: int


@dataclass(frozen=True)
class TimeAnalysis:
    axis: int                         # the input's time axis (1: NHWC's H)
    window: int                       # input rows (frames) in the full window
    input_tensor: int
    layers: tuple[TimeLayer, ...]     # the local chain, in op order
    reduction: Reduction
    after: tuple[int, ...]            # op indices after the reduction (no time left)

    @property
    def hop(self) -> int:
        """Input frames per step: the product of the time strides before the reduction."""
        h = 1
        for layer in self.layers:
            h *= layer.stride
        return h

    @property
    def receptive_field(self) -> int:
        """Input frames that one row of the reduction's input depends on."""
        field, jump = 1, 1
        for layer in self.layers:
            field += (layer.kernel - 1) * jump
            jump *= layer.stride
        return field


def _refuse(op: Operator, reason: str) -> StreamError:
    return StreamError(f"op {op.index} ({op.type_name}) cannot be streamed: {reason}")


def _row_bytes(shape: tuple[int, ...], axis: int, itemsize: int) -> int:
    n = itemsize
    for d in shape[axis + 1:]:
        n *= d
    return n


def analyze_time(graph: Graph, axis: int | None = None) -> TimeAnalysis:
    """The time-axis analysis of ``graph``; `StreamError` if it cannot be streamed.

    ``axis`` is the input's time axis (default: the first non-batch axis). The kernels run
    on rows of NHWC maps, so only axis 1 can be streamed; another axis is refused."""
    if len(graph.inputs) != 1 or len(graph.outputs) != 1:
        raise StreamError(f"a streamed model has one input and one output; this one has "
                          f"{len(graph.inputs)} and {len(graph.outputs)}")
    x = graph.inputs[0]
    if axis is None:
        axis = 1
    if len(x.shape) != 4:
        raise StreamError(f"input '{x.name}' has shape {list(x.shape)}: a streamed input is "
                          f"[1, time, features, channels]")
    if not 0 < axis < len(x.shape):
        raise StreamError(f"--stream-axis {axis} is not a non-batch axis of input "
                          f"'{x.name}' {list(x.shape)}")
    if axis != 1:
        raise StreamError(f"--stream-axis {axis}: the kernels run on rows (axis 1 of "
                          f"[1, H, W, C]); transpose the model so that time is axis 1")
    if x.shape[0] != 1:
        raise StreamError(f"input '{x.name}' has a batch of {x.shape[0]}; streaming needs 1")
    ops = graph.operators
    layers: list[TimeLayer] = []
    cur = x.index
    reduction: Reduction | None = None
    k = 0
    while k < len(ops):
        op = ops[k]
        arena_ins = [i for i in op.inputs if i >= 0 and graph.tensor(i).data is None]
        if cur not in arena_ins:
            raise _refuse(op, "it does not read the output of the op before it (a streamed "
                              "graph is one chain from the input to the time reduction)")
        if len(arena_ins) != 1 or len(op.outputs) != 1:
            raise _refuse(op, "it mixes several time-varying tensors (only chains are "
                              "streamed)")
        inp, out = graph.tensor(cur), graph.tensor(op.outputs[0])
        if op.type_name in REDUCING_OPS:
            reduction = _reduction(op, inp, out)
            break
        if op.type_name not in LOCAL_OPS:
            raise _refuse(op, f"it is not local in time (ops streamed: "
                              f"{', '.join(LOCAL_OPS)}; time reduced by "
                              f"{', '.join(REDUCING_OPS)})")
        layers.append(_layer(graph, op, inp, out))
        cur = out.index
        k += 1
    if reduction is None:
        raise StreamError(f"no op reduces time: the graph ends at tensor "
                          f"'{graph.tensor(cur).name}' with {graph.tensor(cur).shape[1]} rows "
                          f"(a streamed model pools all of time with "
                          f"{', '.join(REDUCING_OPS)})")
    after = tuple(op.index for op in ops[reduction.op_index + 1:])
    prev = reduction.out_tensor
    for i in after:
        op = ops[i]
        arena_ins = [t for t in op.inputs if t >= 0 and graph.tensor(t).data is None]
        if arena_ins != [prev]:
            raise _refuse(op, "after the time reduction only a chain of ops on its output "
                              "is supported")
        prev = op.outputs[0]
    an = TimeAnalysis(axis, x.shape[1], x.index, _fold_pads(graph, layers), reduction, after)
    return an


def _fold_pads(graph: Graph, layers: list[TimeLayer]) -> tuple[TimeLayer, ...]:
    """Fold each PAD of the feature axis into the convolution that reads it (no PAD call, no
    padded rows kept): the convolution skips padding taps, and the PAD's values are the zero
    point, which contribute nothing to it (input and output quantization of a PAD are
    equal). The kernel then sees the unpadded rows with its left padding grown."""
    from dataclasses import replace

    out: list[TimeLayer] = []
    k = 0
    while k < len(layers):
        lay = layers[k]
        nxt = layers[k + 1] if k + 1 < len(layers) else None
        if lay.op_type == "PAD" and nxt is not None and nxt.op_type in (
                "CONV_2D", "DEPTHWISE_CONV_2D") and nxt.folded_pad is None:
            pads = graph.tensor(graph.operators[lay.op_index].inputs[1]).data
            assert pads is not None
            p = pads.reshape(-1, 2)
            x, y = graph.tensor(lay.in_tensor), graph.tensor(lay.out_tensor)
            if not int(p[3].sum()) and x.quant == y.quant and _fold_exact(
                    graph, nxt, x.shape[2], int(p[2][0])):
                out.append(replace(nxt, in_tensor=lay.in_tensor, in_row_bytes=lay.in_row_bytes,
                                   folded_pad=(lay.op_index, int(p[2][0]), int(p[2][1])),
                                   op_input=nxt.in_tensor))
                k += 2
                continue
        out.append(lay)
        k += 1
    return tuple(out)


def _layer(graph: Graph, op: Operator, inp: object, out: object) -> TimeLayer:
    from tinydeploy.model.ir import Tensor

    assert isinstance(inp, Tensor) and isinstance(out, Tensor)
    if len(inp.shape) != 4 or len(out.shape) != 4:
        raise _refuse(op, f"its tensors are not 4-D [1, time, features, channels] "
                          f"({list(inp.shape)} -> {list(out.shape)})")
    if inp.dtype.itemsize != 1 or out.dtype.itemsize != 1:
        raise _refuse(op, "only int8 maps are streamed")
    rin, rout = inp.shape[1], out.shape[1]
    rb_in = _row_bytes(inp.shape, 1, 1)
    rb_out = _row_bytes(out.shape, 1, 1)
    if op.type_name == "PAD":
        pads = graph.tensor(op.inputs[1]).data
        if pads is None:
            raise _refuse(op, "its paddings are not constant")
        p = pads.reshape(-1, 2)
        if len(p) != 4 or int(p[0].sum()) or int(p[1].sum()):
            raise _refuse(op, f"it pads the batch or the time axis ({p.tolist()}); only "
                              f"padding of the other axes is local in time")
        return TimeLayer(op.index, op.type_name, inp.index, out.index, rin, rout, 1, 1, 0, 0,
                         rb_in, rb_out)
    opts = op.options
    assert isinstance(opts, (Conv2DOptions, DepthwiseConv2DOptions))
    filt = graph.tensor(op.inputs[1])
    fh = filt.shape[1]
    eff = (fh - 1) * opts.dilation_h + 1
    pad = compute_padding(opts.stride_h, opts.dilation_h, rin, fh, rout)
    if opts.padding == Padding.VALID:
        pad = 0
    bottom = max(0, (rout - 1) * opts.stride_h + eff - rin - pad)
    if rout < 1 or rin < eff - pad - bottom:
        raise _refuse(op, f"its window ({eff} rows) does not fit the {rin} rows it reads")
    return TimeLayer(op.index, op.type_name, inp.index, out.index, rin, rout, eff,
                     opts.stride_h, pad, bottom, rb_in, rb_out)


def _reduction(op: Operator, inp: object, out: object) -> Reduction:
    from tinydeploy.model.ir import Tensor

    assert isinstance(inp, Tensor) and isinstance(out, Tensor)
    opts = op.options
    assert isinstance(opts, Pool2DOptions)
    if len(inp.shape) != 4 or inp.dtype.itemsize != 1:
        raise _refuse(op, "only an int8 [1, time, features, channels] map can be reduced")
    _, h, w, c = inp.shape
    if opts.filter_h != h or opts.filter_w != w or tuple(out.shape[1:3]) != (1, 1):
        raise _refuse(op, f"it pools {opts.filter_h}x{opts.filter_w} of a {h}x{w} map into "
                          f"{out.shape[1]}x{out.shape[2]}: only a pool over all of time and "
                          f"features (one output row) reduces time")
    return Reduction(op.index, op.type_name, inp.index, out.index, h, w, c)


def _fold_exact(graph: Graph, conv: TimeLayer, width: int, left: int) -> bool:
    """A VALID convolution on the padded features equals the same convolution with TFLite's
    SAME rule along the features on the unpadded ones (same output width, same left
    padding): the form the kernels are prepared in."""
    from tinydeploy.kernels.common import compute_out_size

    opts = graph.operators[conv.op_index].options
    assert isinstance(opts, (Conv2DOptions, DepthwiseConv2DOptions))
    if opts.padding != Padding.VALID:
        return False
    fw = graph.tensor(graph.operators[conv.op_index].inputs[1]).shape[2]
    out_w = graph.tensor(conv.out_tensor).shape[2]
    same_w = compute_out_size(Padding.SAME, width, fw, opts.stride_w, opts.dilation_w)
    pad = compute_padding(opts.stride_w, opts.dilation_w, width, fw, same_w)
    return same_w == out_w and pad == left
