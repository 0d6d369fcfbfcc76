"""Selection weighed against the board's budget (`tinydeploy.plan.choose`, --optimize).

The invariant of the issue, for every test model, every --optimize and the boards of three
cores: the arena is never above the reference kernels' plan. Then what each mode promises:
balanced never stores an op's constants in more bytes than the reference kernel's, speed
never costs more (estimated) instructions than balanced, size never more flash.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tinydeploy.boards import get_board
from tinydeploy.model.loader import load_tflite
from tinydeploy.plan.choose import OPTIMIZE_CHOICES, Optimize, choose_kernels, reference_plan

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
def test_no_mode_exceeds_the_reference_arena(model: Path) -> None:
    g = load_tflite(model)
    ref = reference_plan(g).arena_bytes
    for board_id in BOARDS:
        board = get_board(board_id)
        got = {m: choose_kernels(g, board, m) for m in OPTIMIZE_CHOICES}
        for mode, c in got.items():
            assert c.plan.arena_bytes <= ref == c.reference_arena_bytes, (board_id, mode)
            assert len(c.selection.choices) == len(g.operators)
        for layer in got["balanced"].layers:
            mine = next(c for c, why in layer.alternatives if why is None)
            refs = [c.const_bytes for c, _ in layer.alternatives if c.impl == "ref"]
            assert not refs or mine.const_bytes <= min(refs), (board_id, layer)
        speed, balanced, size = (_totals(got[m]) for m in ("speed", "balanced", "size"))
        assert speed[0] <= balanced[0], board_id
        assert size[1] <= balanced[1], board_id


def test_speed_takes_the_widened_dsp_kernels_balanced_does_not() -> None:
    """On the Cortex-M4 the dsp convolutions store int16 weights: speed picks them (fewer
    instructions, more flash), balanced keeps int8 weights; both say why per layer."""
    g = load_tflite(ROOT / "models" / "kws" / "dscnn_int8.tflite")
    board = get_board("mps2-an386")
    speed = choose_kernels(g, board, Optimize.SPEED)
    balanced = choose_kernels(g, board, Optimize.BALANCED)
    assert {c.variant.impl for c in speed.selection.choices} >= {"dsp"}
    dw = next(lc for lc in balanced.layers if lc.op_type == "DEPTHWISE_CONV_2D")
    passed = {c.impl: why for c, why in dw.alternatives}
    assert passed["dsp"] is not None and "constants" in passed["dsp"]
    assert _totals(speed)[0] < _totals(balanced)[0]
    assert _totals(speed)[1] > _totals(balanced)[1]


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
    r = subprocess.run([sys.executable, "-m", "tinydeploy", "plan", str(model), "--board",
                        "mps2-an386", "--optimize", "fastest"], capture_output=True, text=True)
    assert r.returncode == 2 and "balanced" in r.stderr
