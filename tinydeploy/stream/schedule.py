"""The step schedule: per step and op the rows to compute, the buffers kept across steps.

Window coordinates: row r of tensor i is the r-th row along time of that tensor in the full
window (0 = oldest). Each step the window slides by ``hop`` input frames, which is
``hop_i`` = hop / (strides up to layer i) rows of tensor i (1 row of the reduction's input).

A row is *interior* when no padding enters its receptive field at any layer: its value then
depends only on absolute input frames, and it is the same in every window that holds it.
The other rows touch an edge: the first ``top_i`` rows read padding above the window (or
such rows), the last ``bottom_i`` padding below. Per step:

- the **tail** of each tensor: the newest interior rows (``hop_i``) and the bottom edge rows
  are computed; the older interior rows that the next layer's tail still reads are kept
  from earlier steps (the *state* rows) and slide by ``hop_i`` rows after the step.
- the **top cone** (only with padding above the window): the top edge rows of the
  reduction's input are recomputed every step, from the rows above them in every layer
  down to the input window, which is then kept whole (it is the only state they need).
- the reduction keeps, per interior row of its input, exact int16 per-channel sums (a
  circular ring, one slot replaced per step) and their int32 total; the output is that
  total plus the sums of the top cone rows and of the bottom edge rows, divided as the pool
  divides. A chain with no padding along time has no edge rows: it computes exactly its
  new rows and keeps no input window.

Warm-up: after ``warmup_steps`` steps every row the schedule keeps comes from frames the
application wrote, and each step's output equals the full window's over the last
``window`` frames.
"""

from __future__ import annotations

from dataclasses import dataclass

from tinydeploy.model.ir import Graph
from tinydeploy.stream.analysis import StreamError, TimeAnalysis, analyze_time


@dataclass(frozen=True)
class TensorRows:
    """The rows of one tensor of the chain that a step holds (tensor 0 = the input)."""

    position: int       # 0 = the input, i = output of layer i-1 of the chain
    tensor: int         # graph tensor index
    rows: int           # rows in the full window
    row_bytes: int
    top: int            # top edge rows (read padding above the window)
    bottom: int         # bottom edge rows
    hop: int            # rows the window slides per step
    cone: int           # top cone: rows [0, cone) recomputed every step (0: none)
    tail_first: int     # the tail buffer holds rows [tail_first, rows)
    new_first: int      # rows [new_first, rows) are computed (or written) each step
    persistent: bool    # the tail buffer lives across steps

    @property
    def tail_rows(self) -> int:
        return self.rows - self.tail_first

    @property
    def state_rows(self) -> int:
        """Rows kept from earlier steps (read this step, computed before)."""
        return self.new_first - self.tail_first

    @property
    def tail_bytes(self) -> int:
        return self.tail_rows * self.row_bytes

    @property
    def cone_bytes(self) -> int:
        return self.cone * self.row_bytes


@dataclass(frozen=True)
class RowCall:
    """One kernel call of layer ``layer`` on a window of rows: output rows
    [out_first, out_first + out_rows) from input rows [in_first, in_first + in_rows) with
    ``pad_top`` rows of padding above (rows past the input's end are padding below: the
    kernel skips taps at or past in_rows)."""

    layer: int          # index into TimeAnalysis.layers
    region: str         # "cone" or "tail" (the buffers read and written)
    out_first: int
    out_rows: int
    in_first: int
    in_rows: int
    pad_top: int
    in_region: str      # where the input rows are: "cone", "tail" (tensor 0: always tail)


@dataclass(frozen=True)
class ReductionRows:
    rows: int           # rows of the reduction's input
    cols: int
    channels: int
    top: int            # rows [0, top) come from the top cone
    ring: int           # interior rows whose sums are kept: [top, top + ring)
    new: int            # of them, the newest `new` are summed this step (the tail's first)
    bottom: int         # rows [rows - bottom, rows): bottom edge rows, from the tail

    @property
    def ring_bytes(self) -> int:
        """The ring of row sums, their int32 total per channel and the oldest slot's index
        (td_stream_avgpool_s8_ref's state)."""
        return self.ring * self.channels * RING_ITEM_BYTES + 4 * self.channels + 4

    @property
    def count(self) -> int:
        return self.rows * self.cols


@dataclass(frozen=True)
class StreamSchedule:
    analysis: TimeAnalysis
    hop: int                          # input frames per step
    window: int                       # input frames of the full window
    tensors: tuple[TensorRows, ...]   # position 0 = input .. len(layers) = reduction input
    calls: tuple[RowCall, ...]        # in execution order
    reduction: ReductionRows
    warmup_steps: int                 # steps until the output equals the full window's
    keep: str = "rows"                # what is kept across steps (see schedule_stream)

    @property
    def state_bytes(self) -> int:
        """Bytes that live across steps: the persistent tails and the ring of sums."""
        return (sum(t.tail_bytes for t in self.tensors if t.persistent)
                + self.reduction.ring_bytes)

    @property
    def input_rows_bytes(self) -> int:
        """Bytes the application writes per step (the newest ``hop`` frames)."""
        return self.hop * self.tensors[0].row_bytes

    def macs_fraction(self) -> float:
        """Rows computed per step over rows of a full window, weighted by output bytes."""
        full = sum(layer.out_rows * layer.out_row_bytes for layer in self.analysis.layers)
        done = sum(c.out_rows * self.analysis.layers[c.layer].out_row_bytes
                   for c in self.calls)
        return done / full if full else 0.0


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


KEEP = ("rows", "input")
RING_ITEM_BYTES = 2      # a row's sum over at most MAX_RING_COLS int8 values is exact in int16
MAX_RING_COLS = 255


def schedule_stream(graph: Graph, axis: int | None = None, keep: str = "rows"
                    ) -> StreamSchedule:
    """The step schedule of ``graph`` (see the module docstring); `StreamError` when the
    graph cannot be streamed or its window is too short for the receptive field.

    ``keep="rows"`` keeps the interior rows each layer's next step reads (least work);
    ``keep="input"`` keeps only the input window and the reduction's sums and recomputes
    the rest from the input every step (least RAM; with padding along time the cones
    recomputed anyway make the difference small)."""
    if keep not in KEEP:
        raise ValueError(f"keep must be one of {KEEP}, not {keep!r}")
    an = analyze_time(graph, axis)
    layers = an.layers
    n = len(layers)
    hop = an.hop
    red = an.reduction
    # Per tensor: rows, edges, hop (forward).
    rows = [an.window] + [lay.out_rows for lay in layers]
    top = [0] * (n + 1)
    bottom = [0] * (n + 1)
    hops = [hop] * (n + 1)
    for i, lay in enumerate(layers, start=1):
        t_in, b_in = top[i - 1], bottom[i - 1]
        top[i] = min(rows[i], _ceil_div(t_in + lay.pad_top, lay.stride))
        # row j reads input rows up to j*s - pad + kernel - 1
        last_clean = rows[i - 1] - b_in - 1      # the last input row that is not an edge
        first_dirty = 0
        while (first_dirty < rows[i]
               and first_dirty * lay.stride - lay.pad_top + lay.kernel - 1 <= last_clean):
            first_dirty += 1
        bottom[i] = rows[i] - first_dirty
        hops[i] = hops[i - 1] // lay.stride
        if hops[i] * lay.stride != hops[i - 1]:
            raise StreamError(f"op {lay.op_index} ({lay.op_type}): stride {lay.stride} "
                              f"along time does not divide the hop of {hops[i - 1]} rows")
    if red.cols > MAX_RING_COLS:
        raise StreamError(f"op {red.op_index} ({red.op_type}): a row of {red.cols} values "
                          f"per channel; the exact int16 row sums allow {MAX_RING_COLS}")
    interior = rows[n] - top[n] - bottom[n]
    if interior < hops[n]:
        raise StreamError(
            f"the window of {an.window} frames is too short to stream: the receptive field "
            f"is {an.receptive_field} frames and only {max(interior, 0)} of the "
            f"{rows[n]} rows the time reduction reads are clear of padding (at least "
            f"{hops[n]} must be)")
    # Backwards: which rows each tensor's tail must hold and compute.
    new_first = [0] * (n + 1)
    tail_first = [0] * (n + 1)
    new_first[n] = rows[n] - bottom[n] - hops[n]
    tail_first[n] = new_first[n]
    for i in range(n, 0, -1):
        lay = layers[i - 1]
        need = max(0, new_first[i] * lay.stride - lay.pad_top)
        fresh = rows[i - 1] - bottom[i - 1] - hops[i - 1]
        if i - 1 == 0:
            fresh = rows[0] - hops[0]
        if keep == "input" and i - 1 > 0:
            tail_first[i - 1] = new_first[i - 1] = need
        elif keep == "input" or need >= fresh:
            # nothing kept: the rows read are all computed (or written) this step
            if i - 1 == 0:
                tail_first[0], new_first[0] = min(need, fresh), fresh
            else:
                tail_first[i - 1] = new_first[i - 1] = need
        else:
            if need < top[i - 1]:
                raise StreamError(
                    f"op {lay.op_index} ({lay.op_type}): the rows its new output reads start "
                    f"at row {need} of {rows[i - 1]}, inside the {top[i - 1]} rows that touch "
                    f"the window's top edge (the window is too short for this receptive "
                    f"field)")
            tail_first[i - 1], new_first[i - 1] = need, fresh
    # Top cone (backwards from the reduction's top edge rows).
    cone = [0] * (n + 1)
    cone[n] = top[n]
    for i in range(n, 0, -1):
        lay = layers[i - 1]
        if cone[i]:
            cone[i - 1] = min(rows[i - 1],
                              (cone[i] - 1) * lay.stride - lay.pad_top + lay.kernel)
    if cone[0]:
        tail_first[0] = 0       # the input window is kept whole: the cone reads its top
    tensors = []
    for i in range(n + 1):
        t_index = an.input_tensor if i == 0 else layers[i - 1].out_tensor
        rb = layers[0].in_row_bytes if i == 0 and layers else (
            layers[i - 1].out_row_bytes if i else red.cols * red.channels)
        persistent = i == 0 or new_first[i] > tail_first[i]
        tensors.append(TensorRows(i, t_index, rows[i], rb, top[i], bottom[i], hops[i],
                                  cone[i] if i else 0, tail_first[i], new_first[i],
                                  persistent))
    # Op by op (the order the step function runs them, which the plan's lifetimes follow).
    calls: list[RowCall] = []
    for i, lay in enumerate(layers, start=1):
        if cone[i]:
            calls.append(_row_call(i - 1, "cone", 0, cone[i], lay, rows[i - 1],
                                   "cone" if i > 1 else "tail"))
        calls.append(_row_call(i - 1, "tail", new_first[i], rows[i] - new_first[i], lay,
                               rows[i - 1], "tail"))
    red_rows = ReductionRows(rows[n], red.cols, red.channels, top[n], interior, hops[n],
                             bottom[n])
    warmup = _ceil_div(an.window, hop)
    return StreamSchedule(an, hop, an.window, tuple(tensors), tuple(calls), red_rows, warmup,
                          keep)


def _row_call(layer: int, region: str, out_first: int, out_rows: int, lay: object,
              in_total: int, in_region: str) -> RowCall:
    from tinydeploy.stream.analysis import TimeLayer

    assert isinstance(lay, TimeLayer)
    start = out_first * lay.stride - lay.pad_top
    last = (out_first + out_rows - 1) * lay.stride - lay.pad_top + lay.kernel   # exclusive
    in_first = max(0, start)
    in_end = min(in_total, last)
    return RowCall(layer, region, out_first, out_rows, in_first, in_end - in_first,
                   in_first - start, in_region)
