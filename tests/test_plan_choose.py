"""Selection weighed against the board's budget (`tinydeploy.plan.choose`, --optimize).

For every test model, every --optimize and the boards of three cores: size's arena is never
above the reference kernels' plan R, balanced's never above R + R/16, speed's never above the
board's RAM (`choose.arena_limit`). Then what each mode promises:
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
from tinydeploy.plan.choose import (
    OPTIMIZE_CHOICES,
    Optimize,
    arena_limit,
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
        assert got["size"].plan.arena_bytes <= ref, board_id
        for mode, c in got.items():
            assert ref == c.reference_arena_bytes, (board_id, mode)
            limit = arena_limit(Optimize(mode), ref)
            assert c.arena_limit_bytes == limit, (board_id, mode)
            assert c.plan.arena_bytes <= (limit if limit is not None else board.ram_bytes), \
                (board_id, mode)
            assert len(c.selection.choices) == len(g.operators)
        for layer in got["balanced"].layers:
            mine = next(c for c, why in layer.alternatives if why is None)
            refs = [c.const_bytes for c, _ in layer.alternatives if c.impl == "ref"]
            assert not refs or mine.const_bytes <= min(refs), (board_id, layer)
        speed, balanced, size = (_totals(got[m]) for m in ("speed", "balanced", "size"))
        assert speed[0] <= balanced[0], board_id
        assert size[1] <= balanced[1], board_id


def test_balanced_takes_the_int8_dsp_kernels_size_keeps_the_reference_arena() -> None:
    """On the Cortex-M4 the dsp convolutions keep the model's int8 weights and take a few
    hundred bytes of scratch: balanced picks them within its allowance, size keeps the
    reference kernels' arena and pays for it in instructions; both say why per layer."""
    g = load_tflite(ROOT / "models" / "kws" / "dscnn_int8.tflite")
    board = get_board("mps2-an386")
    balanced = choose_kernels(g, board, Optimize.BALANCED)
    size = choose_kernels(g, board, Optimize.SIZE)
    convs = [ch for ch in balanced.selection.choices
             if g.operators[ch.op_index].type_name in ("CONV_2D", "DEPTHWISE_CONV_2D")]
    assert convs and {ch.variant.impl for ch in convs} == {"dsp"}
    assert balanced.plan.arena_bytes <= arena_limit(Optimize.BALANCED,
                                                    balanced.reference_arena_bytes)
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
    r = subprocess.run([sys.executable, "-m", "tinydeploy", "plan", str(model), "--board",
                        "mps2-an386", "--optimize", "fastest"], capture_output=True, text=True)
    assert r.returncode == 2 and "balanced" in r.stderr
