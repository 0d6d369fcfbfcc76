"""The arena planner: one contract for every algorithm, hand-computed layouts, properties on
random graphs, and the capacity error.

The contract is checked by simulating the arena byte by byte, independently of the planner's
own verification: walking the op steps in order, every buffer an op reads must still hold its
own bytes when the op runs, the buffers written at one step must not clobber each other, and
only a declared in-place pair may share bytes (at the same offset, the source dying there).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field, replace
from types import ModuleType

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tinydeploy.errors import BudgetError
from tinydeploy.plan.arena import ALGORITHMS, ArenaPlan, Buffer, lower_bound, plan_arena

FAST_NODES = 3_000  # keeps the search short in the fast tier


def padded(b: Buffer) -> int:
    return -(-b.size // b.align) * b.align


def expected_lower_bound(buffers: list[Buffer]) -> int:
    """Recomputed here from the definition: at each step the aligned sizes of the live
    buffers, a live in-place pair counted once where its members overlap (at the declared
    shift of the later one from the earlier)."""
    by_name = {b.name: b for b in buffers}
    steps = max((b.last for b in buffers), default=-1) + 1
    best = 0
    for t in range(steps):
        live = [b for b in buffers if b.first <= t <= b.last]
        total = sum(padded(b) for b in live)
        for b in live:
            src = by_name.get(b.inplace_of) if b.inplace_of else None
            if src is not None and src.first <= t <= src.last:
                shift = b.inplace_shift
                total -= max(0, min(padded(src), shift + padded(b)) - max(0, shift))
        best = max(best, total)
    return best


def check_contract(buffers: list[Buffer], plan: ArenaPlan) -> None:
    placed = {p.name: p for p in plan.placements}
    assert sorted(placed) == sorted(b.name for b in buffers)
    assert len(plan.placements) == len(buffers)
    for b in buffers:
        p = placed[b.name]
        assert (p.size, p.first, p.last) == (b.size, b.first, b.last)
        assert p.offset >= 0 and p.offset % b.align == 0, (b, p)
        assert p.offset + b.size <= plan.arena_bytes
    assert plan.lower_bound_bytes == expected_lower_bound(buffers)
    assert plan.arena_bytes >= plan.lower_bound_bytes
    assert plan.arena_bytes == max((placed[b.name].offset + padded(b) for b in buffers),
                                   default=0)
    # Byte-level simulation of the program.
    ids = {b.name: n for n, b in enumerate(buffers)}
    owner = np.full(plan.arena_bytes + 1, -1, dtype=np.int64)
    steps = max((b.last for b in buffers), default=-1) + 1

    def span(b: Buffer) -> slice:
        return slice(placed[b.name].offset, placed[b.name].offset + b.size)

    for t in range(steps):
        reads = [b for b in buffers if b.first < t <= b.last and b.size]
        writes = [b for b in buffers if b.first == t and b.size]
        for b in reads:
            assert (owner[span(b)] == ids[b.name]).all(), f"{b.name} clobbered before step {t}"
        for w in writes:
            owner[span(w)] = ids[w.name]
        for w in writes:
            assert (owner[span(w)] == ids[w.name]).all(), f"two outputs of step {t} collide"
        for b in reads:
            clobbered = set(owner[span(b)].tolist()) - {ids[b.name]}
            for c in clobbered:
                w = buffers[c]
                # Only the declared in-place successor, at its declared shift, as b dies.
                assert w.inplace_of == b.name and b.last == t, \
                    f"step {t} writes {w.name} over {b.name} while reading it"
                assert placed[w.name].offset - placed[b.name].offset == w.inplace_shift


# --- graphs for the tests ------------------------------------------------------------------


@dataclass
class G:
    """A tiny graph description: op k reads ``reads[k]`` and writes tensor ``k + 1``."""

    sizes: list[int]                         # tensor 0 is the input
    reads: list[list[int]] = field(default_factory=list)
    scratch: dict[int, int] = field(default_factory=dict)
    inplace_ops: set[int] = field(default_factory=set)   # out0 declared over in0 if safe
    aligns: dict[int, int] = field(default_factory=dict)

    def buffers(self) -> list[Buffer]:
        n = len(self.reads)
        first = {0: 0, **{k + 1: k for k in range(n)}}
        last = dict(first)
        for k, rs in enumerate(self.reads):
            for r in rs:
                last[r] = max(last[r], k)
        last[n] = max(n - 1, 0)  # the graph output lives to the end
        out = []
        claimed = set()
        for i, size in enumerate(self.sizes):
            src = None
            k = i - 1
            if k in self.inplace_ops and self.reads[k]:
                s = self.reads[k][0]
                if s != 0 and last[s] == k and s not in claimed and s != n:
                    src = f"x{s}"
                    claimed.add(s)
            out.append(Buffer(f"x{i}", size, first[i], last[i], self.aligns.get(i, 16), src))
        for k, size in sorted(self.scratch.items()):
            out.append(Buffer(f"s{k}", size, k, k))
        return out


def random_graph(rng: random.Random, n_ops: int, inplace: bool = True) -> G:
    sizes = [rng.choice([1, 2, 3, 4, 6, 8]) * rng.choice([16, 48, 100])]
    reads: list[list[int]] = []
    scratch = {}
    ops = set()
    for k in range(n_ops):
        kind = rng.choice(["chain", "chain", "branch", "residual", "concat"])
        prev = len(sizes) - 1
        if kind == "chain" or prev < 2:
            rs = [prev]
        elif kind == "branch":
            rs = [rng.randrange(max(0, prev - 3), prev + 1)]
        elif kind == "residual":
            rs = [prev, rng.randrange(max(0, prev - 4), prev)]
            if inplace and rng.random() < 0.7:
                ops.add(k)
        else:
            rs = sorted(rng.sample(range(max(0, prev - 4), prev + 1), min(3, prev + 1)))
        size = rng.choice([1, 2, 3, 4, 6, 8]) * rng.choice([1, 16, 48, 100]) + rng.randrange(3)
        if k in ops:
            size = sizes[rs[0]]
        sizes.append(size)
        reads.append(rs)
        if rng.random() < 0.25:
            scratch[k] = rng.choice([40, 256, 1000])
    aligns = {i: rng.choice([1, 4, 8, 16, 32]) for i in range(len(sizes)) if rng.random() < 0.3}
    return G(sizes, reads, scratch, ops, aligns)


# Hand-computed cases. Each is drawn as offset (up) over op step (right).

# A chain of three ops: a(0..1) -> b(1..2) -> c(2..2). Never more than two live together.
#
#   offset
#   64 +----+----+
#      | a  | c  |      a and c are never live together: c reuses a's bytes.
#   32 +----+----+----+
#      |    | b  |    |
#    0 +----+----+----+
#       t0   t1   t2
CHAIN = [Buffer("a", 32, 0, 1), Buffer("b", 32, 1, 2), Buffer("c", 32, 2, 2)]
CHAIN_ARENA = 64

# A residual block: x(0..2) is read by op 0 and by the add at op 2; y = f(x) (small),
# z = g(y), w = x + z, declared in-place over x (x dies at op 2). Live bytes: t0 x+y = 48,
# t1 x+y+z = 80, t2 x/w+z = 64 (x and w share), t3 w = 32.
#
#   offset
#   80 +---------+
#      |    y    |
#   64 +---------+---------+
#      |    x    |  x = w  |     w sits exactly on x from t2
#   32 +----+----+----+----+
#           |    z    |
#    0      +---------+
#       t0   t1   t2   t3
RESIDUAL = [
    Buffer("x", 32, 0, 2), Buffer("y", 16, 0, 1), Buffer("z", 32, 1, 2),
    Buffer("w", 32, 2, 3, inplace_of="x"),
]
RESIDUAL_ARENA = 80

# Largest-first is not always best. Lifetimes (steps) and sizes:
#   A 0..1 (64)   B 1..2 (32)   C 2..3 (64)   D 0..0 (32)   E 3..3 (32)
# Live: t0 A+D = 96, t1 A+B = 96, t2 B+C = 96, t3 C+E = 96 -> bound 96.
#
#   96 +----+----+----+----+
#      | D  | B  |    | E  |     B must sit where D and E also fit: at 64, above A and C
#   64 +----+----+----+----+
#      |    A    |    C    |     A and C are never live together: both at 0
#    0 +----+----+----+----+
#       t0   t1   t2   t3
STAGGERED = [Buffer("A", 64, 0, 1), Buffer("B", 32, 1, 2), Buffer("C", 64, 2, 3),
             Buffer("D", 32, 0, 0), Buffer("E", 32, 3, 3)]
STAGGERED_ARENA = 96


# Where both greedy orders fail. Live: t0 B+C = 80, t1 A+C = 48, t2 and t3 A+D = 80.
#   greedy-size: D(64)@0, B(48)@0, C(32)@48 (above B), A(16)@80 (above C and D) -> 96.
#   greedy-conflicts (A and C conflict twice): C@0, A@32, D@48, B@32 -> 112.
#   best: A against D, C against B (or the mirror image):
#
#   80 +----+--------------+
#      |    |      A       |
#   64 | B  +----+---------+
#      |    |    |         |
#   32 +----+    |    D    |
#      |    C    |         |
#    0 +---------+---------+
#       t0   t1   t2   t3
TRAP = [Buffer("A", 16, 1, 3), Buffer("B", 48, 0, 0), Buffer("C", 32, 0, 1),
        Buffer("D", 64, 2, 3)]
TRAP_ARENA = {"greedy-size": 96, "greedy-conflicts": 112, "two-ended": 80, "optimal": 80,
              "auto": 80}


def fixed_cases() -> list[tuple[str, list[Buffer]]]:
    rng = random.Random(7)
    cases = [("chain", CHAIN), ("residual", RESIDUAL), ("staggered", STAGGERED), ("trap", TRAP),
             ("empty", []), ("single", [Buffer("only", 10, 0, 0)]),
             ("zero-size", [Buffer("z", 0, 0, 1), Buffer("a", 16, 0, 1)])]
    for n in range(12):
        cases.append((f"random{n}", random_graph(rng, rng.randint(3, 14)).buffers()))
    return cases


@pytest.mark.parametrize("algorithm", ALGORITHMS)
@pytest.mark.parametrize("case", fixed_cases(), ids=lambda c: c[0])
def test_contract(algorithm: str, case: tuple[str, list[Buffer]]) -> None:
    _, buffers = case
    plan = plan_arena(buffers, algorithm=algorithm, max_nodes=FAST_NODES)
    check_contract(buffers, plan)
    assert plan.requested == algorithm
    if algorithm != "auto":
        assert plan.algorithm == algorithm
    # Identical on every run, and independent of the order the buffers are given in.
    for run in range(10):
        shuffled = list(buffers)
        random.Random(run).shuffle(shuffled)
        assert plan_arena(shuffled, algorithm=algorithm, max_nodes=FAST_NODES) == plan


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_hand_computed(algorithm: str) -> None:
    chain = plan_arena(CHAIN, algorithm=algorithm)
    assert (chain.arena_bytes, chain.lower_bound_bytes) == (CHAIN_ARENA, CHAIN_ARENA)
    assert chain.offset("a") == chain.offset("c") != chain.offset("b")
    res = plan_arena(RESIDUAL, algorithm=algorithm)
    assert res.lower_bound_bytes == RESIDUAL_ARENA == res.arena_bytes
    assert res.offset("w") == res.offset("x")
    if algorithm in ("auto", "optimal"):
        st_plan = plan_arena(STAGGERED, algorithm=algorithm)
        assert st_plan.arena_bytes == STAGGERED_ARENA == st_plan.lower_bound_bytes
        assert st_plan.offset("A") == st_plan.offset("C") == 0
        assert st_plan.offset("B") == 64


def test_search_beats_both_greedy_orders() -> None:
    for algorithm, arena in TRAP_ARENA.items():
        plan = plan_arena(TRAP, algorithm=algorithm)
        assert plan.arena_bytes == arena and plan.lower_bound_bytes == 80
    for algorithm in ("optimal", "auto"):
        plan = plan_arena(TRAP, algorithm=algorithm)
        assert plan.optimal
        check_contract(TRAP, plan)
        # A must sit against D (t2, t3) and C against B (t0), at opposite ends of the arena.
        assert abs(plan.offset("A") - plan.offset("D")) in (16, 64)
        assert abs(plan.offset("C") - plan.offset("B")) in (32, 48)
    # auto: the two-ended layout reaches the bound, so the search is not run
    assert plan.algorithm == "two-ended"
    assert [t.algorithm for t in plan.trials] == ["greedy-size", "greedy-conflicts",
                                                  "two-ended"]


def _chain_with_scratch(rng: random.Random, n: int) -> list[Buffer]:
    """A chain of ``n`` ops: op k reads t<k>, writes t<k+1>, some with a scratch buffer."""
    bufs = [Buffer(f"t{k}", rng.choice((16, 48, 96, 160, 400)), k, k + 1) for k in range(n)]
    bufs.append(Buffer(f"t{n}", 32, n, n))
    bufs += [Buffer(f"s{k}", rng.choice((16, 64)), k, k) for k in range(n) if rng.random() < 0.4]
    return bufs


def test_two_ended_reaches_the_bound_on_chains() -> None:
    """In a chain (with scratch) each output goes to the other end of the arena from its
    input and the scratch between them: the arena is the largest step's live bytes, which
    neither first-fit order reaches on every chain."""
    rng = random.Random(11)
    missed = 0
    for _ in range(40):
        bufs = _chain_with_scratch(rng, rng.randint(3, 12))
        plan = plan_arena(bufs, algorithm="two-ended")
        check_contract(bufs, plan)
        assert plan.arena_bytes == plan.lower_bound_bytes == lower_bound(bufs)
        missed += min(plan_arena(bufs, algorithm=a).arena_bytes
                      for a in ("greedy-size", "greedy-conflicts")) > plan.arena_bytes
    assert missed > 0   # the case is not one both greedy orders already solve


def test_two_ended_places_an_input_beside_a_drifting_chain() -> None:
    """The first layers of a MobileNet: the input dies at op 0, its output starts a chain of
    in-place layers; the chain can sit at one end only if its first member is at the top."""
    bufs = [Buffer("in", 432, 0, 0), Buffer("a", 288, 0, 1),
            Buffer("b", 288, 1, 2), Buffer("c", 576, 2, 3, inplace_of="b", inplace_shift=16),
            Buffer("d", 128, 3, 4), Buffer("e", 32, 4, 4)]
    plan = plan_arena(bufs, algorithm="two-ended")
    check_contract(bufs, plan)
    assert plan.arena_bytes == plan.lower_bound_bytes == 720
    assert plan.offset("a") == 720 - 288 and plan.offset("in") == 0


def _bench() -> ModuleType:
    from benchmarks import bench_plan

    return bench_plan


def test_benchmark_graphs() -> None:
    """The DS-CNN needs exactly its two largest activations; on a small MobileNetV2-like
    model both greedy orders miss the bound and the search reaches it."""
    bench = _bench()
    dscnn = bench.dscnn_buffers()
    assert plan_arena(dscnn).arena_bytes == lower_bound(dscnn) == 2 * 25 * 5 * 64
    mb = bench.mobilenet_v2_buffers(48, 1.0, False, bench.MOBILENET_SMALL, stem=8, last=0)
    greedy = min(plan_arena(mb, algorithm=a).arena_bytes
                 for a in ("greedy-size", "greedy-conflicts"))
    auto = plan_arena(mb)
    check_contract(mb, auto)
    assert greedy > auto.arena_bytes == auto.lower_bound_bytes
    many = bench.random_model_buffers(100, 0)
    check_contract(many, plan_arena(many))


def test_inplace_is_only_an_exact_overlap_and_saves_memory() -> None:
    without = [Buffer(b.name, b.size, b.first, b.last) for b in RESIDUAL]
    assert lower_bound(without) == 96  # t2: x, z and w all live
    assert lower_bound(RESIDUAL) == RESIDUAL_ARENA
    assert plan_arena(without).arena_bytes == 96
    # A smaller in-place output still sits on its source's first bytes.
    smaller = [Buffer("x", 64, 0, 1), Buffer("y", 16, 1, 2, inplace_of="x"),
               Buffer("k", 48, 0, 2)]
    plan = plan_arena(smaller)
    check_contract(smaller, plan)
    assert plan.offset("y") == plan.offset("x")


def test_alignment_per_buffer() -> None:
    bufs = [Buffer("a", 3, 0, 1, align=4), Buffer("b", 5, 0, 1, align=64),
            Buffer("c", 7, 1, 1, align=1), Buffer("d", 1, 0, 0, align=8)]
    for algorithm in ALGORITHMS:
        plan = plan_arena(bufs, algorithm=algorithm)
        check_contract(bufs, plan)
        assert plan.offset("b") % 64 == 0
    assert lower_bound(bufs) == 4 + 64 + 8  # step 0: a, b, d


def test_capacity_exceeded_names_the_numbers() -> None:
    bufs = [Buffer("input", 4_000, 0, 0), Buffer("conv_out", 8_000, 0, 1),
            Buffer("dw_out", 8_000, 1, 1)]
    assert plan_arena(bufs, capacity=16_000).arena_bytes == 16_000
    with pytest.raises(BudgetError) as e:
        plan_arena(bufs, capacity=12_000)
    msg = e.value.message
    assert "16,000" in msg and "12,000" in msg and "4,000" in msg  # need, have, over
    assert "conv_out" in msg and e.value.hint


@pytest.mark.parametrize("bad", [
    [Buffer("a", 16, 0, 1), Buffer("a", 16, 1, 2)],                    # duplicate name
    [Buffer("a", -1, 0, 1)],                                           # negative size
    [Buffer("a", 16, 2, 1)],                                           # ends before start
    [Buffer("a", 16, 0, 1), Buffer("b", 16, 1, 2, inplace_of="zz")],   # unknown source
    [Buffer("a", 16, 0, 2), Buffer("b", 16, 1, 2, inplace_of="a")],    # source outlives
    [Buffer("a", 16, 0, 1), Buffer("b", 16, 1, 2, inplace_of="a"),
     Buffer("c", 16, 1, 2, inplace_of="a")],                           # two over one
])
def test_malformed_buffers_are_rejected(bad: list[Buffer]) -> None:
    with pytest.raises(ValueError):
        plan_arena(bad)


def test_the_checker_catches_bad_plans() -> None:
    """The simulation above is what the other tests rely on: it must reject broken layouts."""
    good = plan_arena(RESIDUAL)
    check_contract(RESIDUAL, good)

    def moved(plan: ArenaPlan, name: str, offset: int) -> ArenaPlan:
        ps = tuple(replace(p, offset=offset) if p.name == name else p for p in plan.placements)
        return replace(plan, placements=ps)

    z = good.offset("z")
    for bad in (moved(good, "y", z),            # y and z live together at t1
                moved(good, "w", z),            # w over z, which the add is reading
                moved(good, "w", good.offset("x") + 16),  # in-place, but shifted
                moved(good, "y", good.offset("y") + 8)):  # misaligned
        with pytest.raises(AssertionError):
            check_contract(RESIDUAL, bad)
    undeclared = [replace(b, inplace_of=None) for b in RESIDUAL]
    with pytest.raises(AssertionError):
        check_contract(undeclared, replace(good, lower_bound_bytes=96))


def test_unknown_algorithm() -> None:
    with pytest.raises(ValueError, match="greedy-size"):
        plan_arena(CHAIN, algorithm="best")


def test_auto_keeps_the_best_and_reports_trials() -> None:
    rng = random.Random(3)
    for _ in range(25):
        bufs = random_graph(rng, rng.randint(4, 16), inplace=False).buffers()
        auto = plan_arena(bufs, max_nodes=FAST_NODES)
        greedy = [plan_arena(bufs, algorithm=a) for a in ("greedy-size", "greedy-conflicts")]
        assert auto.arena_bytes == min(t.arena_bytes for t in auto.trials)
        assert auto.arena_bytes <= min(g.arena_bytes for g in greedy)
        assert {t.algorithm for t in auto.trials} >= {"greedy-size", "greedy-conflicts"}
        tried = {t.algorithm: t.arena_bytes for t in auto.trials}
        if min(g.arena_bytes for g in greedy) > auto.lower_bound_bytes:
            assert "two-ended" in tried
            if tried["two-ended"] > auto.lower_bound_bytes:
                assert "optimal" in tried


@st.composite
def graphs(draw: st.DrawFn) -> list[Buffer]:
    seed = draw(st.integers(0, 2**32 - 1))
    n_ops = draw(st.integers(1, 12))
    inplace = draw(st.booleans())
    return random_graph(random.Random(seed), n_ops, inplace).buffers()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(graphs(), st.sampled_from(ALGORITHMS))
def test_random_graphs_keep_the_contract(buffers: list[Buffer], algorithm: str) -> None:
    plan = plan_arena(buffers, algorithm=algorithm, max_nodes=FAST_NODES)
    check_contract(buffers, plan)
    if algorithm in ("optimal", "auto"):
        greedy = plan_arena(buffers, algorithm="greedy-size")
        assert plan.arena_bytes <= greedy.arena_bytes


@pytest.mark.slow
@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 2**32 - 1), st.integers(1, 60), st.booleans())
def test_sweep_larger_graphs(seed: int, n_ops: int, inplace: bool) -> None:
    buffers = random_graph(random.Random(seed), n_ops, inplace).buffers()
    plans = {a: plan_arena(buffers, algorithm=a) for a in ALGORITHMS}
    for plan in plans.values():
        check_contract(buffers, plan)
    assert plans["auto"].arena_bytes <= min(p.arena_bytes for p in plans.values())
