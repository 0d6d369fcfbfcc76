"""From a graph and its kernel selection to arena buffers, and from buffers to a `GraphPlan`.

Op steps are operator indices (the file's execution order). Rules, all inclusive:

* a non-constant tensor lives from the op that writes it (graph inputs: step 0) to the last
  op that reads it (graph outputs: the last step, so the application can read them after
  ``td_model_invoke`` returns); a tensor that nothing reads lives at its producing step only;
* an alias (``variant.alias``: RESHAPE, SQUEEZE) has no bytes of its own: its output resolves to
  its input's buffer, whose lifetime grows to cover the alias's readers;
* variable tensors (``is_variable``, e.g. SVDF state) keep their contents between invocations,
  so they live for the whole program and are never overlapped;
* the scratch buffer of op k (``call.scratch_bytes``) lives at step k only;
* output 0 of an in-place variant (``variant.inplace``) is declared in-place over input 0 when
  that is safe: input 0 dies at this op, is not a graph input or output (the application owns
  those bytes around the call), is not variable and has exactly the output's size and element
  size (so element i of the output lands where element i of the input was read);
* output 0 of a variant with a declared access order (``variant.access``: depthwise and
  pointwise convolution) may overlap input 0 partially under the same conditions on input 0:
  the output leads or trails the input by the shift the order tolerates
  (`tinydeploy.kernels.access.tolerated_shifts`, on the alignment grid), chosen to keep the
  chain of overlapping buffers short; `verify_inplace` re-proves every placed overlap from the
  access order before a plan is returned. `plan_graph` also lays out the set with only the
  overlaps that steps above the first set's lower bound need (`buffer_sets`): a chain of
  overlaps is one rigid block, and breaking it where no step needs it lets the planner put
  an output at the other end of the arena instead (VWW's reference plan: 46,080 B, the
  lower bound, instead of 52,624 B).

Buffer names: tensor i's buffer is ``"t<i>"`` (an alias uses its source's), op k's scratch is
``"scratch<k>"``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from tinydeploy.boards import Board
from tinydeploy.errors import BudgetError
from tinydeploy.kernels.access import overlap_violation, tolerated_shifts
from tinydeploy.kernels.registry import Selection, variant_by_symbol
from tinydeploy.model.ir import DType, Graph, Tensor
from tinydeploy.plan.arena import (
    DEFAULT_ALIGN,
    DEFAULT_TIME_LIMIT_S,
    ArenaPlan,
    Buffer,
    check_capacity,
    live_bytes,
    lower_bound,
    plan_arena,
)


def tensor_buffer_name(index: int) -> str:
    return f"t{index}"


def scratch_buffer_name(op_index: int) -> str:
    return f"scratch{op_index}"


@dataclass(frozen=True)
class GraphBuffers:
    """The buffers of a graph and which buffer each arena tensor resolves to."""

    buffers: tuple[Buffer, ...]
    tensor_buffers: tuple[tuple[int, str], ...]  # (tensor index, buffer name), sorted
    num_ops: int
    selection: Selection   # the selection given, with twins put in where they overlap better


def _choices(selection: Any, num_ops: int) -> Sequence[Any]:
    choices = tuple(selection.choices)
    if len(choices) != num_ops:
        raise ValueError(f"kernel selection has {len(choices)} choices for {num_ops} ops")
    for k, c in enumerate(choices):
        if c.op_index != k:
            raise ValueError(f"kernel selection choice {k} is for op {c.op_index}")
    return choices


def graph_buffers(graph: Graph, selection: Selection, align: int = DEFAULT_ALIGN,
                  overlap_above: int | None = None) -> GraphBuffers:
    """All arena buffers of the main subgraph, with the tensor -> buffer map.

    ``overlap_above``: overlap an op's output with its input only where the bytes live at
    that op with the two apart exceed it (None: wherever it is safe). Each overlap ties the
    output to its input's offset, and a chain of them is one rigid block whose extent can
    exceed every step's live bytes (outputs drifting by each layer's lead); overlaps that no
    step needs leave the planner free to put outputs at the other end of the arena instead
    (`plan_graph` tries both)."""
    ops = graph.operators
    n = len(ops)
    end = max(n - 1, 0)
    choices = list(_choices(selection, n))
    tensors = graph.tensors
    inputs = set(graph.main.inputs)
    outputs = set(graph.main.outputs)

    # Resolve aliases in op order: an alias output becomes its input's root.
    root: dict[int, int] = {}

    def resolve(i: int) -> int:
        while i in root:
            i = root[i]
        return i

    for k, op in enumerate(ops):
        if choices[k].variant.alias and op.outputs and op.inputs and op.inputs[0] >= 0:
            root[op.outputs[0]] = resolve(op.inputs[0])

    first: dict[int, int] = {}
    last: dict[int, int] = {}

    def in_arena(i: int) -> bool:
        return i >= 0 and not tensors[i].is_constant

    def touch(i: int, step: int) -> None:
        first[i] = min(first.get(i, step), step)
        last[i] = max(last.get(i, step), step)

    for i in sorted(inputs):
        if in_arena(resolve(i)):
            touch(resolve(i), 0)
    for k, op in enumerate(ops):
        alias = choices[k].variant.alias
        for i in op.inputs:
            if in_arena(i) and in_arena(resolve(i)):
                touch(resolve(i), k)
        for i in op.outputs:
            if i >= 0 and not (alias and i in root) and in_arena(i):
                touch(resolve(i), k)
    for i in sorted(outputs):
        if in_arena(resolve(i)):
            touch(resolve(i), end)
    for t in tensors:
        if t.is_variable and not t.is_constant:
            first[t.index], last[t.index] = 0, end

    # In-place declarations: dst -> (src, shift of dst's offset from src's).
    inplace: dict[int, tuple[int, int]] = {}
    chain_root: dict[int, int] = {}            # tensor -> the first tensor of its chain
    rel: dict[int, int] = {}                   # tensor -> its offset from its chain's root
    extent: dict[int, tuple[int, int]] = {}    # chain root -> (lowest start, highest end)
    protected = {resolve(i) for i in inputs | outputs}
    sources = set()

    def padded(i: int) -> int:
        return -(-tensors[i].nbytes // align) * align

    apart = [0] * (end + 1)   # bytes live at each op with no overlap (a model without ops: step 0)
    if overlap_above is not None:
        for i in first:
            for k in range(first[i], last[i] + 1):
                apart[k] += padded(i)
        for k, c in enumerate(choices):
            apart[k] += -(-(c.call.scratch_bytes if c.call is not None else 0) // align) * align

    for k, op in enumerate(ops):
        v = choices[k].variant
        if not (v.inplace or v.access is not None) or v.alias or not op.inputs or not op.outputs:
            continue
        if overlap_above is not None and apart[k] <= overlap_above:
            continue
        src, dst = op.inputs[0], op.outputs[0]
        if not (in_arena(src) and in_arena(dst)) or dst in root:
            continue
        src = resolve(src)
        s, d = tensors[src], tensors[dst]
        others = [resolve(i) for i in op.inputs[1:] if in_arena(i)]
        if (src in protected or src in sources or s.is_variable or d.is_variable
                or last.get(src) != k or first.get(dst) != k or src in others
                or len([i for i in op.outputs if i >= 0]) != 1):
            continue
        picked = _inplace_choice(choices[k], graph, op, s, d, align, rel.get(src, 0),
                                 extent.get(chain_root.get(src, src), (0, padded(src))))
        if picked is None:
            continue
        choices[k], shift = picked
        inplace[dst] = (src, shift)
        sources.add(src)
        r0 = chain_root.setdefault(src, src)
        chain_root[dst] = r0
        rel.setdefault(src, 0)
        rel[dst] = rel[src] + shift
        lo, hi = extent.get(r0, (0, padded(src)))
        extent[r0] = (min(lo, rel[dst]), max(hi, rel[dst] + padded(dst)))

    buffers = [
        Buffer(tensor_buffer_name(i), tensors[i].nbytes, first[i], last[i], align,
               tensor_buffer_name(inplace[i][0]) if i in inplace else None,
               inplace[i][1] if i in inplace else 0)
        for i in sorted(first)
    ]
    for k, c in enumerate(choices):
        scratch = c.call.scratch_bytes if c.call is not None else 0
        if scratch > 0:
            buffers.append(Buffer(scratch_buffer_name(k), scratch, k, k, align))
    mapping = []
    for t in tensors:
        r = resolve(t.index)
        if r in first:
            mapping.append((t.index, tensor_buffer_name(r)))
    return GraphBuffers(tuple(buffers), tuple(mapping), n, Selection(tuple(choices)))


def _inplace_choice(choice: Any, graph: Graph, op: Any, src: Tensor, dst: Tensor, align: int,
                    src_rel: int, chain: tuple[int, int]) -> tuple[Any, int] | None:
    """The kernel choice and the offset of ``dst`` from ``src`` for an in-place op, or None
    to keep them apart.

    Elementwise variants (``inplace``) need the same offset, same size and element size.
    A variant with a declared access order, or one of its ``twins`` (same bytes, same cost,
    another order), may take any shift its order proves safe (`overlap_violation`); the
    candidates are its tightest lead and trail (`tolerated_shifts`, on the alignment grid) and
    the shifts that put ``dst`` at the bottom or the top of the in-place chain so far
    (``chain`` = the chain's lowest start and highest end, ``src_rel`` = src's offset in it).
    The candidate that grows the chain's extent the least wins; ties: the one nearer the
    chain's top (front-to-back kernels, the common case, need room below their input for
    the output they lead with), the smaller footprint of the pair, the selected variant
    before its twins, the lead before the trail. An
    overlap that saves nothing over two separate buffers is not taken."""
    variant = choice.variant
    if variant.access is None:
        if src.nbytes != dst.nbytes or src.dtype.itemsize != dst.dtype.itemsize:
            return None
        return choice, 0
    if choice.call is None or src.dtype != DType.INT8 or dst.dtype != DType.INT8:
        return None
    ps = -(-src.nbytes // align) * align
    pd = -(-dst.nbytes // align) * align
    lo, hi = chain
    candidates = [choice] + [replace(choice, variant=t, call=call)
                             for t, call in _twin_calls(graph, op, variant)]
    best: tuple[tuple[int, int, int, int, int], Any, int] | None = None
    for vrank, cand in enumerate(candidates):
        facts = _order_facts(cand.variant, cand.call)
        order = facts.order
        if order.in_bytes != src.nbytes or order.out_bytes != dst.nbytes:
            raise ValueError(f"{cand.variant.symbol}: access order covers {order.in_bytes} "
                             f"-> {order.out_bytes} bytes, tensors '{src.name}' -> "
                             f"'{dst.name}' have {src.nbytes} -> {dst.nbytes}")
        lead, trail = facts.tolerated(align)
        shifts = [lead, trail, lo - src_rel, hi - pd - src_rel]
        for srank, shift in enumerate(shifts):
            if srank >= 2 and not facts.safe(shift):
                continue
            together = max(ps, shift + pd) - min(0, shift)
            if together >= ps + pd:
                continue
            grown = max(hi, src_rel + shift + pd) - min(lo, src_rel + shift) - (hi - lo)
            below_top = max(hi, src_rel + shift + pd) - pd - (src_rel + shift)
            key = (grown, below_top, together, vrank, srank)
            if best is None or key < best[0]:
                best = (key, cand, shift)
    return None if best is None else (best[1], best[2])


@dataclass
class _OrderFacts:
    """A call's access order, its tolerated shifts per alignment grid and the verdicts on
    other shifts asked so far: what `_inplace_choice` asks of every in-place candidate, each
    time a selection is laid out (the kernel search lays out hundreds)."""

    order: Any
    shifts: dict[int, tuple[int, int]]
    verdicts: dict[int, bool]

    def tolerated(self, align: int) -> tuple[int, int]:
        if align not in self.shifts:
            self.shifts[align] = tolerated_shifts(self.order, align)
        return self.shifts[align]

    def safe(self, shift: int) -> bool:
        if shift not in self.verdicts:
            self.verdicts[shift] = overlap_violation(self.order, shift) is None
        return self.verdicts[shift]


# Memos keyed by object identity, each entry holding its key objects (so that an id is not
# reused while its entry lives); cleared when they grow past _MEMO_LIMIT entries or their
# access orders past _MEMO_BYTES (a process that plans model after model, as the fuzzer does,
# would otherwise keep every model's orders and graphs: about 1 GB after 100,000 models).
# Calls and graphs are frozen, so a fact computed once holds for as long as the object lives.
_MEMO_LIMIT = 1024
_MEMO_BYTES = 64 << 20
_ORDERS: dict[tuple[int, str], tuple[Any, _OrderFacts]] = {}
_ORDER_BYTES = [0]
_TWINS: dict[tuple[int, int, str], tuple[Graph, Any, list[tuple[Any, Any]]]] = {}


def _order_facts(variant: Any, call: Any) -> _OrderFacts:
    key = (id(call), variant.symbol)
    hit = _ORDERS.get(key)
    if hit is not None and hit[0] is call:
        return hit[1]
    facts = _OrderFacts(variant.access(call), {}, {})
    size = int(facts.order.last_read.nbytes + facts.order.write_step.nbytes)
    if len(_ORDERS) >= _MEMO_LIMIT or _ORDER_BYTES[0] + size > _MEMO_BYTES:
        _ORDERS.clear()
        _ORDER_BYTES[0] = 0
    _ORDERS[key] = (call, facts)
    _ORDER_BYTES[0] += size
    return facts


def _twin_calls(graph: Graph, op: Any, variant: Any) -> list[tuple[Any, Any]]:
    """The twins of ``variant`` that accept ``op``, each with its prepared call."""
    key = (id(graph), op.index, variant.symbol)
    hit = _TWINS.get(key)
    if hit is not None and hit[0] is graph and hit[1] is op:
        return hit[2]
    twins = (variant_by_symbol(variant.op, name) for name in variant.twins)
    out = [(t, t.prepare(graph, op)) for t in twins if t.accepts(graph, op) is None]
    if len(_TWINS) >= _MEMO_LIMIT:
        _TWINS.clear()
    _TWINS[key] = (graph, op, out)
    return out


def verify_inplace(graph: Graph, selection: Selection, gplan: GraphPlan) -> None:
    """The per-op proof of every partial overlap in ``gplan``: for each op whose output 0
    shares bytes with its input 0 at the placed offsets, the variant's declared access order
    shows no input byte is overwritten before its last read. Raises AssertionError naming
    the op, the bytes and the steps otherwise (an elementwise same-offset pair needs the same
    size and element size)."""
    choices = _choices(selection, len(graph.operators))
    for k, op in enumerate(graph.operators):
        v = choices[k].variant
        if v.alias or not op.inputs or not op.outputs or op.inputs[0] < 0 or op.outputs[0] < 0:
            continue
        bi, bo = gplan.buffer_of(op.inputs[0]), gplan.buffer_of(op.outputs[0])
        if bi is None or bo is None or bi == bo:
            continue
        pi, po = gplan.plan.placement(bi), gplan.plan.placement(bo)
        if pi.offset + pi.size <= po.offset or po.offset + po.size <= pi.offset:
            continue
        if pi.size == 0 or po.size == 0:
            continue
        shift = po.offset - pi.offset
        src, dst = graph.tensor(op.inputs[0]), graph.tensor(op.outputs[0])
        where = f"op {k} ({op.type_name}, {v.symbol})"
        if v.access is None:
            if not (v.inplace and shift == 0 and src.nbytes == dst.nbytes
                    and src.dtype.itemsize == dst.dtype.itemsize):
                raise AssertionError(f"{where}: output overlaps input at shift {shift} "
                                     f"without a declared access order")
            continue
        bad = overlap_violation(_order_facts(v, choices[k].call).order, shift)
        if bad is not None:
            raise AssertionError(
                f"{where}: output byte {bad.out_byte} (written at step {bad.write_step}) "
                f"overwrites input byte {bad.in_byte} before its last read at step "
                f"{bad.last_read} (output {shift:+d} bytes from the input)")


def buffers_from_graph(graph: Graph, selection: Selection, align: int = DEFAULT_ALIGN
                       ) -> tuple[Buffer, ...]:
    """The arena buffers of ``graph`` (see the module docstring for the lifetime rules)."""
    return graph_buffers(graph, selection, align).buffers


@dataclass(frozen=True)
class GraphPlan:
    """An arena plan for one graph: where each tensor and scratch buffer lives."""

    plan: ArenaPlan
    buffers: tuple[Buffer, ...]
    tensor_buffers: tuple[tuple[int, str], ...]
    num_ops: int
    selection: Selection | None = None   # the kernels this layout is safe for (see plan_graph)

    @property
    def arena_bytes(self) -> int:
        return self.plan.arena_bytes

    @property
    def lower_bound_bytes(self) -> int:
        return self.plan.lower_bound_bytes

    def buffer_of(self, tensor_index: int) -> str | None:
        """The buffer holding a tensor (its alias source's for an alias), or None when the
        tensor is not in the arena (constant, or unused)."""
        for i, name in self.tensor_buffers:
            if i == tensor_index:
                return name
        return None

    def tensor_offset(self, tensor_index: int) -> int:
        name = self.buffer_of(tensor_index)
        if name is None:
            raise KeyError(f"tensor {tensor_index} has no arena buffer (constant or unused)")
        return self.plan.offset(name)

    def scratch_offset(self, op_index: int) -> int:
        return self.plan.offset(scratch_buffer_name(op_index))

    def has_scratch(self, op_index: int) -> bool:
        name = scratch_buffer_name(op_index)
        return any(b.name == name for b in self.buffers)

    def live_bytes(self) -> tuple[int, ...]:
        """Aligned bytes live at each op step (in-place pairs counted once)."""
        live = list(live_bytes(self.buffers))
        return tuple(live + [0] * (self.num_ops - len(live)))

    @property
    def peak_op(self) -> int:
        """The first op at which the live bytes are largest."""
        live = self.live_bytes()
        return live.index(max(live)) if live else 0


def plan_graph(graph: Graph, selection: Selection, board: Board | None = None,
               algorithm: str = "auto",
               align: int = DEFAULT_ALIGN, time_limit_s: float = DEFAULT_TIME_LIMIT_S
               ) -> GraphPlan:
    """Plan the arena of ``graph``. With a ``board``, an arena larger than its RAM is a
    BudgetError naming the board (the full RAM/flash budget is `plan.budget`'s job).

    The returned plan's ``selection`` is the one to generate code from: ``selection`` with
    a variant's twin (same bytes, same cost, another access order) put in where that lets
    an output overlap its input better. The layout is proved safe for it only."""
    best: GraphPlan | None = None
    for gb in buffer_sets(graph, selection, align):
        plan = plan_arena(gb.buffers, algorithm=algorithm, time_limit_s=time_limit_s)
        if best is None or plan.arena_bytes < best.arena_bytes:
            best = GraphPlan(plan, gb.buffers, gb.tensor_buffers, gb.num_ops, gb.selection)
    assert best is not None
    if board is not None:
        try:
            check_capacity(best.buffers, best.plan, board.ram_bytes)
        except BudgetError as e:
            raise BudgetError(f"board '{board.id}': {e.message}", hint=e.hint) from None
    verify_inplace(graph, best.selection or selection, best)
    return best


def buffer_sets(graph: Graph, selection: Selection, align: int = DEFAULT_ALIGN
                ) -> list[GraphBuffers]:
    """The buffer sets the planner lays out for a selection, the smallest arena of which is
    kept (ties: the first): every safe overlap taken, then, when it differs, only the
    overlaps the steps above the first set's lower bound need (``overlap_above``), which
    has the same lower bound and no longer chains."""
    every = graph_buffers(graph, selection, align)
    fewer = graph_buffers(graph, selection, align, overlap_above=lower_bound(every.buffers))
    return [every] if fewer.buffers == every.buffers else [every, fewer]
