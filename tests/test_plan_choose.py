"""Selection weighed against the board's budget (`tinydeploy.plan.choose`, --optimize).

For every test model, every --optimize and the boards of three cores: balanced's and size's
arena is within the reference kernels' plan R (`choose.arena_limit`), speed's whole budget
within the board's RAM with the stack reserve. Then what each mode promises:
balanced never stores an op's constants in more bytes than the reference kernel's, speed
never costs more (estimated) instructions than balanced, size never more flash.

The search (`choose.cheapest_fitting`) is checked against brute force on small synthetic
problems, including one where demoting one op at a time (the previous rule) is not optimal,
and on the M55, where the DS-CNN's default build must keep every mve layer.
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tinydeploy.boards import get_board
from tinydeploy.model.loader import load_tflite
from tinydeploy.plan.budget import compute_budget, sized_stack_reserve, stack_estimate
from tinydeploy.plan.choose import (
    OPTIMIZE_CHOICES,
    Optimize,
    arena_limit,
    board_arena_room,
    cheapest_fitting,
    choose_kernels,
    reference_plan,
)

ROOT = Path(__file__).resolve().parent.parent
MODELS = sorted((ROOT / "tests" / "fixtures").glob("*.tflite")) + [
    ROOT / "models" / "kws" / "dscnn_int8.tflite"]
BOARDS = ("mps2-an386", "mps3-an547", "microbit-v1")


def _totals(choice) -> tuple[int, int]:  # type: ignore[no-untyped-def]
    instr = flash = 0
    for layer in choice.layers:
        mine = next(c for c, why in layer.alternatives if why is None)
        instr += mine.instructions
        flash += mine.flash_bytes
    return instr, flash


@pytest.mark.parametrize("model", MODELS, ids=[m.stem for m in MODELS])
def test_no_mode_exceeds_its_arena_limit(model: Path) -> None:
    g = load_tflite(model)
    ref = reference_plan(g).arena_bytes
    for board_id in BOARDS:
        board = get_board(board_id)
        got = {m: choose_kernels(g, board, m) for m in OPTIMIZE_CHOICES}
        for mode, c in got.items():
            assert ref == c.reference_arena_bytes, (board_id, mode)
            assert len(c.selection.choices) == len(g.operators)
            if mode == "speed" and c.fallback is None:
                # speed: the board's free RAM next to the stack reserve, and the whole
                # build fits with that reserve
                room = board_arena_room(g, board, c.selection, "bench")
                assert room is not None and c.arena_limit_bytes is not None
                assert c.plan.arena_bytes <= c.arena_limit_bytes, board_id
                budget = compute_budget(
                    c.selection, c.plan.arena_bytes, board, "bench",
                    input_bytes=sum(t.nbytes for t in g.inputs),
                    stack_reserved=sized_stack_reserve(stack_estimate(c.selection, "bench")))
                assert budget.fits, (board_id, budget.ram, budget.flash)
                continue
            assert c.arena_limit_bytes == arena_limit(Optimize(mode), ref) == ref, \
                (board_id, mode)
            assert c.plan.arena_bytes <= ref, (board_id, mode)
        for layer in got["balanced"].layers:
            mine = next(c for c, why in layer.alternatives if why is None)
            refs = [c.const_bytes for c, _ in layer.alternatives if c.impl == "ref"]
            assert not refs or mine.const_bytes <= min(refs), (board_id, layer)
        speed, balanced, size = (_totals(got[m]) for m in ("speed", "balanced", "size"))
        assert speed[0] <= balanced[0], board_id
        assert size[1] <= balanced[1], board_id


def test_balanced_takes_the_int8_dsp_kernels_size_keeps_the_reference_arena() -> None:
    """On the Cortex-M4 the dsp convolutions keep the model's int8 weights and take a few
    hundred bytes of scratch: balanced picks them within the reference kernels' arena (the
    scratch fits beside the in-place chain), size keeps to the least flash and pays for it in
    instructions; both say why per layer."""
    g = load_tflite(ROOT / "models" / "kws" / "dscnn_int8.tflite")
    board = get_board("mps2-an386")
    balanced = choose_kernels(g, board, Optimize.BALANCED)
    size = choose_kernels(g, board, Optimize.SIZE)
    convs = [ch for ch in balanced.selection.choices
             if g.operators[ch.op_index].type_name in ("CONV_2D", "DEPTHWISE_CONV_2D")]
    assert convs and {ch.variant.impl for ch in convs} == {"dsp"}
    assert balanced.plan.arena_bytes <= balanced.reference_arena_bytes
    assert size.plan.arena_bytes <= size.reference_arena_bytes
    assert _totals(balanced)[0] < _totals(size)[0]
    for lc in balanced.layers:
        assert sum(why is None for _, why in lc.alternatives) == 1, lc


def test_plan_cli_shows_the_choice_per_layer() -> None:
    model = ROOT / "models" / "kws" / "dscnn_int8.tflite"
    r = subprocess.run([sys.executable, "-m", "tinydeploy", "plan", str(model), "--board",
                        "mps2-an386", "--optimize", "speed", "--json"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    sel = json.loads(r.stdout)["selection"]
    assert sel["optimize"] == "speed" and len(sel["layers"]) == 12
    for layer in sel["layers"]:
        assert sum(a["passed_over"] is None for a in layer["alternatives"]) == 1
        assert all(a["instructions"] >= 0 and a["const_bytes"] >= 0
                   for a in layer["alternatives"])
        # the chosen kernel is among the alternatives, marked, with its flash and scratch
        mine = [a for a in layer["alternatives"] if a["chosen"]]
        assert len(mine) == 1 and mine[0]["symbol"] == layer["chosen"]
        assert mine[0]["flash_bytes"] == mine[0]["const_bytes"] + mine[0]["code_bytes"]
        assert all(a["passed_over"] for a in layer["alternatives"] if not a["chosen"])
    total = sum(a["instructions"] for layer in sel["layers"] for a in layer["alternatives"]
                if a["chosen"])
    assert sel["estimated_instructions"] == total > 0
    assert set(sel["modes"]) == {"balanced", "speed", "size"}
    assert sel["modes"]["speed"]["instructions"] == total
    assert sel["modes"]["size"]["instructions"] >= total
    r = subprocess.run([sys.executable, "-m", "tinydeploy", "plan", str(model), "--board",
                        "mps2-an386"], capture_output=True, text=True, timeout=120,
                       env={**os.environ, "COLUMNS": "240"})
    assert r.returncode == 0, r.stderr
    assert "instr. (est.)" in r.stdout and "modes (estimates): *balanced" in r.stdout
    assert "estimated instructions per inference: " in r.stdout
    r = subprocess.run([sys.executable, "-m", "tinydeploy", "plan", str(model), "--board",
                        "mps2-an386", "--optimize", "fastest"], capture_output=True, text=True)
    assert r.returncode == 2 and "balanced" in r.stderr


# --- the search -------------------------------------------------------------------------


def _arena(sizes: list[list[int]], vec: tuple[int, ...]) -> int:
    """A synthetic arena: ops k and k+1 are live together (their bytes add up)."""
    s = [sizes[k][j] for k, j in enumerate(vec)]
    return max((a + b for a, b in zip(s, s[1:], strict=False)), default=s[0] if s else 0)


def _greedy(costs: list[list[int]], sizes: list[list[int]], bound: int) -> int:
    """The previous rule: from the cheapest choice, change one op at a time, taking the change
    that shrinks the arena for the least added cost, until it fits. Its total cost."""
    vec = [0] * len(costs)
    while _arena(sizes, tuple(vec)) > bound:
        now = _arena(sizes, tuple(vec))
        moves = [(costs[k][j] - costs[k][vec[k]], k, j) for k in range(len(vec))
                 for j in range(len(costs[k])) if j != vec[k]
                 and _arena(sizes, tuple(vec[:k] + [j] + vec[k + 1:])) < now]
        _, k, j = min(moves)
        vec[k] = j
    return sum(costs[k][j] for k, j in enumerate(vec))


def _search(costs: list[list[int]], sizes: list[list[int]], bound: int
            ) -> tuple[tuple[int, ...] | None, int]:
    return cheapest_fitting([[(c,) for c in row] for row in costs],
                            lambda vec, _trial: _arena(sizes, vec) <= bound, 10_000)


def _brute(costs: list[list[int]], sizes: list[list[int]], bound: int) -> int | None:
    fits = [sum(costs[k][j] for k, j in enumerate(v))
            for v in itertools.product(*(range(len(r)) for r in costs))
            if _arena(sizes, v) <= bound]
    return min(fits, default=None)


def test_search_finds_the_optimum_where_one_op_at_a_time_does_not() -> None:
    """Two ops live together, 8 + 8 bytes against a limit of 8. Demoting op 1 (cost 1,
    shrinks to 15) is the cheapest shrinking step, but only demoting op 0 (cost 10) makes it
    fit, and then op 1's step was for nothing: greedy pays 11, the optimum is 10."""
    costs, sizes = [[0, 10], [0, 1]], [[8, 0], [8, 7]]
    assert _greedy(costs, sizes, 8) == 11
    vec, trials = _search(costs, sizes, 8)
    assert vec == (1, 0) and trials >= 2
    assert sum(costs[k][j] for k, j in enumerate(vec)) == _brute(costs, sizes, 8) == 10


def test_search_equals_brute_force_on_random_problems() -> None:
    rng = np.random.default_rng(12)
    worse = 0
    for _ in range(60):
        n = int(rng.integers(2, 6))
        costs = [sorted(int(c) for c in rng.integers(0, 50, size=int(rng.integers(1, 4))))
                 for _ in range(n)]
        sizes = [[int(x) for x in rng.integers(0, 20, size=len(r))] for r in costs]
        bound = int(rng.integers(5, 40))
        best = _brute(costs, sizes, bound)
        vec, _ = _search(costs, sizes, bound)
        if best is None:
            assert vec is None
            continue
        assert vec is not None and _arena(sizes, vec) <= bound
        assert sum(costs[k][j] for k, j in enumerate(vec)) == best
        ref = [min(range(len(r)), key=lambda j, r=r: r[j]) for r in sizes]
        if _arena(sizes, tuple(ref)) <= bound:   # greedy needs a way down to terminate
            worse += _greedy_or_none(costs, sizes, bound) != best
    assert worse >= 1, "no random problem where the greedy rule is worse"


def _greedy_or_none(costs: list[list[int]], sizes: list[list[int]], bound: int) -> int | None:
    try:
        return _greedy(costs, sizes, bound)
    except ValueError:   # no single change shrinks the arena: greedy is stuck
        return None


def test_dscnn_default_on_the_m55_keeps_every_mve_layer() -> None:
    """The pointwise mve kernel's back-to-front twin keeps the depthwise/pointwise chain in
    place, so the default build takes the mve kernel on every depthwise and pointwise layer,
    within the reference kernels' arena, and costs (estimated) within 10 % of speed."""
    g = load_tflite(ROOT / "models" / "kws" / "dscnn_int8.tflite")
    board = get_board("mps3-an547")
    balanced = choose_kernels(g, board, Optimize.BALANCED)
    speed = choose_kernels(g, board, Optimize.SPEED)
    for ch in balanced.selection.choices:
        if g.operators[ch.op_index].type_name == "DEPTHWISE_CONV_2D" or (
                g.operators[ch.op_index].type_name == "CONV_2D" and ch.op_index > 0):
            assert ch.variant.impl == "mve", (ch.op_index, ch.variant.symbol)
    assert balanced.plan.arena_bytes <= balanced.arena_limit_bytes
    assert _totals(balanced)[0] <= 1.1 * _totals(speed)[0]


def test_arena_limit_replaces_the_modes_limit() -> None:
    """--arena-limit: speed within an explicit limit between R and the board's room stays
    within it; a limit no selection can meet is a BudgetError with the figures."""
    from tinydeploy.errors import BudgetError

    g = load_tflite(ROOT / "tests" / "fixtures" / "dscnn_kws.tflite")
    board = get_board("mps2-an386")
    ref = reference_plan(g).arena_bytes
    c = choose_kernels(g, board, "speed", arena_limit_bytes=ref)
    assert c.arena_limit_bytes == ref and c.plan.arena_bytes <= ref
    with pytest.raises(BudgetError, match="--arena-limit 64 B"):
        choose_kernels(g, board, "balanced", arena_limit_bytes=64)


@pytest.mark.target
def test_plan_prints_the_measured_total_beside_the_estimate(tmp_path: Path) -> None:
    """After `bench` has run (its record in the default build folder), `plan` of the same
    model, board and mode prints the measured total beside the estimate (and --json carries
    it); another mode, or the model changed, has no measurement to show."""
    model = tmp_path / "mlp.tflite"
    model.write_bytes((Path(__file__).parent / "fixtures" / "mlp.tflite").read_bytes())

    def tool(*argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "tinydeploy", *argv], cwd=tmp_path,
                              capture_output=True, text=True, timeout=300)

    r = tool("plan", str(model), "--board", "mps2-an386")
    assert r.returncode == 0 and "measured by bench" not in r.stdout, r.stderr
    b = tool("bench", str(model), "--board", "mps2-an386", "--json")
    assert b.returncode == 0, b.stderr
    measured = json.loads(b.stdout)["per_inference"]
    r = tool("plan", str(model), "--board", "mps2-an386", "--json")
    m = json.loads(r.stdout)["selection"]["measured"]
    assert m["per_inference"] == measured and m["unit"] == "instructions"
    r = tool("plan", str(model), "--board", "mps2-an386")
    assert f"measured by bench: {measured:,} instructions" in r.stdout
    assert "measured by bench" not in tool("plan", str(model), "--board", "mps2-an386",
                                           "--optimize", "size").stdout
    model.write_bytes(model.read_bytes() + b"\0")         # other bytes: not this model's
    assert "measured by bench" not in tool("plan", str(model), "--board", "mps2-an386").stdout
