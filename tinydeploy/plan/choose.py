"""Kernel selection that weighs the board's budget: ``--optimize {balanced,speed,size}``.

`tinydeploy.kernels.registry.select_kernels` picks by priority alone. Here every variant
that accepts an op is costed (instructions, flash, scratch) and one is chosen per op for the
requested trade-off, then the arena is planned and checked against the plan of the
reference kernels:

* ``speed``: the fewest instructions per op, within the board's RAM;
* ``size``: the least flash per op (constants + code), then the least scratch, then the
  fewest instructions;
* ``balanced`` (the default): the fewest instructions among the variants whose constants
  take no more flash than the reference kernel's (int8 weights: a layout that widens the
  weights is a speed-for-flash trade that only ``speed`` makes), and among those a variant
  that stores more constants than the one with the fewest must save at least
  `BALANCED_INSTRUCTIONS_PER_BYTE` (8) estimated instructions per inference for each extra
  byte: derived tables that buy a few hundred instructions are left to ``speed`` (int8
  SOFTMAX over 12 classes: the 1,024 B exp table of ``td_softmax_s8_ref`` saves ~3,200
  instructions, so ``td_softmax_s8_exp_ref`` computes the exp; over 1,000 classes the table
  saves ~264,000 and is kept). The cap is the constants of the reference kernel that priority
  selection takes, not of a lower-priority ref variant with fewer. Code is weighed the same
  way, per kernel rather than per op (a kernel's code is linked once however many layers
  run it): a kernel whose code, above that of the next choice of every layer it serves,
  saves fewer than 8 instructions per byte over all those layers is replaced by that choice
  (`_lean_code`; the DS-CNN's classifier: the DSP FULLY_CONNECTED's 2 KB more code saves
  ~10,400 instructions of 3.0 M, the reference kernel runs it).

The arena each mode may use (`arena_limit`): ``balanced`` and ``size`` at most R, the
reference kernels' plan (DESIGN, invariant 6: by default no kernel buys speed with arena);
``speed`` the room the board's RAM leaves beside the stack the build reserves (the estimated
bound plus its margin), the application's buffers and the static data (`board_arena_room`:
person_detect on the 96 KB nucleo-f401re may use ~58 KB where R is 36,880 B, and its
widening pointwise layers take the dsp kernels: 11.5 M instructions measured against 13.3 M
for balanced); ``--arena-limit`` replaces the mode's limit. R is planned by the same
planner as the selection, so a better placement lowers R too: the VWW model's R is 46,080 B
(its lower bound: the 96x96x3 input and the first layer's output, both live at op 0). No
byte is left at op 0 for scratch, so ``td_conv2d_s8_dsp`` keeps the first layer's 336 B of
work in its frame (it does for any work up to 512 B, the pointwise kernels' frame buffer).
The DS-CNN on the Cortex-M0 fits R = 8,496 B with the portable pointwise kernel and its
back-to-front twin. docs/benchmarks.md has the measured figures.

Within the limit, the selection of least total cost (instructions, then flash; ``size``:
flash, then instructions) is searched for, not built one op at a time: the ops interact
through the in-place chains of their access orders (`search_selection`). When the cheapest
choice per op already fits, that is the answer after one plan. When the chosen build does
not fit the board's RAM or flash, ``speed`` falls back to ``balanced`` and ``balanced`` to
``size`` (reported in `Choice.fallback`). Every `Choice` reports R, its limit and how many
selections were planned. When the search runs out of plans (`SEARCH_PLANS`: person_detect's
balanced selection, where many cheap selections miss R by a few bytes), the repair
(`_demote_to_reference`) demotes kernels until the arena fits and `_improve` then puts back
the most saving kernels that still fit.

Costs: a variant's call may carry an ``instructions`` estimate (measured per-MAC models of
the optimised kernels); otherwise a per-MAC, per-output and per-input-element model by
implementation (`PER_MAC`, `PER_OUTPUT`, `PER_INPUT`, from QEMU icount measurements of the
DS-CNN's layers on the Cortex-M4), plus `CALL_INSTRUCTIONS` per call. The estimates are
checked op by op against `bench`'s measurements (benchmarks/bench_costs.py,
tests/test_cost_models.py: within 15 %). Flash is the op's constants (byte-identical arrays
counted once, as codegen stores them) plus the code-size table of `tinydeploy.plan.budget`.
"""

from __future__ import annotations

import enum
import heapq
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any

from tinydeploy.errors import BudgetError, UnsupportedError
from tinydeploy.kernels.access import AccessOrder, tolerated_shifts
from tinydeploy.kernels.registry import (
    KernelChoice,
    KernelVariant,
    Selection,
    select_kernels,
    variant_by_symbol,
)
from tinydeploy.kernels.registry import variants as registered_variants
from tinydeploy.model.analysis import op_macs
from tinydeploy.model.ir import Graph, Operator
from tinydeploy.plan.arena import ArenaPlan, Buffer, lower_bound, plan_arena
from tinydeploy.plan.budget import (
    CONST_ALIGN,
    IMPL_CODE_FACTOR,
    KERNEL_CODE,
    KERNEL_CODE_DEFAULT,
    KERNEL_CODE_DSP,
)
from tinydeploy.plan.lifetimes import (
    GraphBuffers,
    GraphPlan,
    buffer_sets,
    graph_buffers,
    plan_graph,
    verify_inplace,
)

# instructions per multiply-accumulate and per output element, by implementation
PER_MAC: dict[str, float] = {"ref": 14.0, "dsp": 1.4, "mve": 0.45}
PER_OUTPUT: dict[str, float] = {"ref": 40.0, "dsp": 30.0, "mve": 12.0, "alias": 0.0}
# ... and per element read from a non-constant input: what ops without multiply-accumulates
# (pooling, elementwise) cost; the reference average pool reads ~12 instructions per input
# element on the Cortex-M4 (DS-CNN: 98,400 for 8,000 inputs, QEMU icount)
PER_INPUT: dict[str, float] = {"ref": 12.0, "opt": 6.0, "dsp": 3.0, "mve": 1.0, "alias": 0.0}
# ... and per call of any kernel: the parameter struct, the loop set-up and the per-op counter
# of the bench app, which the per-MAC models leave out (person_detect's 2-class SOFTMAX:
# 357 measured with the table, 994 computing the exp, for 104 and 632 without it)
CALL_INSTRUCTIONS = 250


class Optimize(enum.Enum):
    BALANCED = "balanced"
    SPEED = "speed"
    SIZE = "size"


OPTIMIZE_CHOICES: tuple[str, ...] = tuple(o.value for o in Optimize)


@dataclass(frozen=True)
class VariantCost:
    """What one variant costs for one op: estimated instructions per inference, flash of its
    constants and code, scratch bytes in the arena."""

    symbol: str
    impl: str
    instructions: int
    const_bytes: int
    code_bytes: int
    scratch_bytes: int

    @property
    def flash_bytes(self) -> int:
        return self.const_bytes + self.code_bytes


@dataclass(frozen=True)
class LayerChoice:
    """One op: the chosen variant's cost and every alternative's, with the reason an
    alternative was passed over (None for the chosen one)."""

    op_index: int
    op_type: str
    chosen: str
    alternatives: tuple[tuple[VariantCost, str | None], ...]


@dataclass(frozen=True)
class Choice:
    """The selection and plan for a requested trade-off (see the module docstring)."""

    optimize: Optimize
    selection: Selection
    plan: GraphPlan
    reference_arena_bytes: int
    layers: tuple[LayerChoice, ...]
    arena_limit_bytes: int | None = None   # R (`arena_limit`); None only in hand-made ones
    fallback: str | None = None   # e.g. "speed does not fit: balanced"
    plans: int = 1   # selections planned to find this one (the search's work)


def _const_bytes(call: Any) -> int:
    seen, total = set(), 0
    for c in call.consts:
        if c.key not in seen:
            seen.add(c.key)
            total += -(-int(c.values.nbytes) // CONST_ALIGN) * CONST_ALIGN
    return total


def variant_cost(graph: Graph, op: Operator, variant: KernelVariant, call: Any) -> VariantCost:
    """The cost model of the module docstring for ``variant`` prepared as ``call``."""
    if variant.alias or call is None:
        return VariantCost(variant.symbol, variant.impl, 0, 0, 0, 0)
    instructions = int(getattr(call, "instructions", 0) or 0)
    if instructions <= 0:
        outputs = sum(graph.tensor(i).size for i in op.outputs if i >= 0)
        inputs = sum(graph.tensor(i).size for i in op.inputs
                     if i >= 0 and not graph.tensor(i).is_constant)
        instructions = round(op_macs(graph, op) * PER_MAC.get(variant.impl, PER_MAC["ref"])
                             + outputs * PER_OUTPUT.get(variant.impl, PER_OUTPUT["ref"])
                             + inputs * PER_INPUT.get(variant.impl, PER_INPUT["ref"]))
    instructions += CALL_INSTRUCTIONS
    if variant.impl == "dsp" and variant.op in KERNEL_CODE_DSP:
        code = KERNEL_CODE_DSP[variant.op]
    else:
        code = round(KERNEL_CODE.get(variant.op, KERNEL_CODE_DEFAULT)
                     * IMPL_CODE_FACTOR.get(variant.impl, 2.2))
    return VariantCost(variant.symbol, variant.impl, instructions, _const_bytes(call), code,
                       int(call.scratch_bytes))


def _candidates(graph: Graph, op: Operator, features: frozenset[str]
                ) -> list[tuple[KernelVariant, Any, VariantCost]]:
    """Every variant the board has that accepts ``op``, prepared and costed; a twin of a
    variant already listed (same bytes, same cost, another order) is left to the planner."""
    out: list[tuple[KernelVariant, Any, VariantCost]] = []
    listed: set[str] = set()
    cands = sorted(registered_variants(op.opcode), key=lambda v: (-v.priority, v.impl,
                                                                  v.symbol))
    for v in cands:
        if v.requires - features or v.accepts(graph, op) is not None:
            continue
        if listed & set(v.twins):
            continue
        call = None if v.alias else v.prepare(graph, op)
        out.append((v, call, variant_cost(graph, op, v, call)))
        listed.add(v.symbol)
    return out


def _key(mode: Optimize, v: KernelVariant, c: VariantCost) -> tuple[Any, ...]:
    if mode is Optimize.SIZE:
        return (c.flash_bytes, c.scratch_bytes, c.instructions, -v.priority, v.symbol)
    return (c.instructions, c.flash_bytes, -v.priority, v.symbol)


def _cost(mode: Optimize, c: VariantCost) -> tuple[int, int]:
    """What the search minimises, summed over the ops: instructions then flash (``size``:
    flash then instructions)."""
    if mode is Optimize.SIZE:
        return (c.flash_bytes, c.instructions)
    return (c.instructions, c.flash_bytes)


def _allowed(mode: Optimize, cands: Sequence[tuple[KernelVariant, Any, VariantCost]]
             ) -> tuple[list[int], dict[str, str]]:
    """The candidates ``mode`` may use for one op, best first (`_key`), and the reason each
    other one is not allowed: ``balanced`` keeps no variant whose constants take more flash
    than the reference kernel's, nor one whose extra constants over the lightest allowed
    variant save fewer than `BALANCED_INSTRUCTIONS_PER_BYTE` instructions per byte."""
    # the reference kernel: the ref variant priority selection would take (a lower-priority
    # ref variant with fewer constants, e.g. softmax's computed exp, does not lower the cap)
    ref = sorted(((-v.priority, c.const_bytes) for v, _, c in cands if v.impl == "ref"))
    ref_const = ref[0][1] if ref else None
    reasons: dict[str, str] = {}
    allowed = []
    for i, (v, _, c) in enumerate(cands):
        if (mode is Optimize.BALANCED and ref_const is not None
                and c.const_bytes > ref_const):
            reasons[v.symbol] = (f"constants {c.const_bytes:,} B > reference "
                                 f"{ref_const:,} B (speed takes it)")
        else:
            allowed.append(i)
    if not allowed:   # keep the reference kernel (or whatever is left) rather than nothing
        allowed = [i for i, (v, _, _) in enumerate(cands) if v.impl == "ref"] or [0]
    if mode is Optimize.BALANCED and len(allowed) > 1:
        light = min(allowed, key=lambda i: (cands[i][2].const_bytes, cands[i][2].instructions,
                                            cands[i][0].symbol))
        lc = cands[light][2]
        for i in list(allowed):
            c = cands[i][2]
            extra = c.const_bytes - lc.const_bytes
            saved = lc.instructions - c.instructions
            if extra > 0 and saved < BALANCED_INSTRUCTIONS_PER_BYTE * extra:
                allowed.remove(i)
                reasons[cands[i][0].symbol] = (
                    f"constants {extra:,} B above {lc.symbol} save only {max(saved, 0):,} "
                    f"instructions (< {BALANCED_INSTRUCTIONS_PER_BYTE} per byte; speed "
                    "takes it)")
    allowed.sort(key=lambda i: _key(mode, cands[i][0], cands[i][2]))
    return allowed, reasons


# balanced stores a byte more of constants than the lightest accepted variant only for at
# least this many estimated instructions saved per inference (module docstring)
BALANCED_INSTRUCTIONS_PER_BYTE = 8
# the search plans at most this many selections before it repairs the cheapest one instead
SEARCH_PLANS = 24


def arena_limit(mode: Optimize, reference_arena: int, board_room: int | None = None,
                explicit: int | None = None) -> int | None:
    """The largest arena ``mode`` may plan: ``explicit`` (``--arena-limit``) when given;
    else for ``speed`` the board's room (`board_arena_room`: its RAM less the stack reserve,
    the application's buffers and static data; None on the host: no limit); else the
    reference kernels' plan R."""
    if explicit is not None:
        return explicit
    if mode is Optimize.SPEED:
        return board_room
    return reference_arena


def board_arena_room(graph: Graph, board: Any, selection: Selection, app: str) -> int | None:
    """The largest arena ``board``'s RAM leaves room for next to ``selection``'s stack
    reserve (the estimated bound plus its margin, as the build reserves it), ``app``'s
    buffers and the static data; None for the host (no RAM to fit)."""
    if board is None or getattr(board, "family", "host") == "host":
        return None
    from tinydeploy.plan.budget import compute_budget, sized_stack_reserve, stack_estimate

    budget = compute_budget(selection, 0, board, app,
                            input_bytes=sum(t.nbytes for t in graph.inputs),
                            stack_reserved=sized_stack_reserve(stack_estimate(selection, app)))
    return max(0, budget.ram.available - budget.ram.total)


def reference_plan(graph: Graph, algorithm: str = "auto", align: int = 16) -> GraphPlan:
    """The plan with the reference kernels only (the arena no choice may exceed)."""
    return plan_graph(graph, select_kernels(graph, None), None, algorithm, align)


def _orders_with_twins(graph: Graph, op: Operator, v: KernelVariant, call: Any
                       ) -> Iterator[AccessOrder]:
    """The access orders of ``v`` (for ``call``) and of each of its twins that accepts
    ``op``: the overlaps the planner may use for this op with ``v`` selected."""
    for t in (v, *(variant_by_symbol(v.op, name) for name in v.twins)):
        if t.access is None or (t is not v and t.accepts(graph, op) is not None):
            continue
        yield t.access(call if t is v else t.prepare(graph, op))


def _pair_span(graph: Graph, op: Operator, v: KernelVariant, call: Any, n_in: int, n_out: int,
               align: int) -> int:
    """The fewest arena bytes that op's input 0 and output 0 (``n_in``, ``n_out`` bytes) can
    take together with ``v`` (or one of its twins) at the tightest overlap its access order
    tolerates on the ``align`` grid (sizes padded to it, as the planner counts them)."""
    ps, pd = -(-n_in // align) * align, -(-n_out // align) * align
    if v.inplace and v.access is None:
        return ps if n_in == n_out else ps + pd
    if v.access is None or call is None:
        return ps + pd
    best = ps + pd
    for order in _orders_with_twins(graph, op, v, call):
        if order.in_bytes != n_in or order.out_bytes != n_out:
            continue
        lead, trail = tolerated_shifts(order, align)
        best = min(best, max(ps, lead + pd) - lead, max(ps, trail + pd))
    return best


def local_arena_needs(graph: Graph, cands: Sequence[Sequence[tuple[KernelVariant, Any,
                                                                     VariantCost]]],
                      align: int = 16) -> list[list[int]]:
    """Per op and candidate, a lower bound of the arena of any selection that uses it: the
    bytes of the other tensors live at that op (their lifetimes do not depend on the kernels,
    and buffers live at one step never share bytes, except an op's own input 0 and output 0),
    plus the op's input 0 and output 0 at their tightest overlap (`_pair_span`), plus its
    scratch. All zero when an op could be an alias or a copy (its choice changes the
    lifetimes)."""
    ops = graph.operators
    zeros = [[0] * len(c) for c in cands]
    if any(len({v.alias for v, _, _ in c}) > 1 for c in cands):
        return zeros
    ref = Selection(tuple(KernelChoice(k, c[0][0], c[0][1]) for k, c in enumerate(cands)))
    gb = graph_buffers(graph, ref, align)
    buf = {b.name: b for b in gb.buffers if not b.name.startswith("scratch")}
    size = {name: b.padded_size for name, b in buf.items()}
    of = dict(gb.tensor_buffers)
    protected = {of.get(i) for i in (*graph.main.inputs, *graph.main.outputs)}
    live = [sum(size[b.name] for b in buf.values() if b.first <= k <= b.last)
            for k in range(len(ops))]
    needs = []
    for k, op in enumerate(ops):
        src = of.get(op.inputs[0]) if op.inputs and op.inputs[0] >= 0 else None
        dst = of.get(op.outputs[0]) if op.outputs and op.outputs[0] >= 0 else None
        pair = sorted(x for x in {src, dst} if x is not None
                      and buf[x].first <= k <= buf[x].last)
        others = live[k] - sum(size[x] for x in pair)
        # the planner overlaps the pair only when the input dies here and is the
        # application's (graph input or output) or a variable's bytes (lifetimes.py)
        apart = (src is None or dst is None or len(pair) != 2 or src in protected
                 or buf[src].last != k
                 or buf[dst].first != k or graph.tensor(op.inputs[0]).is_variable
                 or graph.tensor(op.outputs[0]).is_variable
                 or src in {of.get(i) for i in op.inputs[1:] if i >= 0})
        row = []
        for v, call, c in cands[k]:
            if v.alias:
                row.append(0)
                continue
            span = (sum(size[x] for x in pair) if apart or src is None or dst is None else
                    _pair_span(graph, op, v, call, buf[src].size, buf[dst].size, align))
            row.append(others + span + -(-c.scratch_bytes // align) * align)
        needs.append(row)
    return needs


# nodes of the exact arena search spent on one trial plan of `search_selection` (`plan_within`),
# and how many of the first trials may run it (the later ones use the greedy layouts only)
TRIAL_NODES = 2_000
EXACT_TRIALS = 2


def _order_shifts(graph: Graph, op: Operator, v: KernelVariant, call: Any, align: int
                  ) -> tuple[int, int] | None:
    """The tightest lead and trail that ``v`` or one of its twins tolerates on the ``align``
    grid, or None for a variant without an access order."""
    if v.access is None or call is None:
        return None
    lead, trail = None, None
    for order in _orders_with_twins(graph, op, v, call):
        lo, hi = tolerated_shifts(order, align)
        lead = lo if lead is None else max(lead, lo)
        trail = hi if trail is None else min(trail, hi)
    return None if lead is None or trail is None else (lead, trail)


def _undominated(graph: Graph, op: Operator,
                 cands: Sequence[tuple[KernelVariant, Any, VariantCost]], idx: Sequence[int],
                 mode: Optimize, align: int) -> list[int]:
    """``idx`` without the candidates another one dominates: no more cost (`_cost`), no more
    scratch, the same kind of overlap (none, same offset, or an access order) and, for an
    access order, a lead and a trail at least as tight (with twins). Such a candidate can
    only make a selection costlier and its arena no smaller, so the search need not visit
    it. ``idx`` is sorted best first; of two equal candidates the first is kept."""
    kind = {i: (cands[i][0].alias, cands[i][0].inplace, cands[i][0].access is None)
            for i in idx}
    shifts = {i: _order_shifts(graph, op, cands[i][0], cands[i][1], align) for i in idx}
    keep: list[int] = []
    for i in idx:
        ci = cands[i][2]
        dominated = False
        for j in keep:
            cj = cands[j][2]
            if kind[j] != kind[i] or _cost(mode, cj) > _cost(mode, ci):
                continue
            if cj.scratch_bytes > ci.scratch_bytes:
                continue
            si, sj = shifts[i], shifts[j]
            if si is not None and sj is not None and (sj[0] < si[0] or sj[1] > si[1]):
                continue
            # two access orders with the same tightest lead and trail may still differ in
            # between (the shifts that put an output at either end of an in-place chain):
            # only the same order, or a twin's, is known to be no worse
            vi, vj = cands[i][0], cands[j][0]
            if (vi.access is not None and vi.access is not vj.access
                    and vi.symbol not in vj.twins):
                continue
            dominated = True
            break
        if not dominated:
            keep.append(i)
    return keep


def _chain_extent(buffers: Sequence[Buffer]) -> int:
    """The bytes of the longest in-place chain: buffers placed over one another
    (``inplace_of``, ``inplace_shift``) form one rigid block, which no arena can be smaller
    than, though at no single step are all of its buffers live (the outputs of a chain of
    front-to-back layers drift down by each layer's lead)."""
    by_name = {b.name: b for b in buffers}
    rel: dict[str, int] = {}

    def offset(b: Buffer) -> int:
        if b.name not in rel:
            rel[b.name] = (0 if b.inplace_of is None
                           else offset(by_name[b.inplace_of]) + b.inplace_shift)
        return rel[b.name]

    def root(b: Buffer) -> str:
        while b.inplace_of is not None:
            b = by_name[b.inplace_of]
        return b.name

    lo: dict[str, int] = {}
    hi: dict[str, int] = {}
    for b in buffers:
        r, o = root(b), offset(b)
        lo[r] = min(lo.get(r, o), o)
        hi[r] = max(hi.get(r, o + b.padded_size), o + b.padded_size)
    return max((hi[r] - lo[r] for r in lo), default=0)


def plan_within(graph: Graph, selection: Selection, bound: int, algorithm: str = "auto",
                align: int = 16, exact: bool = True) -> GraphPlan | None:
    """A plan of ``selection`` whose arena is at most ``bound``, or None when the planner finds
    none: cheapest test first. The buffers' lower bound or the longest in-place chain
    (`_chain_extent`) above ``bound`` rejects without planning; a greedy layout within it
    accepts; only then (``auto`` and ``exact``) the exact search, with
    `TRIAL_NODES` nodes and no time limit, so that the answer does not depend on the machine's
    load. The plan is verified as `plan_graph`'s is."""
    sets = [gb for gb in buffer_sets(graph, selection, align)
            if max(lower_bound(gb.buffers), _chain_extent(gb.buffers)) <= bound]
    tries = ([algorithm] if algorithm != "auto" else
             ["greedy-size", "greedy-conflicts", "two-ended"])
    for gb in sets:
        for alg in tries:
            plan = plan_arena(gb.buffers, algorithm=alg)
            if plan.arena_bytes <= bound:
                return _verified(graph, gb, plan)
    if algorithm == "auto" and exact:
        for gb in sets:
            plan = plan_arena(gb.buffers, algorithm="auto", time_limit_s=float("inf"),
                              max_nodes=TRIAL_NODES)
            if plan.arena_bytes <= bound:
                return _verified(graph, gb, plan)
    return None


def _verified(graph: Graph, gb: GraphBuffers, plan: ArenaPlan) -> GraphPlan:
    gp = GraphPlan(plan, gb.buffers, gb.tensor_buffers, gb.num_ops, gb.selection)
    verify_inplace(graph, gb.selection, gp)
    return gp


@dataclass(frozen=True)
class SearchResult:
    """What `search_selection` found: per op the index of the chosen candidate, the plan,
    how many selections were planned, and whether the result is the optimum (False: the
    search ran out of `SEARCH_PLANS` and nothing it planned fitted)."""

    picks: tuple[int, ...] | None
    plan: GraphPlan | None
    plans: int
    exact: bool


def search_selection(graph: Graph, cands: Sequence[Sequence[tuple[KernelVariant, Any,
                                                                    VariantCost]]],
                     allowed: Sequence[Sequence[int]], mode: Optimize, bound: int, *,
                     algorithm: str = "auto", align: int = 16, max_plans: int = SEARCH_PLANS
                     ) -> SearchResult:
    """The selection of least total cost (`_cost`) whose plan fits ``bound``.

    Why a search: the ops interact. A scratch buffer only costs arena at its own op, but an
    access order decides how far an output may overlap its input, and a chain of in-place
    layers adds up those shifts; so the op at the peak is not always the one to change, and
    demoting one op at a time (the previous, greedy rule) can give up a several-fold speed-up
    that a change elsewhere would have kept.

    How: candidates that cannot fit whatever the other ops take (`local_arena_needs` above
    ``bound``) are dropped; the remaining selections are visited in order of increasing total
    cost (best first over the sorted candidate lists, each selection once: a selection's
    successors raise one index at or after the last raised one), and each is planned with
    ``algorithm``, the planner being the judge (`plan_within`: cheap rejections first; the
    exact arena search only in the first `EXACT_TRIALS` trials). The first that fits is the
    optimum. After ``max_plans`` plans the search gives up (``exact`` False) and the caller
    repairs the cheapest selection instead. Deterministic: no time limits, ties broken by the
    candidates' order. Dominated candidates (`_undominated`) are not visited."""
    needs = local_arena_needs(graph, cands, align)
    lists = []
    for k, idx in enumerate(allowed):
        keep = sorted((i for i in idx if needs[k][i] <= bound),
                      key=lambda i: (_cost(mode, cands[k][i][2]),
                                     _key(mode, cands[k][i][0], cands[k][i][2])))
        keep = _undominated(graph, graph.operators[k], cands[k], keep, mode, align)
        lists.append(keep or [i for i in idx if cands[k][i][0].impl == "ref"] or list(idx))
    costs = [[_cost(mode, cands[k][i][2]) for i in lst] for k, lst in enumerate(lists)]
    found: dict[tuple[int, ...], GraphPlan] = {}
    # the buffers a selection gives depend on each op's variant only through its layout
    # (`_layout_key`): a layout that did not fit does not fit with other kernels of the same
    # layout, and is not planned again (the selections visited cost more and more)
    keys = [[_layout_key(cands[k][i]) for i in lst] for k, lst in enumerate(lists)]
    failed: set[tuple[Any, ...]] = set()

    def fits(vec: tuple[int, ...], trial: int) -> bool | None:
        layout = tuple(keys[k][j] for k, j in enumerate(vec))
        if layout in failed:
            return None
        sel = Selection(tuple(KernelChoice(k, cands[k][lists[k][j]][0],
                                           cands[k][lists[k][j]][1])
                              for k, j in enumerate(vec)))
        gp = plan_within(graph, sel, bound, algorithm, align, exact=trial < EXACT_TRIALS)
        if gp is not None:
            found[vec] = gp
        else:
            failed.add(layout)
        return gp is not None

    vec, plans = cheapest_fitting(costs, fits, max_plans)
    if vec is None:
        return SearchResult(None, None, plans, False)
    return SearchResult(tuple(lists[k][j] for k, j in enumerate(vec)), found[vec], plans, True)


def _layout_key(cand: tuple[KernelVariant, Any, VariantCost]) -> tuple[Any, ...]:
    """What of a candidate the arena buffers depend on: its access order (the variant's own,
    when it declares one: an order may read the call's parameters), twins, in-place and alias
    flags and scratch bytes."""
    v, _, c = cand
    return (v.symbol if v.access is not None else None, v.twins, v.inplace, v.alias,
            c.scratch_bytes)


def cheapest_fitting(costs: Sequence[Sequence[tuple[int, ...]]],
                     fits: Callable[[tuple[int, ...], int], bool | None], max_trials: int
                     ) -> tuple[tuple[int, ...] | None, int]:
    """The index vector (one index per op into its candidate list, each list sorted by
    non-decreasing cost) of least total cost for which ``fits(vector, trial number)`` holds,
    and the number of trials; None after ``max_trials`` failed ones. ``fits`` may answer
    None: known not to fit without a trial (not counted).

    Best first: a heap of vectors by total cost (cost tuples add element-wise and compare
    lexicographically; ties by the vector); a popped vector's successors raise one index at
    or after the position it raised itself, so every vector is generated exactly once and
    never before a cheaper one. The first vector that fits is therefore the cheapest."""
    n = len(costs)

    def total(vec: tuple[int, ...]) -> tuple[int, ...]:
        width = len(costs[0][0]) if n and costs[0] else 0
        return tuple(sum(costs[k][j][d] for k, j in enumerate(vec)) for d in range(width))

    start = (0,) * n
    heap: list[tuple[tuple[int, ...], tuple[int, ...], int]] = [(total(start), start, 0)]
    trials = 0
    while heap and trials < max_trials:
        _, vec, last = heapq.heappop(heap)
        ok = fits(vec, trials)
        if ok is not None:
            trials += 1
        if ok:
            return vec, trials
        for p in range(last, n):
            if vec[p] + 1 < len(costs[p]):
                child = vec[:p] + (vec[p] + 1,) + vec[p + 1:]
                heapq.heappush(heap, (total(child), child, p))
    return None, trials


# the costed candidates and the reference plan of the last graph chosen for, keyed by its
# identity (the entry holds the graph, so the id is not reused while it lives): `plan`'s
# line of what each mode gives chooses three times for one graph
_PREPARED: dict[tuple[int, frozenset[str], str, int], tuple[Graph, list[Any], GraphPlan]] = {}


def choose_kernels(graph: Graph, board: Any, optimize: Optimize | str = Optimize.BALANCED,
                   *, algorithm: str = "auto", align: int = 16, app: str = "bench",
                   arena_limit_bytes: int | None = None) -> Choice:
    """Select and plan for ``optimize`` (see the module docstring for the rules);
    ``arena_limit_bytes`` (``--arena-limit``) replaces the mode's arena limit."""
    mode = Optimize(optimize)
    if arena_limit_bytes is not None and arena_limit_bytes < 1:
        raise BudgetError(f"--arena-limit {arena_limit_bytes}: must be a positive byte count")
    features: frozenset[str] = frozenset(getattr(board, "features", frozenset()) or ())
    ops = graph.operators
    hit = _PREPARED.get((id(graph), features, algorithm, align))
    if hit is not None and hit[0] is graph:
        cands, ref = hit[1], hit[2]
    else:
        cands = []
        for op in ops:
            found_here = _candidates(graph, op, features)
            if not found_here:
                select_kernels(graph, board)   # raises the UnsupportedError with every reason
                raise UnsupportedError(f"op {op.index} ({op.type_name}): no kernel")
            cands.append(found_here)
        ref = reference_plan(graph, algorithm, align)
        _PREPARED.clear()   # one graph at a time: the modes of one `plan` share it
        _PREPARED[(id(graph), features, algorithm, align)] = (graph, cands, ref)
    allowed, reasons = [], []
    for cand in cands:
        lst, why = _allowed(mode, cand)
        allowed.append(lst)
        reasons.append(why)
    picks = [lst[0] for lst in allowed]
    if mode is Optimize.BALANCED:
        picks = _lean_code(cands, allowed, picks, reasons)
    plans = 1
    sel = Selection(tuple(KernelChoice(k, cands[k][i][0], cands[k][i][1])
                          for k, i in enumerate(picks)))
    # speed: the room the board's RAM leaves next to this selection's stack reserve and the
    # application (`_fit_or_fall_back` checks the final selection's whole budget)
    room = (board_arena_room(graph, board, sel, app)
            if mode is Optimize.SPEED and arena_limit_bytes is None else None)
    bound = arena_limit(mode, ref.arena_bytes, room, arena_limit_bytes)
    gp = plan_graph(graph, sel, None, algorithm, align)
    exact = True
    if arena_limit_bytes is not None and gp.arena_bytes > arena_limit_bytes:
        floor = max((min(row) for row in local_arena_needs(graph, cands, align)), default=0)
        if floor > arena_limit_bytes:
            raise BudgetError(f"--arena-limit {arena_limit_bytes:,} B: no selection fits, "
                              f"the tensors live at one op alone need {floor:,} B",
                              hint=f"the reference kernels' plan needs {ref.arena_bytes:,} B")
    if bound is not None and gp.arena_bytes > bound:
        found = search_selection(graph, cands, allowed, mode, bound, algorithm=algorithm,
                                 align=align)
        plans += found.plans
        exact = found.exact
        if found.picks is not None and found.plan is not None:
            picks = list(found.picks)
            sel = Selection(tuple(KernelChoice(k, cands[k][i][0], cands[k][i][1])
                                  for k, i in enumerate(picks)))
            gp = plan_graph(graph, sel, None, algorithm, align)
            if gp.arena_bytes > bound:   # the exact search's own time limit stopped it early
                gp = found.plan
        else:
            sel, gp, picks = _demote_to_reference(graph, cands, sel, picks, bound,
                                                  algorithm, align)
            sel, gp, picks, tried = _improve(graph, cands, allowed, picks, mode, bound,
                                             algorithm, align, sel, gp)
            plans += tried
    layers = []
    for k, op in enumerate(ops):
        i = picks[k]
        why = dict(reasons[k])
        mine = _cost(mode, cands[k][i][2])
        for j, (v, _, c) in enumerate(cands[k]):
            if j == i or v.symbol in why:
                continue
            if _cost(mode, c) < mine:
                why[v.symbol] = ("a selection with it that fits the arena limit costs more "
                                 "in total" if exact else
                                 "its layout would raise the arena above the mode's limit")
            else:
                why[v.symbol] = ("more instructions" if mode is not Optimize.SIZE
                                 else "more flash" if c.flash_bytes > cands[k][i][2].flash_bytes
                                 else "more scratch or instructions")
        chosen = gp.selection.choices[k].variant.symbol if gp.selection else cands[k][i][0].symbol
        layers.append(LayerChoice(k, op.type_name, chosen, tuple(
            (c, None if j == i else why.get(v.symbol)) for j, (v, _, c) in
            enumerate(cands[k]))))
    if arena_limit_bytes is not None and gp.arena_bytes > arena_limit_bytes:
        raise BudgetError(f"--arena-limit {arena_limit_bytes:,} B: the smallest arena found "
                          f"for this model is {gp.arena_bytes:,} B",
                          hint=f"the reference kernels' plan needs {ref.arena_bytes:,} B")
    choice = Choice(mode, gp.selection or sel, gp, ref.arena_bytes, tuple(layers), bound,
                    plans=plans)
    return _fit_or_fall_back(graph, board, choice, algorithm, align, app)


def _lean_code(cands: Sequence[Sequence[tuple[KernelVariant, Any, VariantCost]]],
                allowed: list[list[int]], picks: list[int], reasons: list[dict[str, str]]
                ) -> list[int]:
    """Balanced's code rule (module docstring): each kernel picked is weighed against the
    next allowed choice of every layer it serves, its code counted once and an alternative's
    code only where no other layer links it; a kernel that saves fewer than
    `BALANCED_INSTRUCTIONS_PER_BYTE` instructions per extra byte of code is dropped from
    those layers' allowed lists (the reason recorded). One pass, in order of the least
    saving per byte."""
    picks = list(picks)
    symbols = sorted({cands[k][i][0].symbol for k, i in enumerate(picks)})
    trials = []
    for sym in symbols:
        ks = [k for k, i in enumerate(picks) if cands[k][i][0].symbol == sym]
        alts = []
        for k in ks:
            alt = next((j for j in allowed[k] if cands[k][j][0].symbol != sym), None)
            if alt is None:
                break
            alts.append(alt)
        else:
            code = cands[ks[0]][picks[ks[0]]][2].code_bytes
            others = {cands[k][i][0].symbol for k, i in enumerate(picks) if k not in ks}
            alt_code = {cands[k][j][0].symbol: cands[k][j][2].code_bytes
                        for k, j in zip(ks, alts, strict=True)
                        if cands[k][j][0].symbol not in others}
            extra = code - sum(alt_code.values())
            saved = sum(cands[k][j][2].instructions - cands[k][picks[k]][2].instructions
                        for k, j in zip(ks, alts, strict=True))
            if extra > 0 and saved < BALANCED_INSTRUCTIONS_PER_BYTE * extra:
                trials.append((saved / extra, sym, ks, alts, extra, saved))
    for _, sym, ks, alts, extra, saved in sorted(trials):
        if any(cands[k][picks[k]][0].symbol != sym for k in ks):
            continue
        for k, j in zip(ks, alts, strict=True):
            allowed[k].remove(picks[k])
            reasons[k][sym] = (f"code {extra:,} B above {cands[k][j][0].symbol} saves only "
                               f"{max(saved, 0):,} instructions over the layers it would run "
                               f"(< {BALANCED_INSTRUCTIONS_PER_BYTE} per byte; speed takes "
                               "it)")
            picks[k] = j
    return picks


def _demote_to_reference(graph: Graph, cands: list[Any], sel: Selection, picks: list[int],
                         bound: int, algorithm: str, align: int
                         ) -> tuple[Selection, GraphPlan, list[int]]:
    """The repair used when `search_selection` runs out of plans: replace variants, one op at
    a time, until the arena is within ``bound``. Each step tries every other candidate of
    every op and takes the replacement that shrinks the arena for the fewest added
    instructions, else the one that shrinks it most; the reference kernels' own plan is
    within the bound, so this ends. Trial plans use the greedy planner; the result uses
    ``algorithm``."""
    choices = list(sel.choices)
    picks = list(picks)
    fitted = plan_within(graph, sel, bound, algorithm, align, exact=False)
    seen = {tuple(picks)}
    while fitted is None:
        arena_now = _greedy_arena(graph, Selection(tuple(choices)), align)
        options = []
        for k, ch in enumerate(choices):
            if ch.variant.impl == "ref" or ch.variant.alias:
                continue
            now = cands[k][picks[k]][2]
            layouts = {_layout_key(cands[k][picks[k]])}
            for j, (_, _, c) in sorted(enumerate(cands[k]),
                                       key=lambda e: (e[1][2].instructions, e[0])):
                # a candidate of a layout already tried here (cheaper first) gives the same
                # arena
                if j == picks[k] or _layout_key(cands[k][j]) in layouts:
                    continue
                layouts.add(_layout_key(cands[k][j]))
                options.append((c.instructions - now.instructions, k, j))
        if not options:
            break
        # fewest added instructions first: the first delta with a shrinking trial decides
        # (ties: the smaller arena, then the op and candidate); no trial with a larger
        # delta is laid out
        options.sort()
        arenas: dict[tuple[int, int], int] = {}

        def arena_of(k: int, j: int, arenas: dict[tuple[int, int], int] = arenas) -> int:
            if (k, j) not in arenas:
                trial = list(choices)
                trial[k] = KernelChoice(k, cands[k][j][0], cands[k][j][1])
                arenas[(k, j)] = _greedy_arena(graph, Selection(tuple(trial)), align)
            return arenas[(k, j)]

        best = None
        for delta in sorted({d for d, _, _ in options}):
            same = [(arena_of(k, j), k, j) for d, k, j in options if d == delta]
            shrinking = [t for t in same if t[0] < arena_now]
            if shrinking:
                best = min(shrinking)
                break
        if best is None:
            best = min((arena_of(k, j), k, j) for _, k, j in options)
        _, k, j = best
        choices[k] = KernelChoice(k, cands[k][j][0], cands[k][j][1])
        picks[k] = j
        sel = Selection(tuple(choices))
        if tuple(picks) in seen:   # back where it was: nothing shrinks the arena further
            break
        seen.add(tuple(picks))
        fitted = plan_within(graph, sel, bound, algorithm, align, exact=False)
    # the caller (`_improve`) plans its final selection with ``algorithm``
    gp = fitted if fitted is not None else plan_graph(graph, sel, None, algorithm, align)
    return sel, gp, picks


def _greedy_arena(graph: Graph, selection: Selection, align: int) -> int:
    """The repair's measure of a trial: the greedy layout of the buffers with every safe
    overlap taken (what `plan_graph` tries first, without the proof: only the selection
    the repair ends with is planned and proved)."""
    return plan_arena(graph_buffers(graph, selection, align).buffers,
                      algorithm="greedy-size").arena_bytes


def _reference_picks(cands: Sequence[Sequence[tuple[KernelVariant, Any, VariantCost]]],
                     ref: GraphPlan) -> list[int] | None:
    """Per op, the index of the reference plan's variant (or its twin) among ``cands``;
    None when one is not there."""
    if ref.selection is None:
        return None
    out = []
    for k, ch in enumerate(ref.selection.choices):
        name = ch.variant.symbol
        hit = [i for i, (v, _, _) in enumerate(cands[k]) if name == v.symbol
               or name in v.twins]
        if not hit:
            return None
        out.append(hit[0])
    return out


def _improve(graph: Graph, cands: list[Any], allowed: Sequence[Sequence[int]],
             picks: list[int], mode: Optimize, bound: int, algorithm: str, align: int,
             sel: Selection, gp: GraphPlan) -> tuple[Selection, GraphPlan, list[int], int]:
    """After the repair: put back, one op at a time, the allowed candidate that saves the
    most (`_cost`) while the selection still fits ``bound`` (`plan_within`, greedy layouts
    and the bounded exact search), until no single change fits. The repair demotes by what
    a change adds, so it can give up a fast kernel that another op's demotion made room
    for. Returns the selection, its plan, the picks and the plans tried."""
    picks = list(picks)
    tried = 0
    # a change that did not fit is not tried again after others (they only take room)
    rejected: set[tuple[int, int]] = set()
    while True:
        now = [_cost(mode, cands[k][picks[k]][2]) for k in range(len(picks))]
        options = sorted(
            (tuple(a - b for a, b in zip(_cost(mode, cands[k][j][2]), now[k], strict=True)),
             k, j)
            for k, lst in enumerate(allowed) for j in lst
            if j != picks[k] and _cost(mode, cands[k][j][2]) < now[k])
        for _, k, j in options:
            trial = picks[:k] + [j] + picks[k + 1:]
            if (k, j) in rejected:
                continue
            tried += 1
            cand = Selection(tuple(KernelChoice(i, cands[i][p][0], cands[i][p][1])
                                   for i, p in enumerate(trial)))
            fitted = plan_within(graph, cand, bound, algorithm, align, exact=False)
            if fitted is None:
                rejected.add((k, j))
                continue
            picks, sel, gp = trial, cand, fitted
            break
        else:
            break
    final = plan_graph(graph, sel, None, algorithm, align)
    return sel, (final if final.arena_bytes <= gp.arena_bytes else gp), picks, tried


def _fit_or_fall_back(graph: Graph, board: Any, choice: Choice, algorithm: str, align: int,
                      app: str) -> Choice:
    if board is None or getattr(board, "family", "host") == "host":
        return choice
    from tinydeploy.plan.budget import compute_budget, sized_stack_reserve, stack_estimate

    # speed fills the RAM up to the stack reserve the build will make: count the reserve
    reserve = (sized_stack_reserve(stack_estimate(choice.selection, app))
               if choice.optimize is Optimize.SPEED else None)
    budget = compute_budget(choice.selection, choice.plan.arena_bytes, board, app,
                            input_bytes=sum(t.nbytes for t in graph.inputs),
                            stack_reserved=reserve)
    nxt = {Optimize.SPEED: Optimize.BALANCED, Optimize.BALANCED: Optimize.SIZE}.get(
        choice.optimize)
    if budget.fits or nxt is None:
        return choice
    smaller = choose_kernels(graph, board, nxt, algorithm=algorithm, align=align, app=app)
    return replace(smaller, fallback=(f"{choice.optimize.value} does not fit board "
                                      f"'{board.id}': {nxt.value}"
                                      + (f"; {smaller.fallback}" if smaller.fallback else "")))


def layers_json(choice: Choice) -> list[dict[str, Any]]:
    """Per layer: the chosen variant and every alternative (the chosen one included, marked
    ``chosen``) with its estimated instructions, flash, scratch and the reason it was passed
    over (None for the chosen one)."""
    return [{"op_index": lc.op_index, "type": lc.op_type, "chosen": lc.chosen,
             "alternatives": [{"symbol": lc.chosen if why is None else c.symbol,
                               "impl": c.impl, "chosen": why is None,
                               "instructions": c.instructions,
                               "instructions_estimated": True,
                               "const_bytes": c.const_bytes, "code_bytes": c.code_bytes,
                               "flash_bytes": c.flash_bytes,
                               "scratch_bytes": c.scratch_bytes,
                               "passed_over": why} for c, why in lc.alternatives]}
            for lc in choice.layers]


def estimated_instructions(choice: Choice) -> int:
    """The chosen variants' estimated instructions per inference, summed over the ops."""
    return sum(c.instructions for lc in choice.layers for c, why in lc.alternatives
               if why is None)
