"""Tensor lifetimes and graph plans: hand-built graphs with stand-in kernel choices, and the
fixture models with the real kernel selection."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_plan_arena import check_contract

from tinydeploy.kernels.access import AccessOrder
from tinydeploy.kernels.registry import (
    ConstArray,
    KernelCall,
    KernelChoice,
    KernelVariant,
    Selection,
    select_kernels,
)
from tinydeploy.model.ir import DType, Graph, Operator, Subgraph, Tensor
from tinydeploy.model.loader import load_tflite
from tinydeploy.plan.arena import ALGORITHMS, Buffer, plan_arena
from tinydeploy.plan.lifetimes import buffer_sets, buffers_from_graph, plan_graph

FIX = Path(__file__).parent / "fixtures"


def _variant(op: str, *, alias: bool = False, inplace: bool = False) -> KernelVariant:
    return KernelVariant(op=op, impl="alias" if alias else "ref", symbol=f"td_{op.lower()}",
                         sources=(), requires=frozenset(), accepts=lambda g, o: None,
                         prepare=lambda g, o: None,  # type: ignore[arg-type,return-value]
                         inplace=inplace, alias=alias)


def _call(op: str, scratch: int = 0) -> KernelCall:
    w = ConstArray("filter", "int8_t", np.zeros(10, np.int8))
    return KernelCall(f"td_{op.lower()}", "td_p", (), (w,), ("in0", "out0"), scratch)


def build(tensors: list[tuple[int, ...] | tuple[tuple[int, ...], str]],
          ops: list[tuple[str, tuple[int, ...], tuple[int, ...]]],
          inputs: tuple[int, ...], outputs: tuple[int, ...],
          alias: set[int] = frozenset(), inplace: set[int] = frozenset(),  # type: ignore
          scratch: dict[int, int] | None = None) -> tuple[Graph, Selection]:
    """Tensors are int8 shapes; a shape paired with "const" has data, with "var" is variable."""
    ts = []
    for i, spec in enumerate(tensors):
        kind = ""
        if len(spec) == 2 and isinstance(spec[0], tuple):
            spec, kind = spec  # type: ignore[misc]
        shape = tuple(spec)  # type: ignore[arg-type]
        data = np.zeros(shape, np.int8) if kind == "const" else None
        ts.append(Tensor(i, f"tensor{i}", shape, DType.INT8, None, data, kind == "var"))
    operators = tuple(Operator(k, name, 1, ins, outs) for k, (name, ins, outs) in
                      enumerate(ops))
    graph = Graph("0" * 64, (Subgraph("main", tuple(ts), operators, inputs, outputs),))
    scratch = scratch or {}
    choices = tuple(
        KernelChoice(k, _variant(name, alias=k in alias, inplace=k in inplace),
                     None if k in alias else _call(name, scratch.get(k, 0)))
        for k, (name, _, _) in enumerate(ops))
    return graph, Selection(choices)


def by_name(buffers: tuple[Buffer, ...]) -> dict[str, Buffer]:
    return {b.name: b for b in buffers}


def test_chain_with_alias_constants_and_scratch() -> None:
    # t0 input -> CONV(t1 weights) -> t2 -> RESHAPE -> t3 -> FC(t4 weights) -> t5 -> SOFTMAX
    # -> t6 output. The reshape costs nothing: t3 is t2's bytes, and t2 lives until the FC.
    graph, sel = build(
        [(1, 8, 8, 1), ((4, 3, 3, 1), "const"), (1, 8, 8, 4), (1, 256), ((10, 256), "const"),
         (1, 10), (1, 10)],
        [("CONV_2D", (0, 1), (2,)), ("RESHAPE", (2,), (3,)),
         ("FULLY_CONNECTED", (3, 4), (5,)), ("SOFTMAX", (5,), (6,))],
        inputs=(0,), outputs=(6,), alias={1}, scratch={0: 100, 2: 0})
    bufs = by_name(buffers_from_graph(graph, sel))
    assert set(bufs) == {"t0", "t2", "t5", "t6", "scratch0"}
    assert (bufs["t0"].first, bufs["t0"].last) == (0, 0)
    assert (bufs["t2"].first, bufs["t2"].last, bufs["t2"].size) == (0, 2, 256)
    assert (bufs["t5"].first, bufs["t5"].last) == (2, 3)
    assert (bufs["t6"].first, bufs["t6"].last) == (3, 3)
    assert (bufs["scratch0"].first, bufs["scratch0"].last, bufs["scratch0"].size) == (0, 0, 100)
    gp = plan_graph(graph, sel)
    check_contract(list(gp.buffers), gp.plan)
    assert gp.tensor_offset(3) == gp.tensor_offset(2)
    assert gp.scratch_offset(0) == gp.plan.offset("scratch0")
    assert gp.has_scratch(0) and not gp.has_scratch(2)
    with pytest.raises(KeyError):
        gp.tensor_offset(1)  # constant: in flash, not in the arena
    # step 0: input 64 + conv out 256 + scratch 112 (aligned) = 432.
    assert gp.live_bytes() == (64 + 256 + 112, 256, 256 + 16, 16 + 16)
    assert gp.peak_op == 0 and gp.arena_bytes >= 432


def test_graph_outputs_live_to_the_end_and_dead_outputs_at_their_step() -> None:
    # op 0 writes t1 (a graph output) and t2 (read by nobody); op 1 and op 2 continue from t1.
    graph, sel = build([(16,), (16,), (16,), (16,), (16,)],
                       [("SPLIT", (0,), (1, 2)), ("RELU", (1,), (3,)), ("RELU", (3,), (4,))],
                       inputs=(0,), outputs=(1, 4))
    bufs = by_name(buffers_from_graph(graph, sel))
    assert (bufs["t1"].first, bufs["t1"].last) == (0, 2)
    assert (bufs["t2"].first, bufs["t2"].last) == (0, 0)
    assert (bufs["t4"].first, bufs["t4"].last) == (2, 2)


def test_variable_tensors_live_for_the_whole_program() -> None:
    # SVDF-like: state t1 is read and written by op 1 only, yet must survive invocations.
    graph, sel = build([(32,), ((32,), "var"), (32,), (32,), (32,)],
                       [("FULLY_CONNECTED", (0,), (2,)), ("SVDF", (2, 1), (3,)),
                        ("SOFTMAX", (3,), (4,))],
                       inputs=(0,), outputs=(4,))
    gp = plan_graph(graph, sel)
    state = by_name(gp.buffers)["t1"]
    assert (state.first, state.last) == (0, 2)
    check_contract(list(gp.buffers), gp.plan)
    others = [p for p in gp.plan.placements if p.name != "t1"]
    s = gp.plan.placement("t1")
    assert all(p.offset >= s.offset + 32 or p.offset + p.size <= s.offset for p in others)


def test_inplace_declared_only_when_safe() -> None:
    # t0 in -> CONV -> t1 -> CONV -> t2; ADD(t1, t2) -> t3 (t1 dies here: in-place);
    # ADD(t3, t0) -> t4 would be in-place over t3, but t3 is also read by op 4: not safe;
    # ADD(t0, ...) never in-place over the graph input; op 5 broadcasts a smaller t5.
    graph, sel = build(
        [(64,), (64,), (64,), (64,), (64,), (16,), (64,), (64,)],
        [("CONV_2D", (0,), (1,)), ("CONV_2D", (1,), (2,)), ("ADD", (1, 2), (3,)),
         ("ADD", (3, 2), (4,)), ("MEAN", (3,), (5,)), ("ADD", (5, 4), (6,)),
         ("ADD", (0, 6), (7,))],
        inputs=(0,), outputs=(7,), inplace={2, 3, 5, 6})
    bufs = by_name(buffers_from_graph(graph, sel))
    assert bufs["t3"].inplace_of == "t1"
    assert bufs["t4"].inplace_of is None      # t3 is read again by op 4
    assert bufs["t6"].inplace_of is None      # t5 is smaller than t6
    assert bufs["t7"].inplace_of is None      # t0 is the graph input
    for algorithm in ALGORITHMS:
        gp = plan_graph(graph, sel, algorithm=algorithm)
        check_contract(list(gp.buffers), gp.plan)
        assert gp.tensor_offset(3) == gp.tensor_offset(1)


def test_selection_must_match_the_graph() -> None:
    graph, sel = build([(4,), (4,)], [("RELU", (0,), (1,))], inputs=(0,), outputs=(1,))
    with pytest.raises(ValueError):
        buffers_from_graph(graph, Selection(()))


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_dscnn_arena_overlaps_its_activations(algorithm: str) -> None:
    """Depthwise and pointwise layers write over their inputs (partial overlaps), so the
    arena is below two activations, which it needed without overlaps."""
    graph = load_tflite(FIX / "dscnn_kws.tflite")
    gp = plan_graph(graph, select_kernels(graph), algorithm=algorithm)
    check_contract(list(gp.buffers), gp.plan)
    act = 25 * 5 * 64  # every layer between the first conv and the pool is 25x5x64 int8
    assert act < gp.lower_bound_bytes <= gp.arena_bytes < 2 * act
    assert sum(b.inplace_of is not None for b in gp.buffers) >= 8
    # Every non-constant tensor of the model resolves to a buffer.
    for t in graph.tensors:
        assert (gp.buffer_of(t.index) is None) == t.is_constant


def test_residual_fixture_uses_inplace_add() -> None:
    graph = load_tflite(FIX / "residual.tflite")
    sel = select_kernels(graph)
    gp = plan_graph(graph, sel)
    check_contract(list(gp.buffers), gp.plan)
    add = next(op for op in graph.operators if op.opcode == "ADD")
    if sel.choices[add.index].variant.inplace:
        out = by_name(gp.buffers)[f"t{add.outputs[0]}"]
        assert out.inplace_of is not None
        assert gp.tensor_offset(add.outputs[0]) == gp.plan.offset(out.inplace_of)


# --- random graphs, executed symbolically on the planned arena ----------------------------


def random_ir_graph(seed: int, n_ops: int) -> tuple[Graph, Selection]:
    """Chains, branches, in-place ADDs, concatenations, RESHAPE aliases, a variable state and
    scratch buffers, with random sizes."""
    import random

    rng = random.Random(seed)
    shapes: list = [(rng.choice([8, 20, 64]),)]
    ops: list = []
    alias, inplace, scratch = set(), set(), {}
    produced = [0]
    state = None
    if rng.random() < 0.3:
        shapes.append(((16,), "var"))
        state = 1
    for k in range(n_ops):
        kind = rng.choice(["chain", "chain", "branch", "add", "concat", "reshape", "state"])
        prev = produced[-1]
        size = _elems(shapes[prev])
        if kind == "branch":
            src = rng.choice(produced[-4:])
            ops.append(("CONV_2D", (src,), (len(shapes),)))
            shapes.append((rng.choice([8, 24, 48, 100]),))
        elif kind == "add" and len(produced) > 1:
            other = rng.choice(produced[-4:-1])
            ops.append(("ADD", (prev, other), (len(shapes),)))
            inplace.add(k)
            shapes.append((size,))
        elif kind == "concat" and len(produced) > 1:
            other = rng.choice(produced[-4:-1])
            ops.append(("CONCATENATION", (other, prev), (len(shapes),)))
            shapes.append((size + _elems(shapes[other]),))
        elif kind == "reshape":
            ops.append(("RESHAPE", (prev,), (len(shapes),)))
            alias.add(k)
            shapes.append((1, size))
        elif kind == "state" and state is not None:
            ops.append(("SVDF", (prev, state), (len(shapes),)))
            shapes.append((16,))
        else:
            ops.append(("RELU" if rng.random() < 0.5 else "CONV_2D", (prev,), (len(shapes),)))
            if ops[-1][0] == "RELU":
                inplace.add(k)
                shapes.append((size,))
            else:
                shapes.append((rng.choice([8, 24, 48, 100]),))
        if k not in alias and rng.random() < 0.2:
            scratch[k] = rng.choice([4, 32, 100])
        produced.append(len(shapes) - 1)
    outputs = {produced[-1]}
    if rng.random() < 0.4:
        outputs.add(rng.choice(produced))  # an intermediate result is also a graph output
    return build(shapes, ops, inputs=(0,), outputs=tuple(sorted(outputs)), alias=alias,
                 inplace=inplace, scratch=scratch)


def _elems(spec: tuple) -> int:
    shape = spec[0] if len(spec) == 2 and isinstance(spec[0], tuple) else spec
    n = 1
    for d in shape:
        n *= d
    return n


def execute(graph: Graph, sel: Selection, gp) -> None:  # type: ignore[no-untyped-def]
    """Run the graph on the planned arena with tagged bytes: before each op every arena input
    must still hold the bytes its producer wrote; an op writes its scratch and outputs (an
    alias writes nothing); a tensor may be overwritten only by its in-place successor."""
    arena = np.full(gp.arena_bytes + 1, -1, dtype=np.int64)
    tag = {}  # tensor index -> tag of the bytes it must hold
    inplace = {b.name: b.inplace_of for b in gp.buffers}

    def span(i: int) -> slice:
        off = gp.tensor_offset(i)
        return slice(off, off + graph.tensor(i).nbytes)

    for i in graph.main.inputs:
        arena[span(i)] = tag[i] = 1_000 + i
    for t in graph.tensors:
        if t.is_variable:
            arena[span(t.index)] = tag[t.index] = 1_000 + t.index
    for k, op in enumerate(graph.operators):
        ins = [i for i in op.inputs if i >= 0 and not graph.tensor(i).is_constant]
        for i in ins:
            assert (arena[span(i)] == tag[i]).all(), f"op {k} reads t{i} after it was clobbered"
        if sel.choices[k].variant.alias:
            tag[op.outputs[0]] = tag[ins[0]]
            continue
        if gp.has_scratch(k):
            off = gp.scratch_offset(k)
            call = sel.choices[k].call
            assert call is not None
            arena[off:off + call.scratch_bytes] = -2 - k
        for o in op.outputs:
            arena[span(o)] = tag[o] = 2_000 + o
        for i in ins:
            if graph.tensor(i).is_variable:
                continue
            if not (arena[span(i)] == tag[i]).all():
                # only allowed: this op's in-place output over its dying input 0
                out_buf = gp.buffer_of(op.outputs[0])
                assert inplace.get(out_buf) == gp.buffer_of(i), f"op {k} clobbers t{i}"
    for i in graph.main.outputs:
        assert (arena[span(i)] == tag[i]).all(), f"graph output t{i} clobbered"


@settings(max_examples=80, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 14), st.sampled_from(ALGORITHMS))
def test_random_graphs_execute_on_their_plan(seed: int, n_ops: int, algorithm: str) -> None:
    graph, sel = random_ir_graph(seed, n_ops)
    gp = plan_graph(graph, sel, algorithm=algorithm)
    check_contract(list(gp.buffers), gp.plan)
    execute(graph, sel, gp)


@pytest.mark.slow
@settings(max_examples=600, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 50), st.sampled_from(ALGORITHMS))
def test_sweep_random_graphs_execute(seed: int, n_ops: int, algorithm: str) -> None:
    graph, sel = random_ir_graph(seed, n_ops)
    gp = plan_graph(graph, sel, algorithm=algorithm)
    check_contract(list(gp.buffers), gp.plan)
    execute(graph, sel, gp)


def _lead_order(call: KernelCall) -> AccessOrder:
    """Same size in and out, 16-byte blocks: output block j is written at step j from input
    blocks j - 1 to j + 1 (a 3-tap window), so input block i is last read at step i + 1 and
    the output must lead its input by at least 16 bytes."""
    blocks = np.arange(64) // 16
    return AccessOrder(np.minimum(blocks + 1, 3), blocks)


def _expand_order(call: KernelCall) -> AccessOrder:
    """64 -> 128 bytes, back to front: output block j (written at step 7 - j) reads input
    block j // 2, so the output may start at its input's offset."""
    out_blocks = np.arange(128) // 16
    in_blocks = np.arange(64) // 16
    return AccessOrder(7 - 2 * in_blocks, 7 - out_blocks)


def test_an_overlap_no_step_needs_is_left_out_when_it_would_chain() -> None:
    """The first layers of a MobileNet in miniature: the input (96 B) dies at op 0; op 1's
    output leads its input by 16 B, op 2's doubles it in place. Chaining all three outputs
    makes one 128 B block with op 0's output 16 B from its bottom, and the input fits beside
    it only above (176 B). Op 1 needs no overlap (64 + 64 B are below the 160 B of op 0), and
    without it the plan reaches the lower bound."""
    graph, sel = build([(96,), (64,), (64,), (128,), (16,)],
                       [("CONV_2D", (0,), (1,)), ("LEAD", (1,), (2,)), ("EXPAND", (2,), (3,)),
                        ("CONV_2D", (3,), (4,))], inputs=(0,), outputs=(4,))
    orders = {1: _lead_order, 2: _expand_order}
    sel = Selection(tuple(replace(c, variant=replace(c.variant, access=orders[c.op_index]))
                          if c.op_index in orders else c for c in sel.choices))
    every = by_name(buffers_from_graph(graph, sel))
    assert (every["t2"].inplace_of, every["t2"].inplace_shift) == ("t1", -16)
    assert (every["t3"].inplace_of, every["t3"].inplace_shift) == ("t2", 0)
    sets = buffer_sets(graph, sel)
    assert len(sets) == 2
    fewer = by_name(sets[1].buffers)
    assert fewer["t2"].inplace_of is None and fewer["t3"].inplace_of == "t2"
    assert plan_arena(tuple(every.values())).arena_bytes == 176
    gp = plan_graph(graph, sel)
    assert gp.arena_bytes == gp.lower_bound_bytes == 160
    assert gp.buffers == sets[1].buffers
    check_contract(list(gp.buffers), gp.plan)


def test_in_place_memos_stay_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    """The memos of access orders are bounded in bytes, not only in entries: a process that
    plans model after model (the fuzzer: about 1 GB after 100,000 models) keeps at most
    `_MEMO_BYTES` of orders, and a plan made after a clear is the same plan."""
    from tinydeploy.boards import get_board
    from tinydeploy.plan import lifetimes

    g = load_tflite(Path(__file__).resolve().parent.parent / "models" / "kws" /
                    "dscnn_int8.tflite")
    sel = select_kernels(g, get_board("mps2-an386"))
    first = plan_graph(g, sel)
    monkeypatch.setattr(lifetimes, "_MEMO_BYTES", 300_000)
    lifetimes._ORDERS.clear()
    lifetimes._ORDER_BYTES[0] = 0
    again = plan_graph(g, sel)
    assert 0 < lifetimes._ORDER_BYTES[0] <= 300_000
    assert sum(f.order.last_read.nbytes + f.order.write_step.nbytes
               for _, f in lifetimes._ORDERS.values()) == lifetimes._ORDER_BYTES[0]
    assert again.arena_bytes == first.arena_bytes
