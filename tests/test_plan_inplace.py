"""Partial in-place overlaps: the planner's shifted chains and the per-op proof.

The real-C check of the declared access orders is tests/golden/test_inplace_host.py; here
the planner and the verifier are checked on plain buffers and on the committed DS-CNN.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from tinydeploy.boards import get_board
from tinydeploy.kernels.access import (
    AccessOrder,
    overlap_violation,
    tolerated_shifts,
)
from tinydeploy.kernels.registry import select_kernels
from tinydeploy.model.loader import load_tflite
from tinydeploy.plan.arena import ALGORITHMS, ArenaPlan, Buffer, lower_bound, plan_arena
from tinydeploy.plan.lifetimes import (
    GraphPlan,
    buffer_sets,
    buffers_from_graph,
    graph_buffers,
    plan_graph,
    verify_inplace,
)

KWS = Path(__file__).resolve().parent.parent / "models" / "kws" / "dscnn_int8.tflite"


def _slow_shifts(order: AccessOrder, align: int) -> tuple[int, int]:
    lead = 0
    while overlap_violation(order, lead) is not None:
        lead -= align
    trail = 0
    while overlap_violation(order, trail) is not None:
        trail += align
    return lead, trail


@pytest.mark.parametrize("seed", range(12))
def test_tolerated_shifts_match_exhaustive_search(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n_in, n_out = int(rng.integers(1, 60)), int(rng.integers(1, 60))
    steps = int(rng.integers(1, 20))
    w = np.sort(rng.integers(0, steps, n_out))
    if seed % 3 == 2:
        w = rng.integers(0, steps, n_out)   # not monotone: the one-by-one path
    r = rng.integers(-1, steps, n_in)
    order = AccessOrder(r.astype(np.int64), w.astype(np.int64))
    for align in (1, 4, 16):
        assert tolerated_shifts(order, align) == _slow_shifts(order, align)


def test_shifted_chain_is_planned_rigidly() -> None:
    """A lead then a trail: the chain's members keep their declared distances, the arena
    reaches the bound of the spans, on every algorithm."""
    bufs = [Buffer("a", 100, 0, 1), Buffer("b", 100, 1, 2, inplace_of="a", inplace_shift=-32),
            Buffer("c", 100, 2, 3, inplace_of="b", inplace_shift=32), Buffer("d", 50, 1, 1),
            Buffer("e", 40, 3, 3)]
    assert lower_bound(bufs) == 144 + 64
    for algo in ALGORITHMS:
        plan = plan_arena(bufs, algorithm=algo)
        assert plan.offset("b") - plan.offset("a") == -32
        assert plan.offset("c") - plan.offset("b") == 32
        assert plan.arena_bytes == plan.lower_bound_bytes, algo


def test_shift_off_the_alignment_grid_is_refused() -> None:
    with pytest.raises(ValueError, match="not a multiple"):
        plan_arena([Buffer("a", 64, 0, 1), Buffer("b", 64, 1, 2, inplace_of="a",
                                                  inplace_shift=-8)])


def test_verify_plan_rejects_a_moved_member() -> None:
    bufs = [Buffer("a", 64, 0, 1), Buffer("b", 64, 1, 2, inplace_of="a", inplace_shift=-16)]
    plan = plan_arena(bufs)
    moved = tuple(replace(p, offset=plan.offset("a")) if p.name == "b" else p
                  for p in plan.placements)
    from tinydeploy.plan.arena import verify_plan

    with pytest.raises(AssertionError, match="declared -16 bytes"):
        verify_plan(bufs, ArenaPlan(plan.algorithm, plan.arena_bytes, plan.lower_bound_bytes,
                                    moved))


@pytest.mark.parametrize("board", [None, "mps2-an386", "mps3-an547", "microbit-v1"])
def test_dscnn_overlaps_depthwise_and_pointwise(board: str | None) -> None:
    g = load_tflite(KWS)
    sel = select_kernels(g, get_board(board) if board else None)
    gp = plan_graph(g, sel)
    bufs = buffers_from_graph(g, sel)
    apart = [replace(b, inplace_of=None, inplace_shift=0) for b in bufs]
    assert gp.arena_bytes < lower_bound(apart)       # below the no-overlap bound
    overlapped = {g.operators[b.first].type_name for b in bufs if b.inplace_of is not None}
    assert overlapped == {"DEPTHWISE_CONV_2D", "CONV_2D"}
    verify_inplace(g, gp.selection, gp)


def test_verify_inplace_rejects_an_unsafe_overlap() -> None:
    """The depthwise output moved onto its input (shift 0) overwrites rows still to be read."""
    g = load_tflite(KWS)
    sel = select_kernels(g, None)
    gp = plan_graph(g, sel)
    k = next(i for i, op in enumerate(g.operators) if op.type_name == "DEPTHWISE_CONV_2D")
    op = g.operators[k]
    src, dst = gp.buffer_of(op.inputs[0]), gp.buffer_of(op.outputs[0])
    moved = tuple(replace(p, offset=gp.plan.offset(src)) if p.name == dst else p
                  for p in gp.plan.placements)
    bad = GraphPlan(replace(gp.plan, placements=moved), gp.buffers, gp.tensor_buffers,
                    gp.num_ops)
    with pytest.raises(AssertionError, match=f"op {k} .*before its last read"):
        verify_inplace(g, sel, bad)


@pytest.mark.parametrize("board", ["mps2-an386", "nrf52840dk", "mps2-an500"])
def test_dscnn_arena_on_dsp_boards_within_9000(board: str) -> None:
    """The chain of overlaps does not drift down and the arena stays under 9,000 B (the
    issue's target; without overlaps it was 16,256): either the depthwise layers lead and the
    back-to-front pointwise twin trails, or (the 3x3 lines kernel, whose order tolerates an
    output exactly on its input) the depthwise layers run in place and the pointwise forward."""
    g = load_tflite(KWS)
    sel = select_kernels(g, get_board(board))
    gp = plan_graph(g, sel)
    assert gp.arena_bytes <= 9_000
    symbols = [c.variant.symbol for c in gp.selection.choices]
    assert {"td_conv2d_1x1_back_s8_dsp", "td_conv2d_1x1_s8_dsp"} & set(symbols), symbols
    assert "td_conv2d_1x1_back_s8_dsp" not in [c.variant.symbol for c in sel.choices]
    verify_inplace(g, gp.selection, gp)


def test_render_refuses_a_plan_made_for_other_kernels(tmp_path: Path) -> None:
    """A layout is safe for the kernels it was planned for only: the dsp board's plan (its
    depthwise outputs on their inputs, or trailing pointwise outputs for the twin) rendered
    with the reference kernels selected is refused before any file is written."""
    from tinydeploy.codegen.project import render_project

    board = get_board("mps2-an386")
    g = load_tflite(KWS)
    gp = plan_graph(g, select_kernels(g, board))
    sel = select_kernels(g, None)
    with pytest.raises(AssertionError, match="before its last read"):
        render_project(g, sel, gp, board, "validate", tmp_path / "p")
    assert not (tmp_path / "p").exists() or not any((tmp_path / "p").iterdir())


@pytest.mark.parametrize("board", [None, "mps2-an386", "microbit-v1"])
def test_fewer_overlaps_keep_the_bound_and_plan_no_larger(board: str | None) -> None:
    """The second buffer set overlaps only where a step above the first set's lower bound
    needs it: same lower bound, a subset of the overlapped ops, and `plan_graph` keeps the
    smaller of the two layouts, each verified."""
    g = load_tflite(KWS)
    sel = select_kernels(g, get_board(board) if board else None)
    sets = buffer_sets(g, sel)
    every = sets[0].buffers
    assert every == buffers_from_graph(g, sel)
    gp = plan_graph(g, sel)
    for gb in sets:
        assert lower_bound(gb.buffers) == lower_bound(every)
        linked = {b.first for b in gb.buffers if b.inplace_of is not None}
        assert linked <= {b.first for b in every if b.inplace_of is not None}
        plan = plan_arena(gb.buffers)
        assert gp.arena_bytes <= plan.arena_bytes
        verify_inplace(g, gb.selection, GraphPlan(plan, gb.buffers, gb.tensor_buffers,
                                                  gb.num_ops, gb.selection))
    fewer = graph_buffers(g, sel, overlap_above=0)   # every step needs more than 0 bytes
    assert fewer.buffers == every
    apart = graph_buffers(g, sel, overlap_above=1 << 30)
    assert all(b.inplace_of is None for b in apart.buffers)
