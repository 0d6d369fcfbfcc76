"""Debug guards: which arena bytes each op may write, and which it must leave alone.

A guarded build (``tinydeploy build --guards``, ``validate --guards``) puts `GUARD_BYTES` of
canary before and after the arena and checks every op: before the op runs, every byte the
op has no business touching is either *free* at that op (filled with `CANARY`) or holds a
*live* buffer (hashed, FNV-1a 32); after it runs, the free bytes must still be the canary
and every live buffer must hash the same. A violation stops the firmware with one fault
line naming the op, its type and the region (`firmware/guard/td_guard.c`), which the host
reports as the reason the inference failed.

Why this and not just canary words at the arena's ends: the plan packs buffers tightly, so a
kernel writing one byte past its output or scratch usually lands in another buffer (its own
output right after its scratch, say), not at the arena's end. So a guarded build plans the
arena again with every buffer `GUARD_BYTES` longer (`guarded_plan`): those bytes after each
buffer belong to no buffer and are free at every op, canary words around every output,
scratch buffer and state tensor (the arena grows by about 16 bytes per buffer; only in this
debug build). A changed free byte is named exactly; a changed live buffer by its hash
(FNV-1a changes for any change of one byte).

Invariants (checked by `guard_plan` itself): for every op that runs a kernel, its own writes
(each output's bytes, each state input's bytes, its scratch buffer) and its regions
partition ``[-GUARD_BYTES, arena_bytes + GUARD_BYTES)`` exactly; regions are sorted and
disjoint; the guards before and after the arena are regions of their own at every op.
Alias ops run nothing and have no regions. Off by default: the default build renders no
guard code at all and stays byte-identical.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from tinydeploy.errors import TinydeployError
from tinydeploy.kernels.registry import Selection
from tinydeploy.model.ir import Graph
from tinydeploy.plan.arena import plan_arena
from tinydeploy.plan.lifetimes import GraphPlan, scratch_buffer_name, verify_inplace

GUARD_BYTES = 16          # a multiple of 16: the arena keeps its alignment
CANARY = 0x5C             # the byte every free region holds while an op runs
MAX_NAME = 40             # model names are shortened in labels (a LOG frame holds 255 bytes)
MAX_LABEL = 160           # labels reach C through c_string: no quotes, so names go in ()


@dataclass(frozen=True)
class GuardRegion:
    """Bytes ``[offset, offset + size)`` of the arena (negative: the guard before it) that
    op ``op_index`` must not change. ``live``: a live buffer, checked by its hash; else free
    bytes, checked against the canary."""

    op_index: int
    offset: int
    size: int
    live: bool
    label: str


@dataclass(frozen=True)
class GuardPlan:
    arena_bytes: int
    regions: tuple[GuardRegion, ...]   # sorted by (op, offset)
    num_ops: int

    @property
    def max_live(self) -> int:
        """The most live regions any one op has (the hash slots the device needs)."""
        counts: dict[int, int] = {}
        for r in self.regions:
            if r.live:
                counts[r.op_index] = counts.get(r.op_index, 0) + 1
        return max(counts.values(), default=0)


def _short(name: str) -> str:
    return name if len(name) <= MAX_NAME else name[:MAX_NAME - 3] + "..."


def _buffer_label(graph: Graph, name: str) -> str:
    if name.startswith("scratch"):
        return f"scratch buffer of op {name[len('scratch'):]}"
    if name.startswith("t") and name[1:].isdigit():
        return f"tensor ({_short(graph.tensor(int(name[1:])).name)})"
    return name


def _op_writes(graph: Graph, plan: GraphPlan, k: int) -> list[tuple[int, int, str]]:
    """(start, end, label) of every byte op ``k`` may write: its outputs, the state tensors
    it updates (inputs that are variables), its scratch buffer."""
    op = graph.operators[k]
    out: list[tuple[int, int, str]] = []
    for i in op.outputs:
        if i >= 0 and plan.buffer_of(i) is not None:
            t = graph.tensor(i)
            a = plan.tensor_offset(i)
            out.append((a, a + t.nbytes, f"output ({_short(t.name)}) of op {k}"))
    for i in op.inputs:
        if i >= 0 and graph.tensor(i).is_variable and plan.buffer_of(i) is not None:
            t = graph.tensor(i)
            a = plan.tensor_offset(i)
            out.append((a, a + t.nbytes, f"state ({_short(t.name)}) of op {k}"))
    if plan.has_scratch(k):
        p = plan.plan.placement(scratch_buffer_name(k))
        out.append((p.offset, p.offset + p.size - GUARD_BYTES, f"scratch buffer of op {k}"))
    return [w for w in out if w[1] > w[0]]


def guarded_plan(graph: Graph, selection: Selection, plan: GraphPlan,
                 algorithm: str = "auto") -> GraphPlan:
    """``plan`` made again with every buffer `GUARD_BYTES` longer: the bytes after each
    buffer are owned by nobody, so they are free (canary) at every op. The real size of a
    buffer is its size here minus `GUARD_BYTES`; in-place pairs keep their shifts."""
    padded = tuple(replace(b, size=b.size + GUARD_BYTES) for b in plan.buffers)
    gp = GraphPlan(plan_arena(padded, algorithm=algorithm), padded, plan.tensor_buffers,
                   plan.num_ops, plan.selection)
    verify_inplace(graph, plan.selection or selection, gp)
    return gp


def _op_regions(graph: Graph, plan: GraphPlan, k: int) -> list[GuardRegion]:
    arena = plan.arena_bytes
    lo, hi = -GUARD_BYTES, arena + GUARD_BYTES
    writes = _op_writes(graph, plan, k)
    live = [(p.offset, p.offset + p.size - GUARD_BYTES, p.name) for p in plan.plan.placements
            if p.first <= k <= p.last and p.size > GUARD_BYTES]
    cuts = {lo, 0, arena, hi}
    for a, b, _ in writes:
        cuts.update((a, b))
    for a, b, _ in live:
        cuts.update((a, b))
    points = sorted(c for c in cuts if lo <= c <= hi)
    # classify each elementary segment: a write of op k, a live buffer, or free
    segs: list[tuple[int, int, str, str]] = []       # (start, end, kind, name)
    for a, b in zip(points, points[1:], strict=False):
        if b <= a:
            continue
        w = next((lab for s, e, lab in writes if s <= a and b <= e), None)
        if w is not None:
            segs.append((a, b, "write", w))
            continue
        owners = [n for s, e, n in live if s <= a and b <= e]
        if len(owners) > 1:
            raise TinydeployError(f"op {k}: buffers {', '.join(sorted(owners))} overlap at "
                                  f"arena bytes [{a}, {b}) while all are live")
        if owners:
            segs.append((a, b, "live", owners[0]))
        elif a < 0:
            segs.append((a, b, "free", "the guard before the arena"))
        elif a >= arena:
            segs.append((a, b, "free", "the guard after the arena"))
        else:
            segs.append((a, b, "free", ""))
    # merge neighbours of one kind and owner; free gaps are named after what precedes them
    regions: list[GuardRegion] = []
    prev_label = "the start of the arena"
    cur: list | None = None
    for a, b, kind, name in segs:
        if cur is not None and cur[2] == kind and cur[3] == name and cur[1] == a:
            cur[1] = b
            continue
        if cur is not None:
            prev_label = _flush(graph, k, cur, regions, prev_label)
        cur = [a, b, kind, name]
    if cur is not None:
        _flush(graph, k, cur, regions, prev_label)
    return regions


def _flush(graph: Graph, k: int, seg: list, regions: list[GuardRegion], prev: str) -> str:
    a, b, kind, name = seg
    if kind == "write":
        return str(name)
    if kind == "live":
        label = f"live {_buffer_label(graph, name)}"
        regions.append(GuardRegion(k, a, b - a, True, f"{label} [{a}, {b})"))
        return label
    label = name or f"free bytes [{a}, {b}) after {prev}"
    regions.append(GuardRegion(k, a, b - a, False, label))
    return label


def guard_plan(graph: Graph, selection: Selection, plan: GraphPlan) -> GuardPlan:
    """Every op's guarded regions for a `guarded_plan` (see the module docstring); raises
    TinydeployError if two live buffers share a byte (which `plan_arena` never produces)."""
    regions: list[GuardRegion] = []
    lo, hi = -GUARD_BYTES, plan.arena_bytes + GUARD_BYTES
    for choice in selection.choices:
        if choice.call is None:
            continue
        k = choice.op_index
        mine = _op_regions(graph, plan, k)
        covered = sum(r.size for r in mine) + sum(
            b - a for a, b, _ in _merge(_op_writes(graph, plan, k)))
        if covered != hi - lo:
            raise TinydeployError(f"op {k}: guard regions cover {covered} bytes of "
                                  f"{hi - lo}")
        regions.extend(mine)
    return GuardPlan(plan.arena_bytes, tuple(regions), len(graph.operators))


def _merge(spans: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    out: list[tuple[int, int, str]] = []
    for a, b, lab in sorted(spans):
        if out and a <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], b), out[-1][2])
        else:
            out.append((a, b, lab))
    return out


def guard_context(graph: Graph, selection: Selection, plan: GraphPlan) -> dict[str, object]:
    """What `templates/model_guard.c.j2` renders: one row per region, each op's first row."""
    gp = guard_plan(graph, selection, plan)
    first = []
    n = 0
    by_op: dict[int, int] = {}
    for r in gp.regions:
        by_op[r.op_index] = by_op.get(r.op_index, 0) + 1
    for k in range(gp.num_ops + 1):
        first.append(n)
        n += by_op.get(k, 0)
    labels = sorted({r.label for r in gp.regions})
    index = {lab: i for i, lab in enumerate(labels)}
    rows = [{"op": r.op_index, "offset": r.offset, "size": r.size, "live": int(r.live),
             "label": index[r.label]} for r in gp.regions]
    return {"guard_bytes": GUARD_BYTES, "guard_canary": CANARY, "guard_rows": rows,
            "guard_first": first, "guard_labels": labels, "guard_max_live": gp.max_live}
