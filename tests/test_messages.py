"""What the commands say to a new user: the useful hint first, plain names, real figures."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from clirun import run_cli

from tinydeploy.model.analysis import summarize_ops
from tinydeploy.model.loader import load_tflite
from tinydeploy.testing.builder import ModelBuilder

_cli = run_cli


def _float_fc() -> bytes:
    b = ModelBuilder()
    x = b.tensor("x", (1, 8), "float32")
    w = b.tensor("w", (4, 8), "float32", data=np.ones((4, 8), np.float32))
    y = b.tensor("y", (1, 4), "float32")
    b.op("FULLY_CONNECTED", [x, w], [y])
    return b.build([x], [y])


def test_inspect_of_a_float_model_says_quantize_it_first(tmp_path: Path) -> None:
    model = tmp_path / "float.tflite"
    model.write_bytes(_float_fc())
    rc, out, _ = _cli("inspect", str(model))
    assert rc == 0
    lines = [ln for ln in out.splitlines() if ln.strip()]
    first = next(i for i, ln in enumerate(lines) if "float model" in ln)
    assert "tinydeploy quantize" in lines[first]
    assert first < next(i for i, ln in enumerate(lines) if "unsupported ops" in ln)
    assert "INT16 required" not in out and "int8 required" not in out   # no kernel litany
    rc, out, _ = _cli("inspect", str(model), "--json")
    assert json.loads(out)["float_model"] is True
    rc, out, _ = _cli("inspect", str(Path(__file__).parent / "fixtures" / "mlp.tflite"),
                      "--json")
    assert json.loads(out)["float_model"] is False


def test_a_bad_app_or_runner_is_named_plainly() -> None:
    for argv in (("build", "m.tflite", "--board", "mps2-an386", "--app", "foo"),
                 ("plan", "m.tflite", "--board", "mps2-an386", "--app", "foo"),
                 ("run", "m.tflite", "--board", "mps2-an386", "--runner", "foo")):
        rc, _, err = _cli(*argv)
        assert rc == 2
        assert "<App." not in err and "<RunnerKind." not in err, err
        assert "'bench'" in err or "'qemu'" in err, err


def test_lstm_macs_count_every_gate_matrix() -> None:
    """An LSTM of 28 steps, 28 inputs and 20 cells: per step 4 x 20 x 28 input-to-gate and
    4 x 20 x 20 recurrent MACs (TFLite's numbering of the 24 inputs)."""
    steps, n_in, n_cell = 28, 28, 20
    rng = np.random.default_rng(0)
    b = ModelBuilder()
    x = b.tensor("x", (1, steps, n_in), "float32")
    ins = [x]
    ins += [b.tensor(f"wi{k}", (n_cell, n_in), "float32",
                     data=rng.standard_normal(n_cell * n_in)) for k in range(4)]
    ins += [b.tensor(f"wr{k}", (n_cell, n_cell), "float32",
                     data=rng.standard_normal(n_cell * n_cell)) for k in range(4)]
    ins += [-1, -1, -1]
    ins += [b.tensor(f"b{k}", (n_cell,), "float32", data=np.zeros(n_cell)) for k in range(4)]
    ins += [-1, -1]
    ins += [b.tensor("h", (1, n_cell), "float32", is_variable=True),
            b.tensor("c", (1, n_cell), "float32", is_variable=True)]
    ins += [-1, -1, -1, -1]
    y = b.tensor("y", (1, steps, n_cell), "float32")
    b.op("UNIDIRECTIONAL_SEQUENCE_LSTM", ins, [y])
    graph = load_tflite(b.build([x], [y]))
    (s,) = summarize_ops(graph, lambda g, op: None)
    assert s.macs == steps * (4 * n_cell * n_in + 4 * n_cell * n_cell)
