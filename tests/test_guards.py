"""Debug guards (`build --guards`, tinydeploy/codegen/guards.py): off by default, and a kernel
that writes one byte outside its output or its scratch buffer is stopped at that op, named,
on the host and on QEMU.

The broken kernels are test fixtures (tests/fixtures/guard_kernels/): the reference
FULLY_CONNECTED kernel followed by a one-byte overrun. They are registered, for op 1 of the
MLP fixture only, inside the test (the registry table is patched and restored), and their
sources are found through a firmware folder made of links to the real one plus the fixtures.
Every test model of the sanitizer run is also built with guards there
(tests/test_sanitizers.py), so the guards never fire on correct kernels.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest

from tinydeploy.boards import get_board
from tinydeploy.build.firmware import build_firmware
from tinydeploy.codegen.guards import GUARD_BYTES, guard_plan, guarded_plan
from tinydeploy.errors import LinkError
from tinydeploy.flash.runner import Firmware
from tinydeploy.kernels import registry
from tinydeploy.link.connect import connect
from tinydeploy.link.validate import random_inputs, validate_cases
from tinydeploy.model.loader import load_tflite
from tinydeploy.plan.lifetimes import plan_graph
from tinydeploy.resources import firmware_dir

ROOT = Path(__file__).resolve().parent.parent
FIX = ROOT / "tests" / "fixtures"
MLP = FIX / "mlp.tflite"
BROKEN = FIX / "guard_kernels"
BROKEN_OP = 1


def test_default_build_renders_no_guard_code(tmp_path: Path) -> None:
    plain = build_firmware(MLP, get_board("host"), "validate", tmp_path / "plain")
    guarded = build_firmware(MLP, get_board("host"), "validate", tmp_path / "guarded",
                             guards=True)
    text = (tmp_path / "plain" / "src" / "model" / "model.c").read_text()
    assert "guard" not in text.lower()
    assert not any("guard" in f for f in plain.manifest["files"])
    assert "guards" not in plain.manifest
    assert guarded.manifest["guards"] is True
    assert "src/model/model_guard.c" in guarded.manifest["files"]
    gtext = (tmp_path / "guarded" / "src" / "model" / "model.c").read_text()
    n_ops = len(load_tflite(MLP).operators)
    assert gtext.count("td_guard_after(") == n_ops
    # the same kernels in the same order (at other offsets: every buffer has a guard gap)
    def kernels(t: str) -> list[str]:
        return re.findall(r"^    (td_\w+_(?:ref|opt|dsp|mve))\(", t, re.M)

    assert kernels(text) and kernels(text) == kernels(gtext)
    assert guarded.arena_bytes > plain.arena_bytes


@pytest.mark.parametrize("name", ["mlp.tflite", "residual.tflite", "dscnn_small.tflite"])
def test_guard_regions_partition_the_arena_at_every_op(name: str) -> None:
    graph = load_tflite(FIX / name)
    sel = registry.select_kernels(graph, None)
    plan = guarded_plan(graph, sel, plan_graph(graph, sel))
    gp = guard_plan(graph, plan.selection or sel, plan)   # checks the partition itself
    ops = sorted({r.op_index for r in gp.regions})
    assert ops, name
    for k in ops:
        mine = [r for r in gp.regions if r.op_index == k]
        assert [r.offset for r in mine] == sorted(r.offset for r in mine)
        assert all(a.offset + a.size <= b.offset for a, b in zip(mine, mine[1:], strict=False))
        assert (mine[0].offset, mine[0].size, mine[0].live) == (-GUARD_BYTES, GUARD_BYTES, False)
        assert (mine[-1].offset, mine[-1].size) == (plan.arena_bytes, GUARD_BYTES)
        # the byte just past each of the op's outputs and its scratch buffer is guarded:
        # the gap every buffer gets, or (an in-place op) the input the output lies over
        op = graph.operators[k]
        ends = [plan.tensor_offset(i) + graph.tensor(i).nbytes for i in op.outputs]
        if plan.has_scratch(k):
            sp = plan.plan.placement(f"scratch{k}")
            ends.append(sp.offset + sp.size - GUARD_BYTES)
        for end in ends:
            assert any(r.offset <= end < r.offset + r.size for r in mine), (name, k, end)
        for r in mine:      # nothing the op writes is guarded
            for i in graph.operators[k].outputs:
                a = plan.tensor_offset(i)
                assert r.offset + r.size <= a or a + graph.tensor(i).nbytes <= r.offset


def _overlay(tmp: Path) -> Path:
    """A firmware folder: links to the real one, plus the broken kernels under kernels/test
    and their prototypes in td_kernels.h."""
    real = firmware_dir()
    fw = tmp / "firmware"
    (fw / "kernels" / "test").mkdir(parents=True)
    for p in real.iterdir():
        if p.name != "kernels":
            (fw / p.name).symlink_to(p)
    for p in (real / "kernels").iterdir():
        if p.name != "td_kernels.h":
            (fw / "kernels" / p.name).symlink_to(p)
    for p in BROKEN.glob("*.c"):
        (fw / "kernels" / "test" / p.name).write_bytes(p.read_bytes())
    # the shared header, with the broken kernels' prototypes added at its end
    header = (real / "kernels" / "td_kernels.h").read_text()
    cut = header.rindex("#endif")
    (fw / "kernels" / "td_kernels.h").write_text(
        header[:cut] + '#include "td_guard_test_kernels.h"\n' + header[cut:])
    (fw / "kernels" / "td_guard_test_kernels.h").write_bytes(
        (BROKEN / "td_guard_test_kernels.h").read_bytes())
    return fw


def _broken_variant(kind: str) -> registry.KernelVariant:
    ref = registry.variant_by_symbol("FULLY_CONNECTED", "td_fully_connected_s8_ref")
    symbol = ("td_fully_connected_s8_overrun" if kind == "output"
              else "td_fully_connected_s8_scratch_overrun")

    def prepare(graph, op):  # type: ignore[no-untyped-def]
        call = replace(ref.prepare(graph, op), symbol=symbol, instructions=1)  # the cheapest
        if kind == "scratch":
            call = replace(call, args=(*call.args, "scratch"), scratch_bytes=16)
        return call

    return replace(ref, symbol=symbol, priority=1000, inplace=False,
                   access=None, twins=(),
                   sources=(*ref.sources, f"kernels/test/{symbol}.c"),
                   accepts=lambda g, op: None if op.index == BROKEN_OP else "not this op",
                   prepare=prepare)


@pytest.fixture
def broken(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch,
           tmp_path: Path) -> str:
    kind = request.param
    registry._load()
    fc = list(registry.variants("FULLY_CONNECTED"))
    monkeypatch.setitem(registry._VARIANTS, "FULLY_CONNECTED", [*fc, _broken_variant(kind)])
    monkeypatch.setattr("tinydeploy.codegen.project.FIRMWARE", _overlay(tmp_path))
    return str(kind)


@pytest.mark.target
@pytest.mark.parametrize("board", ["host", "mps2-an386"])
@pytest.mark.parametrize("broken", ["output", "scratch"], indirect=True)
def test_a_kernel_writing_one_byte_too_far_is_stopped_and_named(
        broken: str, board: str, tmp_path: Path) -> None:
    graph = load_tflite(MLP)
    out = tmp_path / "fw"
    # speed: the fewest instructions, the broken kernel's 1 (balanced would weigh its code
    # against the DSP kernel the other layers already link, and drop it)
    built = build_firmware(MLP, get_board(board), "validate", out, graph=graph, guards=True,
                           optimize="speed")
    assert [k["symbol"] for k in built.manifest["kernels"]][BROKEN_OP].endswith("overrun")
    buffers = {b["name"]: b for b in built.manifest["plan"]["buffers"]}
    if broken == "output":
        t = graph.operators[BROKEN_OP].outputs[0]
        end = buffers[f"t{t}"]["offset"] + graph.tensor(t).nbytes
    else:
        end = buffers[f"scratch{BROKEN_OP}"]["offset"] + 16
    fw = Firmware.from_build_dir(out)
    with pytest.raises(LinkError) as info:
        with connect(fw, timeout=120, reply_timeout=10) as conn:
            conn.session.run(random_inputs(graph, 1, seed=1)[0])
    msg = info.value.message
    print(f"\n{board}, {broken}: {msg}")
    assert f"guard: op {BROKEN_OP} (FULLY_CONNECTED) changed" in msg, msg
    m = re.search(r"changed arena byte (-?\d+)", msg)
    if m:
        assert int(m.group(1)) == end, msg          # the very byte past the end
    else:       # the byte past the end belongs to a live buffer: its span holds that byte
        span = re.search(r"\[(\d+), (\d+)\)", msg)
        assert span and int(span.group(1)) <= end < int(span.group(2)), msg


@pytest.mark.target
def test_guards_pass_on_qemu_for_a_correct_model(tmp_path: Path) -> None:
    """The guarded DS-CNN fixture on the emulated M4: every output still bit-exact."""
    model = FIX / "dscnn_small.tflite"
    graph = load_tflite(model)
    build_firmware(model, get_board("mps2-an386"), "validate", tmp_path / "fw", graph=graph,
                   guards=True)
    cases = random_inputs(graph, 3, seed=2)
    with connect(Firmware.from_build_dir(tmp_path / "fw"), timeout=120) as conn:
        report = validate_cases(conn.session.run, model.read_bytes(), cases)
    assert report.bit_exact_cases == report.cases == 3
