"""`inspect` on models tinydeploy cannot compile: every blocking op with its dtypes, the
reason, and whether another board or re-quantizing would help."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tinydeploy.boards import get_board
from tinydeploy.commands.inspect import blocking_ops
from tinydeploy.model.loader import load_tflite
from tinydeploy.testing.builder import ModelBuilder

FIX = Path(__file__).parent / "fixtures"


def _float_elu() -> bytes:
    b = ModelBuilder()
    x = b.tensor("x", (1, 8), "int8", scale=0.05, zero_point=0)
    f = b.tensor("f", (1, 8), "float32")
    g = b.tensor("g", (1, 8), "float32")
    y = b.tensor("y", (1, 8), "int8", scale=0.05, zero_point=0)
    b.op("DEQUANTIZE", [x], [f], version=2)
    b.op("ELU", [f], [g])
    b.op("QUANTIZE", [g], [y])
    return b.build([x], [y])


def _mixed() -> bytes:
    b = ModelBuilder()
    x = b.tensor("x", (1, 8), "int16", scale=0.001, zero_point=0)
    y = b.tensor("y", (1, 8), "int16", scale=1 / 32768, zero_point=0)
    z = b.tensor("z", (1, 8), "float32")
    w = b.tensor("w", (1, 8), "float32")
    v = b.tensor("v", (1, 8), "float32")
    b.op("SOFTMAX", [x], [y])
    b.op("DEQUANTIZE", [y], [z], version=2)
    b.op("EXP", [z], [w])
    b.op("RELU", [w], [v])
    return b.build([x], [v])


def test_a_float_op_needs_an_fpu_board() -> None:
    g = load_tflite(_float_elu())
    assert blocking_ops(g) == []
    assert blocking_ops(g, get_board("mps2-an386")) == []
    (b,) = blocking_ops(g, get_board("microbit-v1"))
    assert b["index"] == 1 and b["op"] == "ELU" and "lacks fpu" in b["reason"]
    assert b["dtypes"] == {"inputs": ["float32"], "outputs": ["float32"]}
    assert b["help"].startswith("another board helps") and "mps2-an386" in b["help"]
    assert "microbit-v1" not in b["help"]


def test_every_blocking_op_is_listed_with_what_would_help() -> None:
    blocking = {b["index"]: b for b in blocking_ops(load_tflite(_mixed()))}
    assert sorted(blocking) == [0, 2, 3]     # DEQUANTIZE int16 -> float32 has a kernel
    assert "int16" in blocking[0]["help"] and "tinydeploy quantize" in blocking[0]["help"]
    assert blocking[0]["dtypes"]["inputs"] == ["int16"]
    assert blocking[2]["reason"] == "no kernel for this op type"
    assert "no board or quantize option helps" in blocking[2]["help"]
    assert "tinydeploy quantize" in blocking[3]["help"]   # float RELU: an int8 kernel exists


def test_inspect_cli_reports_blocking_ops(tmp_path: Path) -> None:
    model = tmp_path / "elu.tflite"
    model.write_bytes(_float_elu())
    r = subprocess.run([sys.executable, "-m", "tinydeploy", "inspect", str(model), "--board",
                        "microbit-v1", "--json"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    info = json.loads(r.stdout)
    assert info["board"] == "microbit-v1" and info["blocking"][0]["op"] == "ELU"
    r = subprocess.run([sys.executable, "-m", "tinydeploy", "inspect",
                        str(FIX / "dscnn_kws.tflite")], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0 and "all ops supported" in r.stdout
