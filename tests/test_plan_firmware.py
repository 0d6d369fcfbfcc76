"""Arena plans in real firmware: the residual fixture (an in-place ADD, a concatenation that
reads two live tensors, a scratch buffer) built for the host board with sanitizers under
different planning algorithms. Every layout must give exactly the oracle's bytes: a plan that
let an op overwrite bytes still to be read would show up as a mismatch here."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tinydeploy.boards import get_board
from tinydeploy.build.firmware import build_firmware
from tinydeploy.flash import runner_for
from tinydeploy.link.session import Session

FIX = Path(__file__).parent / "fixtures"
MODEL = FIX / "residual.tflite"


def oracle(model: bytes, x: np.ndarray) -> np.ndarray:
    from tflite_micro.python.tflite_micro import runtime

    it = runtime.Interpreter.from_bytes(model)
    it.set_input(x, 0)
    it.invoke()
    return np.array(it.get_output(0))


@pytest.mark.parametrize("algorithm", ["greedy-conflicts", "optimal"])
def test_layouts_run_bit_exact(algorithm: str, tmp_path: Path) -> None:
    board = get_board("host")
    result = build_firmware(MODEL, board, "validate", tmp_path / "fw", sanitize=True,
                            algorithm=algorithm)
    plan = result.manifest["plan"]
    assert plan["algorithm"] == algorithm
    buffers = {b["name"]: b for b in plan["buffers"]}
    # The ADD (op 2: t9 + t10 -> t11) runs in place: its output sits on its first input.
    assert buffers["t11"]["offset"] == buffers["t9"]["offset"]
    model = MODEL.read_bytes()
    rng = np.random.default_rng(len(algorithm))
    fw_inputs = [rng.integers(-128, 128, size=(1, 12, 12, 3), dtype=np.int8) for _ in range(3)]
    from tinydeploy.flash import Firmware

    fw = Firmware.from_elf(result.elf, board)
    with runner_for(board).start(fw, timeout=60) as dev:
        ser = dev.open()
        try:
            s = Session(ser, timeout=20)
            s.hello()
            for n, x in enumerate(fw_inputs):
                outs, _ = s.run([x])
                want = oracle(model, x)
                got = np.asarray(outs[0]).reshape(want.shape)
                bad = np.flatnonzero(got != want)
                assert bad.size == 0, (f"input {n}: {bad.size} bytes differ, first at "
                                       f"{bad[0]}: {got.flat[bad[0]]} vs {want.flat[bad[0]]}")
            s.stop()
        finally:
            ser.close()


@pytest.mark.target
@pytest.mark.parametrize("board_id", ["microbit-v1", "mps2-an386"])
def test_budget_estimates_bracket_the_built_firmware(board_id: str, tmp_path: Path) -> None:
    """Before a build the budget estimates stack, code and static data; they must not be
    below what the linker and -fstack-usage then measure (or 'fits' would lie), nor so far
    above that they refuse models that fit."""
    from tinydeploy.model.loader import load_tflite
    from tinydeploy.plan.budget import compute_budget
    from tinydeploy.plan.choose import choose_kernels

    board = get_board(board_id)
    result = build_firmware(MODEL, board, "bench", tmp_path / "fw")
    graph = load_tflite(MODEL)
    choice = choose_kernels(graph, board)   # what the build chose (default: balanced)
    sel, gp = choice.selection, choice.plan
    budget = compute_budget(sel, gp.arena_bytes, board, "bench")
    assert gp.arena_bytes == result.arena_bytes
    measured_stack = result.stack_bytes
    assert measured_stack <= budget.stack_need <= 1.3 * measured_stack
    measured_flash = result.flash_bytes
    assert 0.95 * measured_flash <= budget.flash.total <= 1.3 * measured_flash
    # .bss holds the arena, the application buffers and the rest of the static data
    bss = result.sections.get(".bss", 0) + result.sections.get(".data", 0)
    estimate = budget.ram.arena + budget.ram.buffers + budget.ram.static
    assert bss <= estimate <= bss + 1_024


@pytest.mark.target
def test_kws_dscnn_runs_bit_exact_on_the_microbit(tmp_path: Path) -> None:
    """The committed KWS DS-CNN on the 16 KB Cortex-M0 (QEMU microbit): it fits only because
    its depthwise and pointwise layers overlap their inputs; every output byte must still be
    the oracle's."""
    import json
    import subprocess
    import sys

    kws = Path(__file__).resolve().parent.parent / "models" / "kws" / "dscnn_int8.tflite"
    out = tmp_path / "fw"
    r = subprocess.run([sys.executable, "-m", "tinydeploy", "validate", str(kws), "--board",
                        "microbit-v1", "--random", "3", "--json", "--output", str(out)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    rep = json.loads(r.stdout)
    assert rep["cases"] == rep["bit_exact_cases"] == 3
    manifest = json.loads((out / "manifest.json").read_text())
    ram = manifest["budget"]["measured"]["ram"]
    assert ram["total"] <= ram["available"] == 16 * 1024
    assert any(b.get("inplace_of") for b in manifest["plan"]["buffers"])
    # the stack reserve is the measured bound plus its margin, not a fixed size
    from tinydeploy.plan.budget import sized_stack_reserve

    assert manifest["stack_reserve"]["bytes"] == sized_stack_reserve(manifest["stack_bytes"])
    assert ram["stack"] == manifest["stack_reserve"]["bytes"]
