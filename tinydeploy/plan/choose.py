"""Kernel selection that weighs the board's budget: ``--optimize {balanced,speed,size}``.

`tinydeploy.kernels.registry.select_kernels` picks by priority alone. Here every variant
that accepts an op is costed (instructions, flash, scratch) and one is chosen per op for the
requested trade-off, then the arena is planned and checked against the plan of the
reference kernels:

* ``speed``: the fewest instructions per op;
* ``size``: the least flash per op (constants + code), then the least scratch, then the
  fewest instructions;
* ``balanced`` (the default): the fewest instructions among the variants whose constants
  take no more flash than the reference kernel's (int8 weights: a layout that widens the
  weights is a speed-for-flash trade that only ``speed`` makes), and among those a variant
  that stores more constants than the one with the fewest must save at least
  `BALANCED_INSTRUCTIONS_PER_BYTE` (8) estimated instructions per inference for each extra
  byte: derived tables that buy a few hundred instructions are left to ``speed`` (int8
  SOFTMAX over 12 classes: the 1,024 B exp table of ``td_softmax_s8_ref`` saves ~2,400
  instructions, so ``td_softmax_s8_exp_ref`` computes the exp; over 1,000 classes the table
  saves ~200,000 and is kept). The cap is the constants of the reference kernel that priority
  selection takes, not of a lower-priority ref variant with fewer.

The arena each mode may use (`arena_limit`), against the reference kernels' plan R:

* ``size``: at most R;
* ``balanced``: at most R + R/16 — a few hundred bytes of scratch that buy a several-fold
  speed-up (the DS-CNN's pointwise layers: 512 B for 7.5 M -> 0.7 M instructions) are taken by
  default; more is a choice the user makes with ``speed``;
* ``speed``: no bound but the board's RAM.

A variant whose scratch would raise the peak past the limit is replaced, at the peak op
first, by the next one with less scratch, down to the reference kernel. When the chosen build
does not fit the board's RAM or flash, ``speed`` falls back to ``balanced`` and ``balanced``
to ``size`` (reported in `Choice.fallback`). Every `Choice` reports R and its limit.

Costs: a variant's call may carry an ``instructions`` estimate (measured per-MAC models of
the optimised kernels); otherwise a per-MAC, per-output and per-input-element model by
implementation (`PER_MAC`, `PER_OUTPUT`, `PER_INPUT`, from QEMU icount measurements of the
DS-CNN's layers on the Cortex-M4). Flash is the op's constants (byte-identical arrays
counted once, as codegen stores them) plus the code-size table of `tinydeploy.plan.budget`.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from tinydeploy.errors import UnsupportedError
from tinydeploy.kernels.registry import KernelChoice, KernelVariant, Selection, select_kernels
from tinydeploy.kernels.registry import variants as registered_variants
from tinydeploy.model.analysis import op_macs
from tinydeploy.model.ir import Graph, Operator
from tinydeploy.plan.budget import (
    CONST_ALIGN,
    IMPL_CODE_FACTOR,
    KERNEL_CODE,
    KERNEL_CODE_DEFAULT,
    KERNEL_CODE_DSP,
)
from tinydeploy.plan.lifetimes import GraphPlan, plan_graph

# instructions per multiply-accumulate and per output element, by implementation
PER_MAC: dict[str, float] = {"ref": 14.0, "dsp": 1.4, "mve": 0.45}
PER_OUTPUT: dict[str, float] = {"ref": 40.0, "dsp": 30.0, "mve": 12.0, "alias": 0.0}
# ... and per element read from a non-constant input: what ops without multiply-accumulates
# (pooling, elementwise) cost; the reference average pool reads ~12 instructions per input
# element on the Cortex-M4 (DS-CNN: 98,400 for 8,000 inputs, QEMU icount)
PER_INPUT: dict[str, float] = {"ref": 12.0, "opt": 6.0, "dsp": 3.0, "mve": 1.0, "alias": 0.0}


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
    arena_limit_bytes: int | None = None   # None: the board's RAM is the only bound
    fallback: str | None = None   # e.g. "speed does not fit: balanced"


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


def _pick(mode: Optimize, cands: Sequence[tuple[KernelVariant, Any, VariantCost]],
          max_scratch: int | None = None
          ) -> tuple[int, dict[str, str]]:
    """Index of the chosen candidate and the reasons the others were passed over."""
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
        elif max_scratch is not None and c.scratch_bytes > max_scratch and v.impl != "ref":
            reasons[v.symbol] = (f"scratch {c.scratch_bytes:,} B would raise the arena above "
                                 "the mode's limit")
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
    best = min(allowed, key=lambda i: _key(mode, cands[i][0], cands[i][2]))
    for i in allowed:
        if i != best:
            v, _, c = cands[i]
            other = cands[best][2]
            reasons[v.symbol] = ("more instructions" if mode is not Optimize.SIZE
                                 else "more flash" if c.flash_bytes > other.flash_bytes
                                 else "more scratch or instructions")
    return best, reasons


# balanced stores a byte more of constants than the lightest accepted variant only for at
# least this many estimated instructions saved per inference (module docstring)
BALANCED_INSTRUCTIONS_PER_BYTE = 8
# balanced may exceed the reference kernels' arena by this fraction of it (module docstring)
BALANCED_ARENA_SLACK = 16


def arena_limit(mode: Optimize, reference_arena: int) -> int | None:
    """The largest arena ``mode`` may plan (None: no bound but the board's RAM)."""
    if mode is Optimize.SPEED:
        return None
    if mode is Optimize.BALANCED:
        return reference_arena + reference_arena // BALANCED_ARENA_SLACK
    return reference_arena


def reference_plan(graph: Graph, algorithm: str = "auto", align: int = 16) -> GraphPlan:
    """The plan with the reference kernels only (the arena no choice may exceed)."""
    return plan_graph(graph, select_kernels(graph, None), None, algorithm, align)


def choose_kernels(graph: Graph, board: Any, optimize: Optimize | str = Optimize.BALANCED,
                   *, algorithm: str = "auto", align: int = 16, app: str = "bench"
                   ) -> Choice:
    """Select and plan for ``optimize`` (see the module docstring for the rules)."""
    mode = Optimize(optimize)
    features: frozenset[str] = frozenset(getattr(board, "features", frozenset()) or ())
    ops = graph.operators
    cands = []
    for op in ops:
        c = _candidates(graph, op, features)
        if not c:
            select_kernels(graph, board)   # raises the UnsupportedError with every reason
            raise UnsupportedError(f"op {op.index} ({op.type_name}): no kernel")
        cands.append(c)
    ref = reference_plan(graph, algorithm, align)
    bound = arena_limit(mode, ref.arena_bytes)
    limits: list[int | None] = [None] * len(ops)
    for _ in range(len(ops) + 1):
        picks = [_pick(mode, cands[k], limits[k]) for k in range(len(ops))]
        sel = Selection(tuple(KernelChoice(k, cands[k][i][0], cands[k][i][1])
                              for k, (i, _) in enumerate(picks)))
        gp = plan_graph(graph, sel, None, algorithm, align)
        if bound is None or gp.arena_bytes <= bound:
            break
        # the op with the largest scratch live at the peak gives it up first
        peak = gp.peak_op
        k = max((k for k in range(len(ops)) if gp.has_scratch(k)
                 and any(b.name == f"scratch{k}" and b.live_at(peak) for b in gp.buffers)),
                key=lambda k: (sel.choices[k].call.scratch_bytes, -k), default=None)
        if k is None:
            k = max((k for k in range(len(ops)) if gp.has_scratch(k)),
                    key=lambda k: (sel.choices[k].call.scratch_bytes, -k), default=None)
        if k is None:
            break
        limits[k] = sel.choices[k].call.scratch_bytes - 1
    if bound is not None and gp.arena_bytes > bound:
        sel, gp, picks = _demote_to_reference(graph, cands, sel, picks, bound, algorithm,
                                              align)
    layers = []
    for k, op in enumerate(ops):
        i, reasons = picks[k]
        chosen = gp.selection.choices[k].variant.symbol if gp.selection else cands[k][i][0].symbol
        layers.append(LayerChoice(k, op.type_name, chosen, tuple(
            (c, None if j == i else reasons.get(v.symbol)) for j, (v, _, c) in
            enumerate(cands[k]))))
    choice = Choice(mode, gp.selection or sel, gp, ref.arena_bytes, tuple(layers), bound)
    return _fit_or_fall_back(graph, board, choice, algorithm, align, app)


def _demote_to_reference(graph: Graph, cands: list[Any], sel: Selection, picks: list[Any],
                         bound: int, algorithm: str, align: int
                         ) -> tuple[Selection, GraphPlan, list[Any]]:
    """Replace variants, one op at a time, until the arena is within ``bound`` (the mode's
    `arena_limit`): a variant without the reference's in-place twins can cost more arena than
    its scratch (e.g. its output cannot trail its input). Each step tries every other
    candidate of every op and takes the replacement that shrinks the arena for the fewest
    added instructions (e.g. the M55's pointwise mve kernel, which has no back-to-front twin,
    gives way to the dsp one, which has), else the one that shrinks it most; the reference
    kernels' own plan is within the bound, so this ends. Trial plans use the greedy planner;
    the result uses ``algorithm``."""
    choices = list(sel.choices)
    picks = list(picks)
    gp = plan_graph(graph, sel, None, algorithm, align)
    while gp.arena_bytes > bound:
        arena_now = plan_graph(graph, Selection(tuple(choices)), None, "greedy-size",
                               align).arena_bytes
        trials = []
        for k, ch in enumerate(choices):
            if ch.variant.impl == "ref" or ch.variant.alias:
                continue
            now = next(c for v, _, c in cands[k] if v.symbol == ch.variant.symbol
                       or ch.variant.symbol in v.twins)
            for j, (v, call, c) in enumerate(cands[k]):
                if v.symbol == now.symbol:
                    continue
                trial = list(choices)
                trial[k] = KernelChoice(k, v, call)
                arena = plan_graph(graph, Selection(tuple(trial)), None, "greedy-size",
                                   align).arena_bytes
                trials.append((arena < arena_now, c.instructions - now.instructions, arena,
                               k, j))
        if not trials:
            break
        shrinking = [t for t in trials if t[0]]
        _, _, _, k, j = (min(shrinking, key=lambda t: (t[1], t[2], t[3], t[4])) if shrinking
                         else min(trials, key=lambda t: (t[2], t[3], t[4])))
        choices[k] = KernelChoice(k, cands[k][j][0], cands[k][j][1])
        picks[k] = (j, {**picks[k][1], cands[k][picks[k][0]][0].symbol:
                        "its layout would raise the arena above the mode's limit"})
        sel = Selection(tuple(choices))
        gp = plan_graph(graph, sel, None, algorithm, align)
    return sel, gp, picks


def _fit_or_fall_back(graph: Graph, board: Any, choice: Choice, algorithm: str, align: int,
                      app: str) -> Choice:
    if board is None or getattr(board, "family", "host") == "host":
        return choice
    from tinydeploy.plan.budget import compute_budget

    budget = compute_budget(choice.selection, choice.plan.arena_bytes, board, app,
                            input_bytes=sum(t.nbytes for t in graph.inputs))
    nxt = {Optimize.SPEED: Optimize.BALANCED, Optimize.BALANCED: Optimize.SIZE}.get(
        choice.optimize)
    if budget.fits or nxt is None:
        return choice
    smaller = choose_kernels(graph, board, nxt, algorithm=algorithm, align=align, app=app)
    return replace(smaller, fallback=(f"{choice.optimize.value} does not fit board "
                                      f"'{board.id}': {nxt.value}"
                                      + (f"; {smaller.fallback}" if smaller.fallback else "")))


def layers_json(choice: Choice) -> list[dict[str, Any]]:
    """Per layer: the chosen variant and what each alternative would cost."""
    return [{"op_index": lc.op_index, "type": lc.op_type, "chosen": lc.chosen,
             "alternatives": [{"symbol": c.symbol, "impl": c.impl,
                               "instructions": c.instructions, "const_bytes": c.const_bytes,
                               "code_bytes": c.code_bytes, "scratch_bytes": c.scratch_bytes,
                               "passed_over": why} for c, why in lc.alternatives]}
            for lc in choice.layers]
