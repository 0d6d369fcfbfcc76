"""The arena of a streamed model: the step schedule's buffers, planned and proved.

Steps of the step program (the lifetimes' time axis): one per row call of the schedule, in
order, then the reduction, then one per op after it. Buffers:

- ``in``: the input's tail (the window rows the schedule keeps, the newest ``hop`` frames
  last, written by the application between steps); persistent;
- ``tail<i>`` / ``cone<i>``: the rows of chain tensor i that a step holds (see
  `tinydeploy.stream.schedule`); a tail with state rows is persistent, the rest transient;
- ``ring``: the reduction's exact per-row sums (a circular buffer) and their total;
  persistent;
- ``t<k>``: tensors after the reduction (its output first), and ``scratch<k>``: a streamed
  op's kernel scratch, live at that op's calls.

A persistent buffer lives from the first step to the last, so the planner's proof (no two
buffers live at a common step share a byte, `plan_arena`'s `verify_plan`) covers every state
row: nothing a later step reads is overwritten in between, and the application's writes into
the input between steps land in bytes nothing else owns.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tinydeploy.kernels.registry import Selection
from tinydeploy.model.ir import Graph
from tinydeploy.plan.arena import DEFAULT_ALIGN, ArenaPlan, Buffer, plan_arena
from tinydeploy.stream.schedule import StreamSchedule


@dataclass(frozen=True)
class StreamPlan:
    schedule: StreamSchedule
    buffers: tuple[Buffer, ...]
    plan: ArenaPlan
    steps: int                       # steps of the step program (lifetime axis)
    aliases: tuple[tuple[int, int], ...]   # tensor -> tensor whose buffer it shares
    selection: Selection             # the kernels the step function runs (row windows)
    costs: tuple[tuple[int, int], ...] = ()   # streamed op -> estimated instructions/step

    @property
    def arena_bytes(self) -> int:
        return self.plan.arena_bytes

    def offset(self, name: str) -> int:
        return self.plan.offset(name)

    def tensor_buffer(self, tensor: int) -> str:
        seen = dict(self.aliases)
        while tensor in seen:
            tensor = seen[tensor]
        return f"t{tensor}"

    @property
    def step_input_offset(self) -> int:
        """Arena offset where the application writes the newest ``hop`` frames."""
        t = self.schedule.tensors[0]
        return self.offset("in") + (t.new_first - t.tail_first) * t.row_bytes

    @property
    def persistent(self) -> tuple[Buffer, ...]:
        return tuple(b for b in self.buffers if b.first == 0 and b.last == self.steps - 1)


def tail_name(position: int) -> str:
    return "in" if position == 0 else f"tail{position}"


def cone_name(position: int) -> str:
    return f"cone{position}"


def stream_buffers(graph: Graph, selection: Selection, schedule: StreamSchedule,
                   align: int = DEFAULT_ALIGN
                   ) -> tuple[tuple[Buffer, ...], int, tuple[tuple[int, int], ...]]:
    """The buffers of the step program, its number of steps and the aliases after the
    reduction (see the module docstring)."""
    calls = schedule.calls
    red_step = len(calls)
    an = schedule.analysis
    after = an.after
    steps = red_step + 1 + len(after)
    last = steps - 1
    choices = {c.op_index: c for c in selection.choices}
    # first and last step of each transient tail/cone, from the calls that write and read it
    use: dict[str, list[int]] = {}

    def touch(name: str, step: int) -> None:
        use.setdefault(name, []).append(step)

    scratch: dict[str, tuple[int, list[int]]] = {}
    for k, c in enumerate(calls):
        pos_in, pos_out = c.layer, c.layer + 1
        touch(tail_name(pos_in) if c.in_region == "tail" else cone_name(pos_in), k)
        touch(tail_name(pos_out) if c.region == "tail" else cone_name(pos_out), k)
        op_index = an.layers[c.layer].op_index
        call = choices[op_index].call
        if call is not None and call.scratch_bytes:
            size, steps_of = scratch.setdefault(f"scratch{op_index}", (call.scratch_bytes, []))
            steps_of.append(k)
    n = len(an.layers)
    touch(tail_name(n), red_step)
    if schedule.reduction.top:
        touch(cone_name(n), red_step)
    buffers: list[Buffer] = []
    for t in schedule.tensors:
        name = tail_name(t.position)
        if t.persistent:
            buffers.append(Buffer(name, t.tail_bytes, 0, last, align))
        elif name in use:
            buffers.append(Buffer(name, t.tail_bytes, min(use[name]), max(use[name]), align))
        if t.position and t.cone:
            cn = cone_name(t.position)
            buffers.append(Buffer(cn, t.cone_bytes, min(use[cn]), max(use[cn]), align))
    if schedule.reduction.ring:
        buffers.append(Buffer("ring", schedule.reduction.ring_bytes, 0, last, align))
    for name, (size, at) in sorted(scratch.items()):
        buffers.append(Buffer(name, size, min(at), max(at), align))
    # after the reduction: its output and the ops on it (aliases share their source's bytes)
    aliases: list[tuple[int, int]] = []
    born = {an.reduction.out_tensor: red_step}
    died: dict[int, int] = {}
    for j, op_index in enumerate(after, start=red_step + 1):
        op = graph.operators[op_index]
        src = next(i for i in op.inputs if i >= 0 and graph.tensor(i).data is None)
        root = src
        amap = dict(aliases)
        while root in amap:
            root = amap[root]
        died[root] = j
        if choices[op_index].variant.alias:
            aliases.append((op.outputs[0], root))
        else:
            born[op.outputs[0]] = j
            call = choices[op_index].call
            if call is not None and call.scratch_bytes:
                buffers.append(Buffer(f"scratch{op_index}", call.scratch_bytes, j, j, align))
    out = graph.outputs[0].index
    amap = dict(aliases)
    root_out = out
    while root_out in amap:
        root_out = amap[root_out]
    for index, first in sorted(born.items()):
        end = last if index == root_out else died.get(index, first)
        buffers.append(Buffer(f"t{index}", graph.tensor(index).nbytes, first, end, align))
    return tuple(buffers), steps, tuple(aliases)


def plan_stream(graph: Graph, selection: Selection, schedule: StreamSchedule, *,
                capacity: int | None = None, algorithm: str = "auto",
                costs: dict[int, int] | None = None) -> StreamPlan:
    """Place the step program's buffers (`plan_arena`: verified, no overlap of buffers live
    at a common step; persistent ones are live at every step)."""
    buffers, steps, aliases = stream_buffers(graph, selection, schedule)
    plan = plan_arena(buffers, capacity=capacity, algorithm=algorithm)
    return StreamPlan(schedule, buffers, plan, steps, aliases, selection,
                      tuple(sorted((costs or {}).items())))


def choose_stream(graph: Graph, selection: Selection, board: Any, app: str, *,
                  stack_bytes: int, axis: int | None = None, keep: str | None = None,
                  algorithm: str = "auto", speed: bool = False) -> StreamPlan:
    """The streamed schedule for ``board``: keeping every layer's rows (least work) when its
    RAM budget fits the board, else keeping only the input window (least RAM); ``keep``
    forces one. A board where neither fits is a `BudgetError` with the figures. ``speed``:
    the streamed ops' kernels may store more constants (`select_streamed`)."""
    from tinydeploy.plan.budget import check_budget, compute_budget
    from tinydeploy.stream.schedule import KEEP, schedule_stream

    last: StreamPlan | None = None
    for k in ((keep,) if keep else KEEP):
        sched = schedule_stream(graph, axis, keep=k)
        streamed, costs = select_streamed(graph, selection, sched, board, speed=speed)
        splan = plan_stream(graph, streamed, sched, algorithm=algorithm, costs=costs)
        if getattr(board, "is_host", True):
            return splan
        budget = compute_budget(selection, splan.arena_bytes, board, app,
                                input_bytes=sched.input_rows_bytes,
                                stack_reserved=stack_bytes)
        if budget.fits:
            return splan
        last = splan
    assert last is not None
    check_budget(compute_budget(selection, last.arena_bytes, board, app,
                                input_bytes=last.schedule.input_rows_bytes,
                                stack_reserved=stack_bytes))
    return last


def step_instructions(splan: StreamPlan, per_op: dict[int, int]) -> int:
    """Estimated instructions of one step from the full window's per-op estimates
    (``per_op``: op index -> instructions of the whole window): each row call costs its
    share of output rows; the reduction costs one pass over the rows it sums; ops after
    the reduction cost what they cost."""
    sched = splan.schedule
    an = sched.analysis
    total = 0.0
    known = dict(splan.costs)
    for c in sched.calls:
        lay = an.layers[c.layer]
        if lay.op_index not in known:
            total += per_op.get(lay.op_index, 0) * c.out_rows / lay.out_rows
    total += sum(known.values())
    red = sched.reduction
    summed = red.top + red.new + red.bottom
    total += per_op.get(an.reduction.op_index, 0) * summed / max(red.rows, 1)
    total += 8 * red.new * red.channels             # the ring's update
    total += sum(per_op.get(i, 0) for i in an.after)
    total += sum(s.size for s in splan.persistent) // 4   # slides (word copies)
    return int(round(total))


def compare_schedules(graph: Graph, selection: Selection, per_op: dict[int, int],
                      full_arena: int, *, frame_ms: float, board: Any, app: str,
                      stack_bytes: int, axis: int | None = None, keep: str | None = None,
                      algorithm: str = "auto", speed: bool = False) -> dict[str, Any]:
    """Full window (an inference every hop) against the streamed schedule: instructions per
    step and per second of audio, arena and state bytes (JSON-ready)."""
    splan = choose_stream(graph, selection, board, app, stack_bytes=stack_bytes, axis=axis,
                          keep=keep, algorithm=algorithm, speed=speed)
    sched = splan.schedule
    steps_per_s = 1000.0 / (frame_ms * sched.hop)
    full = sum(per_op.values())
    step = step_instructions(splan, per_op)
    return {
        "hop_frames": sched.hop, "window_frames": sched.window, "frame_ms": frame_ms,
        "warmup_steps": sched.warmup_steps, "keep": sched.keep,
        "full_window": {"instructions_per_inference": full,
                        "instructions_per_second": int(full * steps_per_s),
                        "arena_bytes": full_arena, "state_bytes": 0},
        "streamed": {"per_step_instructions": step,
                     "instructions_per_second": int(step * steps_per_s),
                     "arena_bytes": splan.arena_bytes, "state_bytes": sched.state_bytes,
                     "input_rows_bytes": sched.input_rows_bytes},
    }


def folded_graph(graph: Graph, layer: Any, in_rows: int, out_rows: int) -> Graph:
    """The op of a layer with a folded PAD as the kernels run it: on the unpadded features,
    with TFLite's SAME rule (which gives the PAD's left padding, checked by the analysis),
    on ``in_rows`` -> ``out_rows`` rows (SAME along time too: the rows are patched per call
    anyway)."""
    from dataclasses import replace

    from tinydeploy.model.ir import Padding

    op = graph.operators[layer.op_index]
    tensors = list(graph.tensors)
    src, ti, to = (graph.tensor(layer.in_tensor), graph.tensor(layer.kernel_input),
                   graph.tensor(layer.out_tensor))
    tensors[ti.index] = replace(ti, shape=(ti.shape[0], in_rows, *src.shape[2:]))
    tensors[to.index] = replace(to, shape=(to.shape[0], out_rows, *to.shape[2:]))
    ops = list(graph.operators)
    ops[op.index] = replace(op, options=replace(op.options, padding=Padding.SAME))
    main = replace(graph.main, tensors=tuple(tensors), operators=tuple(ops))
    return replace(graph, subgraphs=(main, *graph.subgraphs[1:]))


def row_window_graph(graph: Graph, schedule: StreamSchedule, call_index: int) -> Graph:
    """``graph`` with the input and output of row call ``call_index``'s op cut to the rows
    of that call: the op a kernel variant sees on that window (for its checks and cost)."""
    from dataclasses import replace

    rc = schedule.calls[call_index]
    lay = schedule.analysis.layers[rc.layer]
    if lay.folded_pad:
        return folded_graph(graph, lay, rc.out_rows * lay.stride, rc.out_rows)
    tensors = list(graph.tensors)
    ti, to = graph.tensor(lay.kernel_input), graph.tensor(lay.out_tensor)
    tensors[ti.index] = replace(ti, shape=(ti.shape[0], rc.in_rows, *ti.shape[2:]))
    tensors[to.index] = replace(to, shape=(to.shape[0], rc.out_rows, *to.shape[2:]))
    main = replace(graph.main, tensors=tuple(tensors))
    return replace(graph, subgraphs=(main, *graph.subgraphs[1:]))


def _window_is_an_op(graph: Graph, schedule: StreamSchedule, call_index: int) -> bool:
    """True when row call ``call_index`` is its op on fewer rows: no padding along time
    inside the window, and the op's own padding rule gives the window's output rows."""
    from tinydeploy.kernels.common import compute_out_size
    from tinydeploy.model.ir import Conv2DOptions, DepthwiseConv2DOptions, Padding

    rc = schedule.calls[call_index]
    lay = schedule.analysis.layers[rc.layer]
    if lay.op_type == "PAD" or lay.folded_pad:
        return True
    opts = graph.operators[lay.op_index].options
    assert isinstance(opts, (Conv2DOptions, DepthwiseConv2DOptions))
    if rc.pad_top or (rc.out_rows - 1) * lay.stride + lay.kernel > rc.in_rows:
        return False
    if opts.padding != Padding.VALID:
        return False
    return compute_out_size(opts.padding, rc.in_rows, lay.kernel, lay.stride) == rc.out_rows


def select_streamed(graph: Graph, selection: Selection, schedule: StreamSchedule,
                    board: Any, speed: bool = False) -> tuple[Selection, dict[int, int]]:
    """Kernel variants for the streamed ops, chosen on their row windows.

    A kernel's speed on a full map says little about one row (set-up per call, lines
    along a row of five outputs): every variant the board has that accepts the op, takes a
    row-window parameter struct and accepts each of the op's row windows (as an op on those
    rows) is costed on its windows; the cheapest wins among those whose constants take no
    more flash than the full window's choice (under ``speed``, ``--optimize speed``, among
    all of them: flash is traded for speed, and the build's budget check counts the streamed
    selection's constants). Returns the selection and the estimated instructions per step of
    each streamed op."""
    from dataclasses import replace

    from tinydeploy.kernels.registry import KernelChoice
    from tinydeploy.plan.choose import _candidates, variant_cost
    from tinydeploy.stream.analysis import ROW_WINDOW_PARAMS

    features = frozenset(getattr(board, "features", ()) or ())
    by_op: dict[int, list[int]] = {}
    for k, rc in enumerate(schedule.calls):
        by_op.setdefault(schedule.analysis.layers[rc.layer].op_index, []).append(k)
    choices = list(selection.choices)
    costs: dict[int, int] = {}
    layers = {lay.op_index: lay for lay in schedule.analysis.layers}
    for op_index, calls in sorted(by_op.items()):
        lay = layers[op_index]
        base = graph
        if lay.folded_pad:
            base = folded_graph(graph, lay, lay.in_rows,
                                -(-lay.in_rows // lay.stride))
        op = base.operators[op_index]
        current = choices[op_index]
        base_consts = sum(int(c.values.nbytes) for c in current.call.consts) \
            if current.call is not None else 0
        full = {v.symbol: (v, call) for v, call, _ in _candidates(base, op, features)
                if call is not None and call.params_type in ROW_WINDOW_PARAMS}
        best: tuple[int, str] | None = None
        per_variant: dict[str, int] = {}
        for k in calls:
            if not _window_is_an_op(graph, schedule, k):
                # padding inside the window (an edge row call of a SAME op): no op on these
                # rows has this geometry; the variant's contract (ROW_WINDOW_PARAMS) covers
                # it, its cost is its full-window cost per output row
                rc = schedule.calls[k]
                lay = schedule.analysis.layers[rc.layer]
                for sym, (v, call) in full.items():
                    cost = variant_cost(base, op, v, call).instructions
                    per_variant[sym] = (per_variant.get(sym, 0)
                                        + cost * rc.out_rows // max(lay.out_rows, 1))
                continue
            g2 = row_window_graph(graph, schedule, k)
            ok: dict[str, int] = {}
            for v, call, vc in _candidates(g2, g2.operators[op_index], features):
                if call is None:
                    continue
                ok[v.symbol] = vc.instructions
                if v.estimate is not None and "in_h" in dict(call.params):
                    # the rows the step's call really reads (a folded PAD's window: the
                    # kernel rows inside, where the op above pads them)
                    rc = schedule.calls[k]
                    window = replace(call, params=tuple(
                        (n, {"in_h": rc.in_rows, "out_h": rc.out_rows,
                             "pad_h": rc.pad_top}.get(n, x)) for n, x in call.params))
                    ok[v.symbol] += v.estimate(window) - call.instructions
            for sym in list(full):
                if sym not in ok:
                    del full[sym]
                else:
                    per_variant[sym] = per_variant.get(sym, 0) + ok[sym]
        for sym, (_v, call) in full.items():
            consts = sum(int(c.values.nbytes) for c in call.consts)
            if consts > base_consts and not speed:
                continue
            key = (per_variant[sym], sym)
            if best is None or key < best:
                best = key
        if best is None:
            from tinydeploy.stream.analysis import StreamError

            raise StreamError(f"op {op_index} ({op.type_name}): no kernel variant takes its "
                              f"row windows")
        v, call = full[best[1]]
        choices[op_index] = KernelChoice(op_index, v, call)
        costs[op_index] = best[0]
    return Selection(tuple(choices)), costs
