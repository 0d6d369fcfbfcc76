"""The static arena planner: one offset per buffer, decided on the host and checked.

The firmware has a single arena. Every non-constant tensor, every kernel scratch buffer and
every variable tensor gets an offset into it here; the device never allocates. The problem is
dynamic storage allocation with fixed lifetimes: buffers are intervals in time (op steps,
both ends inclusive) and must be given intervals in space (offsets) such that two buffers live
at the same step never share a byte, unless one is declared in-place over the other.

Invariants of every `ArenaPlan` returned by `plan_arena` (checked by `verify_plan` before it
returns, so a planner bug is an exception and never a corrupt firmware):

* two buffers live at a common step occupy disjoint byte ranges, except a declared in-place
  pair, whose offsets differ by exactly the declared ``inplace_shift`` (0 for elementwise
  kernels, which write each output element after reading the input element at the same
  index; a lead or a trail of k bytes for kernels whose declared access order tolerates it,
  see `tinydeploy.kernels.access`);
* every offset is a multiple of its buffer's alignment;
* ``arena_bytes >= lower_bound_bytes``, the largest sum of aligned sizes of buffers live at
  any one step (an in-place pair counted once, as the span the two cover together);
* the same buffers give the same plan on every run and every machine: orders are total
  (ties broken by name) and the exhaustive search is limited by a node count, not by time
  (a wall-clock limit exists only as a safety net; like the node limit, it marks the
  search's `Trial` incomplete).

In-place: a buffer ``Y`` with ``inplace_of="X"`` is written by the op that reads ``X`` for the
last time (``X.last == Y.first``). The planner places ``Y`` at ``X``'s offset plus
``Y.inplace_shift``; such chains (``X -> Y -> Z``) are planned as one rigid unit whose
footprint at each step is the byte range its members live at that step cover (from the
lowest start to the highest end).

Algorithms: two first-fit orders (by size, TFLM's; by conflicts, TVM USMP's), the two-ended
layout (each unit, in time order, at the end of the arena away from the bytes live at its
birth: in a chain every output lands at the other end from its input, which reaches the
lower bound where first fit from the bottom leaves holes) and a branch and bound over
first-fit orders; ``auto`` keeps the smallest.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from tinydeploy.errors import BudgetError

ALGORITHMS: tuple[str, ...] = ("auto", "greedy-size", "greedy-conflicts", "two-ended",
                               "optimal")
DEFAULT_ALIGN = 16
# Exhaustive search limits. The node budget keeps results reproducible; the time limit is a
# safety net for pathological inputs only. A node costs time roughly in proportion to the
# number of units, so the default budget is SEARCH_WORK // units nodes (~0.3-1 s at most).
SEARCH_WORK = 150_000
MIN_NODES = 1_000
DEFAULT_TIME_LIMIT_S = 5.0


def align_up(value: int, align: int) -> int:
    """The smallest multiple of ``align`` that is >= ``value``."""
    return -(-value // align) * align


@dataclass(frozen=True)
class Buffer:
    """A block of arena memory needed from op step ``first`` to ``last`` (inclusive).

    ``inplace_of`` names a buffer this one is placed over, ``inplace_shift`` bytes after its
    start (negative: before); it requires ``that.last == self.first`` and a shift that both
    buffers' alignments divide. Whether the overlap is safe is the kernel's business (its
    declared access order, checked by `tinydeploy.plan.lifetimes.verify_inplace`).
    """

    name: str
    size: int
    first: int
    last: int
    align: int = DEFAULT_ALIGN
    inplace_of: str | None = None
    inplace_shift: int = 0

    @property
    def padded_size(self) -> int:
        """The size rounded up to the alignment: what the buffer costs in the arena."""
        return align_up(self.size, self.align)

    def live_at(self, step: int) -> bool:
        return self.first <= step <= self.last


@dataclass(frozen=True)
class Placement:
    """Where one buffer went: ``offset`` bytes from the arena start."""

    name: str
    offset: int
    size: int
    first: int
    last: int


@dataclass(frozen=True)
class Trial:
    """The result one algorithm reached (``auto`` tries several and keeps the smallest)."""

    algorithm: str
    arena_bytes: int
    complete: bool = True  # False: the exhaustive search stopped at its node or time limit


@dataclass(frozen=True)
class ArenaPlan:
    """Offsets for every buffer. ``algorithm`` is the one whose layout was kept."""

    algorithm: str
    arena_bytes: int
    lower_bound_bytes: int
    placements: tuple[Placement, ...]
    requested: str = "auto"
    trials: tuple[Trial, ...] = ()

    @property
    def optimal(self) -> bool:
        """True when the arena provably cannot be smaller (it reaches the lower bound)."""
        return self.arena_bytes == self.lower_bound_bytes

    def offset(self, name: str) -> int:
        return self.placement(name).offset

    def placement(self, name: str) -> Placement:
        for p in self.placements:
            if p.name == name:
                return p
        raise KeyError(f"arena plan has no buffer '{name}'")


# --- planning units: a buffer, or an in-place chain of buffers sharing one offset ----------


@dataclass(frozen=True)
class _Unit:
    name: str
    members: tuple[Buffer, ...]
    rel: tuple[int, ...]  # each member's offset from the unit's offset (all >= 0)
    first: int
    last: int
    lo: tuple[int, ...]  # at steps first..last: the lowest byte live, from the unit's offset
    hi: tuple[int, ...]  # ... and one past the highest
    align: int
    size: int  # the highest end

    @property
    def profile(self) -> tuple[int, ...]:
        """The footprint (bytes covered) at steps first..last."""
        return tuple(h - lo for lo, h in zip(self.lo, self.hi, strict=True))

    def at(self, step: int) -> int:
        if self.first <= step <= self.last:
            return self.hi[step - self.first] - self.lo[step - self.first]
        return 0

    def span(self, step: int) -> tuple[int, int]:
        k = step - self.first
        return self.lo[k], self.hi[k]


def _check_buffers(buffers: Sequence[Buffer]) -> dict[str, Buffer]:
    by_name: dict[str, Buffer] = {}
    for b in buffers:
        if b.name in by_name:
            raise ValueError(f"arena buffers: name '{b.name}' is used twice")
        if b.size < 0 or b.first < 0 or b.last < b.first:
            raise ValueError(f"arena buffer '{b.name}': size {b.size}, steps {b.first}..{b.last}"
                             " (need size >= 0 and 0 <= first <= last)")
        if b.align < 1:
            raise ValueError(f"arena buffer '{b.name}': alignment {b.align} must be >= 1")
        by_name[b.name] = b
    sources: dict[str, str] = {}
    for b in buffers:
        if b.inplace_of is None:
            continue
        src = by_name.get(b.inplace_of)
        if src is None:
            raise ValueError(f"arena buffer '{b.name}' is in-place over unknown buffer "
                             f"'{b.inplace_of}'")
        if src.last != b.first:
            raise ValueError(f"arena buffer '{b.name}' (steps {b.first}..{b.last}) cannot be "
                             f"in-place over '{src.name}' (steps {src.first}..{src.last}): "
                             f"the source must die at the step the buffer is written")
        if b.inplace_shift % b.align or b.inplace_shift % src.align:
            raise ValueError(f"arena buffer '{b.name}': in-place shift {b.inplace_shift} over "
                             f"'{src.name}' is not a multiple of the alignments {b.align} and "
                             f"{src.align}")
        if src.name in sources:
            raise ValueError(f"arena buffers '{sources[src.name]}' and '{b.name}' are both "
                             f"in-place over '{src.name}'")
        sources[src.name] = b.name
    # Cycles: with src.last == b.first a cycle needs every member at one step.
    for b in buffers:
        seen = {b.name}
        cur = b
        while cur.inplace_of is not None:
            cur = by_name[cur.inplace_of]
            if cur.name in seen:
                raise ValueError(f"arena buffers form an in-place cycle through '{b.name}'")
            seen.add(cur.name)
    return by_name


def _units(buffers: Sequence[Buffer]) -> list[_Unit]:
    by_name = _check_buffers(buffers)
    child = {b.inplace_of: b.name for b in buffers if b.inplace_of is not None}
    units = []
    for b in sorted(buffers, key=lambda x: x.name):
        if b.inplace_of is not None:
            continue  # placed with its root
        members = [b]
        rel = [0]
        while members[-1].name in child:
            members.append(by_name[child[members[-1].name]])
            rel.append(rel[-1] + members[-1].inplace_shift)
        base = min(rel)
        rel = [r - base for r in rel]
        first = min(m.first for m in members)
        last = max(m.last for m in members)
        lo, hi = [], []
        for t in range(first, last + 1):
            live = [(r, r + m.padded_size) for m, r in zip(members, rel, strict=True)
                    if m.live_at(t) and m.padded_size > 0]
            lo.append(min((a for a, _ in live), default=0))
            hi.append(max((z for _, z in live), default=0))
        align = math.lcm(*(m.align for m in members))
        units.append(_Unit(b.name, tuple(members), tuple(rel), first, last, tuple(lo),
                           tuple(hi), align, max(hi)))
    return units


def _live_profile(units: Iterable[_Unit]) -> list[int]:
    units = list(units)
    steps = max((u.last for u in units), default=-1) + 1
    live = [0] * steps
    for u in units:
        for i, s in enumerate(u.profile):
            live[u.first + i] += s
    return live


def live_bytes(buffers: Sequence[Buffer]) -> tuple[int, ...]:
    """Aligned bytes live at each op step (an in-place pair counted once, as the larger)."""
    return tuple(_live_profile(_units(buffers)))


def lower_bound(buffers: Sequence[Buffer]) -> int:
    """No arena can be smaller: the largest sum of aligned sizes live at any one step."""
    return max(live_bytes(buffers), default=0)


# --- first-fit placement ---------------------------------------------------------------


class _Conflicts:
    """For every pair of units live at a common step, the footprint pairs
    (lo_u, hi_u, lo_v, hi_v) that occur, so that the test 'can u sit at o given v at ov' is:
    for each, o + hi_u <= ov + lo_v or ov + hi_v <= o + lo_u."""

    def __init__(self, units: Sequence[_Unit]) -> None:
        n = len(units)
        self.pairs: list[dict[int, tuple[tuple[int, int, int, int], ...]]] = [
            {} for _ in range(n)]
        order = sorted(range(n), key=lambda i: units[i].first)
        for x, i in enumerate(order):
            ui = units[i]
            for j in order[x + 1:]:
                uj = units[j]
                if uj.first > ui.last:
                    break
                lo, hi = max(ui.first, uj.first), min(ui.last, uj.last)
                fp = sorted({(*ui.span(t), *uj.span(t)) for t in range(lo, hi + 1)
                             if ui.at(t) > 0 and uj.at(t) > 0})
                if not fp:
                    continue
                self.pairs[i][j] = tuple(fp)
                self.pairs[j][i] = tuple((c, d, a, b) for a, b, c, d in fp)
        self.count = [len(p) for p in self.pairs]


def _first_fit(u: int, unit: _Unit, offsets: dict[int, int], conf: _Conflicts) -> int:
    """The lowest aligned offset where unit ``u`` overlaps no placed unit live with it."""
    forbidden = sorted(_forbidden(u, offsets, conf))
    o = 0
    moved = True
    while moved:
        moved = False
        for lo, hi in forbidden:
            if lo < o < hi:
                o = align_up(hi, unit.align)
                moved = True
    return o


def _forbidden(u: int, offsets: dict[int, int], conf: _Conflicts) -> list[tuple[int, int]]:
    """Open intervals (lo, hi) of offsets unit ``u`` may not take given the placed units."""
    out = []
    for v, fps in conf.pairs[u].items():
        ov = offsets.get(v)
        if ov is None:
            continue
        for lo_u, hi_u, lo_v, hi_v in fps:
            out.append((ov + lo_v - hi_u, ov + hi_v - lo_u))
    return out


def _last_fit(unit: _Unit, forbidden: Sequence[tuple[int, int]], capacity: int) -> int:
    """The highest aligned offset at which ``unit`` ends within ``capacity`` and takes no
    forbidden offset (-1: there is none): first fit seen from the arena's top."""
    o = (capacity - unit.size) // unit.align * unit.align
    moved = True
    while moved and o >= 0:
        moved = False
        for lo, hi in forbidden:
            if lo < o < hi:
                o = lo // unit.align * unit.align
                moved = True
    return o if o >= 0 else -1


def _gap(u: int, o: int, offsets: dict[int, int], conf: _Conflicts) -> int:
    """The fewest free bytes between unit ``u`` at offset ``o`` and a placed unit live with
    it (a large number when none is)."""
    gap = 1 << 62
    for v, fps in conf.pairs[u].items():
        ov = offsets.get(v)
        if ov is None:
            continue
        for lo_u, hi_u, lo_v, hi_v in fps:
            gap = min(gap, max(ov + lo_v - (o + hi_u), o + lo_u - (ov + hi_v)))
    return gap


def _two_ended_at(units: Sequence[_Unit], conf: _Conflicts, order: Sequence[int],
                  capacity: int) -> dict[int, int] | None:
    """Place the units in ``order`` within ``capacity`` bytes, each at the lowest or the
    highest free offset, whichever leaves more room between it and the placed units live
    with it; None when one fits at neither end. Ties (the first unit, which decides which
    end the rest alternate from) go to the lowest offset, else, if that fails, to the
    highest: an in-place unit's later members may need the end its first member's
    predecessor would take."""
    for high_first in (False, True):
        offsets: dict[int, int] = {}
        for i in order:
            unit = units[i]
            low = _first_fit(i, unit, offsets, conf)
            high = _last_fit(unit, _forbidden(i, offsets, conf), capacity)
            fits = [o for o in (low, high) if 0 <= o and o + unit.size <= capacity]
            if not fits:
                break
            offsets[i] = max(fits, key=lambda o: (_gap(i, o, offsets, conf),
                                                  o if high_first else -o))
        if len(offsets) == len(order):
            return offsets
    return None


def _two_ended(units: Sequence[_Unit], conf: _Conflicts, lb: int) -> dict[int, int]:
    """The two-ended layout ("ping-pong"): in time order, each unit at the end of the arena
    away from the bytes live at its birth, so that in a chain each op's output lands at the
    other end from its input and the arena is the largest sum of bytes live at one step (the
    lower bound) when the chain's in-place units allow it. Tried at the lower bound first,
    then bisected up to the sum of all sizes (where it always fits: every unit then fits at
    its first-fit offset); the layout of the smallest capacity that fits is kept. The
    capacities tried are a fixed sequence: the result is reproducible."""
    order = sorted(range(len(units)),
                   key=lambda i: (units[i].first, -units[i].last, -units[i].size,
                                  units[i].name))
    align = max((u.align for u in units), default=1)
    low = align_up(lb, align)
    best = _two_ended_at(units, conf, order, low)
    if best is not None:
        return best
    high = align_up(sum(u.size for u in units), align)
    best = _two_ended_at(units, conf, order, high)
    if best is None:   # cannot happen (see above); the plain first fit then
        return _greedy(units, conf, order)
    high = min(high, _top(units, best))
    while high - low > align:
        mid = align_up((low + high) // 2, align)
        if mid >= high:
            break
        trial = _two_ended_at(units, conf, order, mid)
        if trial is None:
            low = mid
        else:
            best, high = trial, min(mid, _top(units, trial))
    return best


def _top(units: Sequence[_Unit], offsets: dict[int, int]) -> int:
    return max((o + units[i].size for i, o in offsets.items()), default=0)


def _greedy(units: Sequence[_Unit], conf: _Conflicts, order: Sequence[int]) -> dict[int, int]:
    offsets: dict[int, int] = {}
    for i in order:
        offsets[i] = _first_fit(i, units[i], offsets, conf)
    return offsets


def _order_by_size(units: Sequence[_Unit]) -> list[int]:
    """Largest first (TFLM's greedy planner); equal sizes in time order; ties by name."""
    return sorted(range(len(units)),
                  key=lambda i: (-units[i].size, units[i].first, units[i].name))


def _order_by_conflicts(units: Sequence[_Unit], conf: _Conflicts) -> list[int]:
    """Most conflicting first (TVM USMP's greedy_by_conflicts); then largest, in time order;
    ties by name."""
    return sorted(range(len(units)),
                  key=lambda i: (-conf.count[i], -units[i].size, units[i].first, units[i].name))


def _order_by_pressure(units: Sequence[_Unit]) -> list[int]:
    """Units live at the most crowded steps first (those steps decide the arena), then in
    time order, then largest; ties by name. The search's branching order."""
    live = _live_profile(units)
    return sorted(range(len(units)),
                  key=lambda i: (-max(live[units[i].first:units[i].last + 1]), units[i].first,
                                 -units[i].size, units[i].name))


class _Search:
    """Branch and bound over first-fit placement orders, explored by limited discrepancy.

    A node is a set of placed units. Each child places one more unit at its first-fit offset;
    children are tried in `_order_by_pressure` order, so the first dive is that greedy order
    and later dives depart from it at 1, 2, ... nodes (early bad choices are revisited long
    before a plain depth-first search would get back to them).
    Bound: placing more units only removes free space, so every unplaced unit ends at or
    above its current first-fit offset; max(top, max over unplaced of first fit + size) is a
    lower bound for the subtree, as is the global lower bound. Two units not live at a common
    step do not affect each other's first fit, so their order is fixed (lower index first)
    when they are placed one right after the other.
    """

    def __init__(self, units: Sequence[_Unit], conf: _Conflicts, lb: int, best: int,
                 best_offsets: dict[int, int] | None, max_nodes: int,
                 time_limit_s: float) -> None:
        self.units = units
        self.conf = conf
        self.lb = lb
        self.best = best
        self.best_offsets = best_offsets
        self.max_nodes = max_nodes
        self.deadline = time.monotonic() + time_limit_s
        self.nodes = 0
        self.stopped = False
        self.cut = False
        self.rank = {i: r for r, i in enumerate(_order_by_pressure(units))}
        steps = max((u.last for u in units), default=-1) + 1
        self.by_step: list[list[int]] = [[] for _ in range(steps)]
        for i, u in enumerate(units):
            for t in range(u.first, u.last + 1):
                self.by_step[t].append(i)

    def run(self) -> None:
        """Limited discrepancy search: first the heuristic's own order, then every order that
        departs from it at one node, at two nodes, ... until the tree is exhausted (complete),
        the bound is reached (optimal) or the node budget is spent."""
        n = len(self.units)
        ff = {i: _first_fit(i, self.units[i], {}, self.conf) for i in range(n)}
        for discrepancies in range(n + 1):
            self.cut = False
            self._dfs({}, ff, 0, None, discrepancies)
            if self.stopped or self.best <= self.lb or not self.cut:
                break

    def _step_bound(self, offsets: dict[int, int], ff: dict[int, int]) -> int:
        """At each step the unplaced units live there must all sit at or above the lowest
        of their first fits, side by side, around the placed units above that height."""
        units = self.units
        floor: dict[int, int] = {}
        need: dict[int, int] = {}
        for i, o in ff.items():
            u = units[i]
            for t in range(u.first, u.last + 1):
                lo, hi = u.span(t)
                if hi > lo:
                    need[t] = need.get(t, 0) + hi - lo
                    if o + lo < floor.get(t, 1 << 62):
                        floor[t] = o + lo
        bound = 0
        for t, m in floor.items():
            total = m + need[t]
            for p in self.by_step[t]:
                op = offsets.get(p)
                if op is not None:
                    lo, hi = units[p].span(t)
                    total += max(0, op + hi - max(op + lo, m))
            if total > bound:
                bound = total
        return bound

    def _dfs(self, offsets: dict[int, int], ff: dict[int, int], top: int,
             last: int | None, discrepancies: int) -> None:
        if self.stopped or self.best <= self.lb:
            return
        self.nodes += 1
        if self.nodes > self.max_nodes or (self.nodes % 256 == 0
                                           and time.monotonic() > self.deadline):
            self.stopped = True
            return
        if not ff:
            if top < self.best:
                self.best = top
                self.best_offsets = dict(offsets)
            return
        units = self.units
        bound = max(top, self.lb, max(o + units[i].size for i, o in ff.items()))
        if bound >= self.best or self._step_bound(offsets, ff) >= self.best:
            return
        kids = sorted(ff, key=lambda i: self.rank[i])
        tried = 0
        for i in kids:
            if (last is not None and self.rank[i] < self.rank[last]
                    and last not in self.conf.pairs[i]):
                continue  # same layout as placing i before last: explored there
            o = ff[i]
            new_top = max(top, o + units[i].size)
            if new_top >= self.best:
                continue
            if tried > discrepancies:
                self.cut = True
                return
            cost = 1 if tried else 0
            tried += 1
            offsets[i] = o
            child_ff = {}
            for j, oj in ff.items():
                if j == i:
                    continue
                child_ff[j] = (_first_fit(j, units[j], offsets, self.conf)
                               if i in self.conf.pairs[j] else oj)
            self._dfs(offsets, child_ff, new_top, i, discrepancies - cost)
            del offsets[i]
            if self.stopped or self.best <= self.lb:
                return


def plan_arena(buffers: Sequence[Buffer], capacity: int | None = None,
               algorithm: str = "auto", time_limit_s: float = DEFAULT_TIME_LIMIT_S,
               max_nodes: int | None = None) -> ArenaPlan:
    """Give every buffer an offset; raise BudgetError when the arena exceeds ``capacity``.

    ``auto`` runs both greedy orders, then the two-ended layout, then the branch and bound
    with the best arena so far as the bound to beat, each only while none has reached the
    lower bound (which proves it optimal), and keeps the smallest arena (ties: the earliest
    tried).
    ``optimal`` alone starts from the greedy-by-size arena. The search stops at the lower
    bound, when its tree is exhausted (the result is then the best first-fit layout of any
    order), or after ``max_nodes`` nodes (default: in proportion to 1 / number of buffers);
    `Trial.complete` says which.
    """
    if algorithm not in ALGORITHMS:
        raise ValueError(f"unknown arena planning algorithm '{algorithm}' "
                         f"(known: {', '.join(ALGORITHMS)})")
    units = _units(buffers)
    conf = _Conflicts(units)
    lb = max(_live_profile(units), default=0)
    trials: list[Trial] = []
    results: list[tuple[str, dict[int, int]]] = []

    def keep(name: str, offsets: dict[int, int], complete: bool = True) -> None:
        trials.append(Trial(name, _top(units, offsets), complete))
        results.append((name, offsets))

    if algorithm in ("auto", "greedy-size"):
        keep("greedy-size", _greedy(units, conf, _order_by_size(units)))
    if algorithm in ("auto", "greedy-conflicts"):
        keep("greedy-conflicts", _greedy(units, conf, _order_by_conflicts(units, conf)))
    if algorithm == "two-ended" or (algorithm == "auto" and min(t.arena_bytes for t in trials)
                                    > lb):
        keep("two-ended", _two_ended(units, conf, lb))
    if algorithm == "optimal" or (algorithm == "auto" and min(t.arena_bytes for t in trials)
                                  > lb):
        seed_name, seed = min(results, key=lambda r: _top(units, r[1])) if results else (
            "greedy-size", _greedy(units, conf, _order_by_size(units)))
        if max_nodes is None:
            max_nodes = max(MIN_NODES, SEARCH_WORK // max(len(units), 1))
        search = _Search(units, conf, lb, _top(units, seed), dict(seed), max_nodes,
                         time_limit_s)
        search.run()
        assert search.best_offsets is not None
        keep("optimal", search.best_offsets, not search.stopped)
    # Smallest arena wins; on a tie the first tried (simplest) algorithm is reported.
    best_i = min(range(len(results)), key=lambda i: (trials[i].arena_bytes, i))
    name, offsets = results[best_i]
    placements = []
    for i, u in enumerate(units):
        for m, r in zip(u.members, u.rel, strict=True):
            placements.append(Placement(m.name, offsets[i] + r, m.size, m.first, m.last))
    placements.sort(key=lambda p: (p.offset, p.first, p.name))
    plan = ArenaPlan(name, _top(units, offsets), lb, tuple(placements), algorithm,
                     tuple(trials))
    verify_plan(buffers, plan)
    if capacity is not None:
        check_capacity(buffers, plan, capacity)
    return plan


def check_capacity(buffers: Sequence[Buffer], plan: ArenaPlan, capacity: int) -> None:
    """Raise BudgetError naming the bytes and the peak op when ``plan`` exceeds
    ``capacity``."""
    if plan.arena_bytes > capacity:
        raise BudgetError(
            f"arena needs {plan.arena_bytes:,} bytes but only {capacity:,} are available "
            f"(over by {plan.arena_bytes - capacity:,}; lower bound "
            f"{plan.lower_bound_bytes:,}); "
            f"peak at op {peak_step(buffers)}: {_peak_text(buffers)}",
            hint="a board with more RAM ('tinydeploy boards'), or a smaller model (fewer "
                 "channels, a smaller input)")


def peak_step(buffers: Sequence[Buffer]) -> int:
    """The first op step at which the live bytes reach the lower bound."""
    live = live_bytes(buffers)
    return live.index(max(live)) if live else 0


def _peak_text(buffers: Sequence[Buffer], limit: int = 3) -> str:
    step = peak_step(buffers)
    live = sorted((b for b in buffers if b.live_at(step)), key=lambda b: (-b.size, b.name))
    parts = [f"{b.name} {b.size:,} B" for b in live[:limit]]
    if len(live) > limit:
        parts.append(f"{len(live) - limit} more")
    return ", ".join(parts) if parts else "nothing live"


def verify_plan(buffers: Sequence[Buffer], plan: ArenaPlan) -> None:
    """Check a plan's invariants against its buffers; raise AssertionError on a violation.

    This is the planner's proof obligation: every buffer placed once, offsets aligned, no two
    buffers live at a common step sharing a byte unless one is declared in-place over the
    other and their offsets differ by exactly its shift, everything inside ``arena_bytes``,
    which is >= the bound.
    """
    by_name = {b.name: b for b in buffers}
    placed = {p.name: p for p in plan.placements}
    if set(placed) != set(by_name) or len(placed) != len(plan.placements):
        raise AssertionError("arena plan does not place every buffer exactly once")
    for name, b in by_name.items():
        p = placed[name]
        if p.offset < 0 or p.offset % b.align:
            raise AssertionError(f"buffer '{name}' at offset {p.offset} breaks alignment "
                                 f"{b.align}")
        if p.offset + b.padded_size > plan.arena_bytes:
            raise AssertionError(f"buffer '{name}' ends past the arena")
    if plan.arena_bytes < plan.lower_bound_bytes:
        raise AssertionError("arena smaller than its lower bound")
    for b in buffers:
        if b.inplace_of is not None and (placed[b.name].offset - placed[b.inplace_of].offset
                                         != b.inplace_shift):
            raise AssertionError(f"buffer '{b.name}' is declared {b.inplace_shift} bytes from "
                                 f"'{b.inplace_of}' but placed "
                                 f"{placed[b.name].offset - placed[b.inplace_of].offset} away")
    ordered = sorted(buffers, key=lambda b: (b.first, b.name))
    for x, a in enumerate(ordered):
        pa = placed[a.name]
        for b in ordered[x + 1:]:
            if b.first > a.last:
                break
            pb = placed[b.name]
            if pa.offset + a.size <= pb.offset or pb.offset + b.size <= pa.offset:
                continue
            if a.size == 0 or b.size == 0:
                continue
            if a.inplace_of == b.name or b.inplace_of == a.name:
                continue  # offsets checked against the declared shift above
            raise AssertionError(f"buffers '{a.name}' and '{b.name}' are live together and "
                                 f"overlap at offsets {pa.offset} and {pb.offset}")
