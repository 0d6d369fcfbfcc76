"""The RAM/flash budget, and the `plan` command (JSON keys, exit codes, HTML report)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tinydeploy.boards import get_board, list_boards
from tinydeploy.errors import BudgetError
from tinydeploy.kernels.registry import select_kernels
from tinydeploy.model.loader import load_tflite
from tinydeploy.plan.budget import (
    boards_that_fit,
    check_budget,
    compute_budget,
    default_app_buffers,
    kws_app_buffers,
    kws_detector_bytes,
    weights_bytes,
)

FIX = Path(__file__).parent / "fixtures"
DSCNN = FIX / "dscnn_kws.tflite"


def tdp(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tinydeploy", *args],
                          capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def dscnn() -> tuple[object, object]:
    graph = load_tflite(DSCNN)
    return graph, select_kernels(graph)


def test_weights_are_every_constant_array_aligned(dscnn: tuple) -> None:
    _, sel = dscnn
    # byte-identical arrays (the fixture's nine all-zero biases) are stored once
    arrays = list({c.key: c for ch in sel.choices if ch.call for c in ch.call.consts}.values())
    raw = sum(a.values.nbytes for a in arrays)
    assert len(arrays) < sum(len(ch.call.consts) for ch in sel.choices if ch.call)
    assert raw <= weights_bytes(sel) < raw + 16 * len(arrays)
    assert weights_bytes(sel) % 16 == 0
    # The DS-CNN's int8 weights alone are ~24.9 K parameters (plus biases and multipliers).
    assert weights_bytes(sel) > 24_000


def test_measured_figures_replace_estimates(dscnn: tuple) -> None:
    _, sel = dscnn
    board = get_board("nrf52840dk")
    est = compute_budget(sel, 16_000, board, "bench")
    assert est.estimated == {"stack", "code", "static"}
    meas = compute_budget(sel, 16_000, board, "bench", stack_bytes=1_000, code_bytes=9_000,
                          static_bytes=300, app_buffers=[("rx", 100)])
    assert meas.estimated == frozenset()
    assert meas.ram.total == 16_000 + 1_000 + 100 + 300
    assert meas.flash.total == weights_bytes(sel) + 9_000
    assert (meas.ram.available, meas.flash.available) == (board.ram_bytes, board.flash_bytes)


def test_kws_app_keeps_its_audio_and_features_outside_the_arena(dscnn: tuple) -> None:
    graph, sel = dscnn
    bufs = dict(default_app_buffers("kws", graph.inputs[0].nbytes, len(sel.choices)))
    assert bufs["feature rows"] == 49 * 10
    # serial mode: the ring holds one analysis window (40 ms of int16 audio), not a second
    assert bufs["audio ring (one window)"] == 640 * 2
    listen = dict(kws_app_buffers(490, 4_256, listen_blocks=5, fe_in_arena=True,
                                  avg_windows=8, labels=12))
    assert listen["audio blocks (5 x 320 samples)"] == 5 * 320 * 2
    assert "front-end scratch" not in listen          # it borrows the idle arena
    assert listen["detector"] == kws_detector_bytes(8, 12) < bufs["detector"]
    assert dict(default_app_buffers("bench", 0, 12))["per-op counters"] == 12 * (4 + 8)
    with pytest.raises(BudgetError):
        default_app_buffers("radio")


def test_too_large_for_microbit_fails_with_the_numbers(dscnn: tuple) -> None:
    _, sel = dscnn
    micro = get_board("microbit-v1")
    budget = compute_budget(sel, 16_000, micro, "bench")
    assert not budget.fits and budget.ram.available == 16 * 1024
    over = budget.ram.total - 16 * 1024
    with pytest.raises(BudgetError) as e:
        check_budget(budget, list_boards())
    msg = e.value.message
    for figure in (budget.ram.total, 16_384, over, 16_000, budget.ram.stack):
        assert f"{figure:,}" in msg
    assert "microbit-v1" in msg and "over by" in msg
    fits = boards_that_fit(budget, list_boards())
    assert "nrf52840dk" in fits and "microbit-v1" not in fits and "host" not in fits
    assert all(budget.on(get_board(b)).fits for b in fits)
    assert "nrf52840dk" in (e.value.hint or "")


def test_flash_overflow_is_reported_too(dscnn: tuple) -> None:
    _, sel = dscnn
    budget = compute_budget(sel, 1_000, get_board("microbit-v1"), "bench",
                            code_bytes=300_000)
    assert budget.ram.over == 0 and budget.flash.over > 0
    with pytest.raises(BudgetError, match="flash .* over by"):
        check_budget(budget, list_boards())


# --- the command ---------------------------------------------------------------------------


def test_plan_json_keys_and_fit() -> None:
    r = tdp("plan", str(DSCNN), "--board", "nrf52840dk", "--json")
    assert r.returncode == 0, r.stderr
    rep = json.loads(r.stdout)
    for key in ("arena_bytes", "lower_bound_bytes", "algorithm", "fits", "ram", "flash",
                "tensors", "ops", "peak_op", "trials"):
        assert key in rep
    assert set(rep["ram"]) >= {"arena", "stack", "buffers", "static", "total", "available"}
    assert set(rep["flash"]) >= {"weights", "code", "total", "available"}
    # below two 25x5x64 activations: depthwise and pointwise layers overlap their inputs
    assert rep["fits"] is True and rep["arena_bytes"] >= rep["lower_bound_bytes"]
    assert 8_000 < rep["arena_bytes"] < 16_000
    assert any(t["inplace_of"] for t in rep["tensors"])
    assert rep["ram"]["total"] == sum(rep["ram"][k] for k in ("arena", "stack", "buffers",
                                                              "static"))
    for t in rep["tensors"]:
        assert {"name", "bytes", "offset", "first_op", "last_op"} <= set(t)
        assert t["offset"] % 16 == 0 and t["offset"] + t["bytes"] <= rep["arena_bytes"]
    assert max(o["live_bytes"] for o in rep["ops"]) == rep["lower_bound_bytes"]


def test_plan_does_not_fit_exit_1_with_json(tmp_path: Path) -> None:
    html = tmp_path / "plan.html"
    # the DS-CNN fits the micro:bit's 16 KB, but not beside an 8 KB stack reservation
    r = tdp("plan", str(DSCNN), "--board", "microbit-v1", "--stack", "8192", "--json",
            "--html", str(html))
    assert r.returncode == 1
    assert "Traceback" not in r.stderr and "microbit-v1" in r.stderr
    assert "over by" in r.stderr and "hint:" in r.stderr
    rep = json.loads(r.stdout)
    assert rep["fits"] is False and rep["ram"]["over"] > 0
    text = html.read_text()
    assert "data:image/png;base64," in text and "does not fit" in text


def test_plan_text_html_and_options(tmp_path: Path) -> None:
    html = tmp_path / "r.html"
    r = tdp("plan", str(FIX / "residual.tflite"), "--board", "mps2-an386", "--algorithm",
            "greedy-conflicts", "--align", "32", "--html", str(html))
    assert r.returncode == 0, r.stderr
    assert "arena" in r.stdout and "greedy-conflicts" in r.stdout and "fits" in r.stdout
    assert html.exists() and "<img" in html.read_text()
    r = tdp("plan", str(FIX / "residual.tflite"), "--board", "mps2-an386", "--align", "32",
            "--json")
    assert all(t["offset"] % 32 == 0 for t in json.loads(r.stdout)["tensors"])
    # usage errors exit 2; unknown boards and bad models exit 1 with a message
    assert tdp("plan", str(DSCNN), "--board", "mps2-an386", "--align", "3").returncode == 2
    assert tdp("plan", str(DSCNN)).returncode == 2
    r = tdp("plan", str(DSCNN), "--board", "no-such-board")
    assert r.returncode == 1 and "no-such-board" in r.stderr and "Traceback" not in r.stderr
    r = tdp("plan", str(tmp_path / "missing.tflite"), "--board", "mps2-an386")
    assert r.returncode == 1 and "Traceback" not in r.stderr


def test_plan_output_is_reproducible(tmp_path: Path) -> None:
    outs = []
    for n in range(2):
        html = tmp_path / f"{n}.html"
        r = tdp("plan", str(DSCNN), "--board", "mps2-an386", "--json", "--html", str(html))
        outs.append((r.stdout, html.read_bytes()))
    assert outs[0] == outs[1]


def test_stack_reserve_follows_the_bound_on_every_board() -> None:
    """On the 16 KB micro:bit and on the 256 KB nRF52840 alike the stack reserve is the bound
    plus the stated margin (not a fixed 2,048 or 4,096 B); --stack overrides it."""
    from tinydeploy.plan.budget import stack_margin

    for board in ("microbit-v1", "nrf52840dk"):
        r = json.loads(tdp("plan", str(DSCNN), "--board", board, "--json").stdout)
        need = r["stack_need"]
        assert r["stack_reserved"] >= need + stack_margin(need), board
        assert r["stack_reserved"] < need + stack_margin(need) + 64, board
        assert r["stack_reserved"] % 64 == 0 and r["stack_reserved"] < 2048, board
        assert r["stack_margin"] == r["stack_reserved"] - need
        assert "bound" in r["stack_rule"]
    given = json.loads(tdp("plan", str(DSCNN), "--board", "nrf52840dk", "--stack", "3000",
                           "--json").stdout)
    assert given["stack_reserved"] == 3000 and given["stack_rule"] == "given (--stack)"
