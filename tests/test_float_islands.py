"""Float islands: DEQUANTIZE -> float32 op (ELU, SPLIT) -> QUANTIZE, as converters leave
them. They run on the host and on cores with an FPU, bit-exact with tflite-micro, and are
refused elsewhere with the reason; inspect, plan and validate agree on every board."""

from __future__ import annotations

import contextlib
import io
import shutil
from pathlib import Path

import pytest

from tinydeploy.boards import list_boards
from tinydeploy.commands.inspect import blocking_ops
from tinydeploy.errors import UnsupportedError
from tinydeploy.model.loader import load_tflite
from tinydeploy.plan.choose import choose_kernels
from tinydeploy.testing.builder import ModelBuilder


def _island(op: str) -> bytes:
    b = ModelBuilder()
    x = b.tensor("x", (1, 8), "int8", scale=0.05, zero_point=3)
    f = b.tensor("f", (1, 8), "float32")
    b.op("DEQUANTIZE", [x], [f], version=2)
    if op == "ELU":
        g = b.tensor("g", (1, 8), "float32")
        y = b.tensor("y", (1, 8), "int8", scale=0.03, zero_point=-20)
        b.op("ELU", [f], [g])
        b.op("QUANTIZE", [g], [y])
        return b.build([x], [y])
    axis = b.tensor("axis", (), "int32", data=[1])
    g1, g2 = b.tensor("g1", (1, 4), "float32"), b.tensor("g2", (1, 4), "float32")
    y1 = b.tensor("y1", (1, 4), "int8", scale=0.05, zero_point=3)
    y2 = b.tensor("y2", (1, 4), "int8", scale=0.02, zero_point=0)
    b.op("SPLIT", [axis, f], [g1, g2])
    b.op("QUANTIZE", [g1], [y1])
    b.op("QUANTIZE", [g2], [y2])
    return b.build([x], [y1, y2])


@pytest.mark.parametrize("op", ["ELU", "SPLIT"])
def test_inspect_and_plan_agree_on_every_board(op: str) -> None:
    graph = load_tflite(_island(op))
    assert blocking_ops(graph, None) == []        # some board runs it
    for board in list_boards():
        blocking = blocking_ops(graph, board)
        try:
            choose_kernels(graph, board)
            planned = True
        except UnsupportedError as e:
            planned = False
            assert "lacks fpu" in e.message, (board.id, e.message)
        assert planned == (blocking == []), (board.id, blocking)
        assert planned == ("fpu" in board.features), board.id
        if not planned:
            assert blocking[0]["op"] == op and "lacks fpu" in blocking[0]["reason"]


@pytest.mark.target
@pytest.mark.skipif(shutil.which("qemu-system-arm") is None, reason="needs qemu-system-arm")
@pytest.mark.parametrize("op", ["ELU", "SPLIT"])
@pytest.mark.parametrize("board", ["host", "mps2-an386"])
def test_float_islands_are_bit_exact_with_tflite_micro(op: str, board: str,
                                                       tmp_path: Path) -> None:
    from tinydeploy.cli import main

    model = tmp_path / f"island_{op}.tflite"
    model.write_bytes(_island(op))
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(["validate", str(model), "--board", board, "--random", "20",
                   "-o", str(tmp_path / "fw")])
    assert rc == 0, err.getvalue() + out.getvalue()
    assert "20/20 cases bit-exact" in out.getvalue()
