"""Streaming: the step function equals the full window, byte for byte, step after step.

Models: MLPerf Tiny's DS-CNN architecture with random weights (`tinydeploy.testing.
stream_models`), with SAME padding (the shipped model's shape) and with no padding along
time. The oracle is tflite-micro on the whole window of the last 49 frames.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tinydeploy.boards import get_board
from tinydeploy.build.firmware import build_firmware
from tinydeploy.kernels.registry import select_kernels
from tinydeploy.link.validate import random_frames, validate_stream
from tinydeploy.model.loader import load_tflite
from tinydeploy.oracle import Oracle
from tinydeploy.plan.stream import plan_stream
from tinydeploy.stream.analysis import StreamError, analyze_time
from tinydeploy.stream.schedule import schedule_stream
from tinydeploy.testing.stream_harness import compile_stream_driver, run_stream_driver
from tinydeploy.testing.stream_models import dscnn_model, image_model

STEPS = 200
HOP, WINDOW = 2, 49


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("stream_models")
    out = {}
    for pad in ("same", "valid"):
        p = d / f"dscnn_{pad}.tflite"
        p.write_bytes(dscnn_model(pad, seed=7))
        out[pad] = p
    return out


def _expected(model: bytes, frames: np.ndarray, steps: int) -> np.ndarray:
    oracle = Oracle(model)
    warm = -(-WINDOW // HOP)
    return np.stack([oracle.run([frames[(k + 1) * HOP - WINDOW:(k + 1) * HOP][None]])[0]
                     .reshape(-1) for k in range(warm - 1, warm - 1 + steps)])


# --- analysis and schedule --------------------------------------------------------------


def test_analysis_of_the_dscnn(models: dict[str, Path]) -> None:
    an = analyze_time(load_tflite(models["same"]))
    assert an.axis == 1 and an.window == 49 and an.hop == 2
    first = an.layers[0]
    assert (first.kernel, first.stride, first.pad_top, first.out_rows) == (10, 2, 4, 25)
    assert [la.pad_top for la in an.layers[1:]] == [1, 0] * 4     # depthwise 3x3 SAME, 1x1
    assert an.reduction.op_type == "AVERAGE_POOL_2D" and an.reduction.rows == 25
    assert an.receptive_field == 10 + 2 * 2 * 4
    valid = analyze_time(load_tflite(models["valid"]))
    assert all(la.pad_top == 0 and la.pad_bottom == 0 for la in valid.layers)


def test_valid_chain_computes_only_new_rows(models: dict[str, Path]) -> None:
    s = schedule_stream(load_tflite(models["valid"]))
    assert s.hop == 2 and s.warmup_steps == 25
    assert all(c.region == "tail" and c.pad_top == 0 for c in s.calls)
    for c in s.calls:
        assert c.out_rows == s.tensors[c.layer + 1].hop      # exactly the new rows
    assert s.reduction.top == 0 and s.reduction.bottom == 0
    assert s.macs_fraction() < 0.1


def test_same_chain_recomputes_the_edges(models: dict[str, Path]) -> None:
    s = schedule_stream(load_tflite(models["same"]))
    assert s.reduction.top > 0 and s.reduction.bottom > 0
    assert any(c.region == "cone" for c in s.calls)
    assert s.tensors[0].tail_first == 0       # the cone reads the whole input window
    small = schedule_stream(load_tflite(models["same"]), keep="input")
    assert small.state_bytes < s.state_bytes
    assert sum(t.persistent for t in small.tensors) == 1     # the input window only


def test_non_streamable_models_are_refused_with_a_reason() -> None:
    with pytest.raises(StreamError, match=r"op 1 \(MAX_POOL_2D\).*not local in time"):
        schedule_stream(load_tflite(image_model()))
    with pytest.raises(StreamError, match="stream-axis 2"):
        analyze_time(load_tflite(dscnn_model("same")), axis=2)
    with pytest.raises(StreamError, match="too short"):
        schedule_stream(load_tflite(dscnn_model("same", window=20)))


def test_the_plan_proves_state_rows_untouched(models: dict[str, Path]) -> None:
    g = load_tflite(models["same"])
    sel = select_kernels(g, get_board("mps2-an386"))
    sp = plan_stream(g, sel, schedule_stream(g))
    persistent = {b.name for b in sp.persistent}
    assert {"in", "ring"} <= persistent
    spans = {p.name: (p.offset, p.offset + p.size) for p in sp.plan.placements}
    for b in sp.buffers:
        if b.name in persistent:
            continue
        for s in persistent:        # live at every step: must share no byte with anything
            lo, hi = spans[s]
            a, z = spans[b.name]
            assert z <= lo or a >= hi, f"{b.name} overlaps state buffer {s}"
    assert sp.arena_bytes >= sp.plan.lower_bound_bytes


# --- the step function on the host ------------------------------------------------------


@pytest.fixture(scope="module")
def drivers(models: dict[str, Path], tmp_path_factory: pytest.TempPathFactory
            ) -> dict[str, tuple[Path, dict]]:
    if shutil.which("cc") is None:
        pytest.skip("no host C compiler")
    out = {}
    host = get_board("host")
    for name, keep in (("same", "rows"), ("same_input", "input"), ("valid", "rows")):
        model = models[name.split("_")[0]]
        d = tmp_path_factory.mktemp(f"stream_{name}")
        built = build_firmware(model, host, "validate", d / "project", streaming=True,
                               stream_keep=keep)
        out[name] = (compile_stream_driver(d / "project", d / "driver"),
                     built.manifest["stream"])
    return out


@pytest.mark.parametrize("name", ["same", "same_input", "valid"])
def test_streamed_equals_full_window_on_the_host(name: str, models: dict[str, Path],
                                                 drivers: dict) -> None:
    exe, info = drivers[name]
    model = models[name.split("_")[0]].read_bytes()
    g = load_tflite(model)
    assert info["hop_frames"] == HOP and info["warmup_steps"] == 25
    warm = info["warmup_steps"]
    frames = random_frames(g, (warm - 1 + STEPS) * HOP, seed=11)
    got = run_stream_driver(exe, frames, HOP, 12)[warm - 1:]
    want = _expected(model, frames, STEPS)
    assert len(np.unique(want, axis=0)) > 10          # the outputs do vary with the input
    bad = [k for k in range(STEPS) if not np.array_equal(got[k], want[k])]
    assert not bad, f"{len(bad)} of {STEPS} steps differ, first {bad[0]}: {got[bad[0]]} " \
                    f"vs {want[bad[0]]}"


@pytest.mark.parametrize("name", ["same", "valid"])
def test_a_corrupted_state_row_changes_a_later_step(name: str, models: dict[str, Path],
                                                    drivers: dict) -> None:
    exe, info = drivers[name]
    g = load_tflite(models[name])
    frames = random_frames(g, 80 * HOP, seed=5)
    clean = run_stream_driver(exe, frames, HOP, 12)
    # one row of the first persistent tail after the input (kept across steps), flipped
    # before step 40; the step reads it, and the ring carries its sum on
    bufs = {b["name"]: b for b in info["buffers"]}
    tail = next(n for n in sorted(bufs) if n.startswith("tail"))
    row = bufs[tail]["offset"] - info["step_input_offset"]
    bad = run_stream_driver(exe, frames, HOP, 12, corrupt=(40, row, 64))
    assert np.array_equal(clean[:40], bad[:40])
    assert not np.array_equal(clean[40:], bad[40:])
    # corrupting rows that were just consumed and are overwritten changes nothing
    assert np.array_equal(clean, run_stream_driver(exe, frames, HOP, 12, corrupt=(40, 0, 0)))


# --- emulated boards: one firmware run streams all steps ---------------------------------


def _streamed_on_device(model: Path, board_id: str, out: Path, frames: np.ndarray,
                        **build: Any) -> tuple[Any, Any]:
    """Build ``model`` streamed for ``board_id``'s emulated stand-in (``build``: more
    build_firmware options) and compare its steps over ``frames`` with tflite-micro on each
    full window: the build's result and validate_stream's report."""
    from tinydeploy.flash.runner import Firmware
    from tinydeploy.link.connect import connect

    built = build_firmware(model, get_board(board_id), "validate", out, emulate=True,
                           streaming=True, **build)
    with connect(Firmware.from_build_dir(out)) as conn:
        return built, validate_stream(lambda x: conn.session.run([x]), model.read_bytes(),
                                      frames, HOP, WINDOW, STEPS)


@pytest.mark.parametrize("board_id", ["mps2-an386", "microbit-v1"])
@pytest.mark.parametrize("pad", ["same", "valid"])
def test_streamed_equals_full_window_on_emulated_boards(board_id: str, pad: str,
                                                        models: dict[str, Path],
                                                        tmp_path: Path) -> None:
    if shutil.which("qemu-system-arm") is None or shutil.which("arm-none-eabi-gcc") is None:
        pytest.skip("no QEMU or ARM toolchain")
    # seed 17: its first all-real window holds frames the first step wrote (a reset that
    # cleared them made that window differ on the device, seed 13 hid it)
    frames = random_frames(load_tflite(models[pad]), (24 + STEPS) * HOP, seed=17)
    _, rep = _streamed_on_device(models[pad], board_id, tmp_path, frames)
    assert rep.steps == STEPS and rep.mismatches == 0, rep


def test_the_reset_keeps_the_step_input(models: dict[str, Path], tmp_path: Path) -> None:
    """The first td_model_step() resets the state: it must not clear the step input, which
    the application writes before that first step (its frames are in the first window whose
    frames are all real: clearing them made that window's output differ from the full
    window's on the devices)."""
    import re

    for pad in ("same", "valid"):
        out = tmp_path / pad
        built = build_firmware(models[pad], get_board("host"), "validate", out,
                               streaming=True)
        info = built.manifest["stream"]
        lo = info["step_input_offset"]
        hi = lo + info["step_input_bytes"]
        text = (out / "src" / "model" / "model.c").read_text()
        reset = text[text.index("void td_model_reset(void)"):]
        reset = reset[:reset.index("\n}\n")]
        spans = [(int(a), int(a) + int(n)) for a, n in
                 re.findall(r"memset\(td_arena \+ (\d+)u, -?\d+, (\d+)u\)", reset)]
        assert spans, reset
        assert all(b <= lo or a >= hi for a, b in spans), (pad, spans, lo, hi)


@pytest.mark.parametrize("pad", ["same", "valid"])
def test_streamed_speed_kernels_equal_full_window_on_the_m4(pad: str, models: dict[str, Path],
                                                            tmp_path: Path) -> None:
    """--optimize speed streams the depthwise layers on the kernel with widened weights
    (td_dwconv2d_3x3_wide_s8_dsp: its asm runs for the border columns of the folded PAD and
    the inner ones), bit-exact step after step on the emulated M4."""
    if shutil.which("qemu-system-arm") is None or shutil.which("arm-none-eabi-gcc") is None:
        pytest.skip("no QEMU or ARM toolchain")
    frames = random_frames(load_tflite(models[pad]), (24 + STEPS) * HOP, seed=13)
    built, rep = _streamed_on_device(models[pad], "mps2-an386", tmp_path, frames,
                                     optimize="speed")
    dw = {k.symbol for k in built.kernels if "dwconv" in k.symbol}
    if pad == "valid":
        assert dw == {"td_dwconv2d_3x3_wide_s8_dsp"}, dw
    assert rep.steps == STEPS and rep.mismatches == 0, rep


# --- contract: random time-convolutional chains ---------------------------------------------


def _contract(seed: int, tmp: Path) -> None:
    from tinydeploy.testing.stream_models import random_chain

    model = random_chain(seed)
    path = tmp / f"chain{seed}.tflite"
    path.write_bytes(model)
    g = load_tflite(model)
    for keep in ("rows", "input"):
        try:
            built = build_firmware(path, get_board("host"), "validate", tmp / keep,
                                   graph=g, streaming=True, stream_keep=keep)
        except StreamError as e:
            assert "too short" in str(e), e     # the one refusal a random chain may earn
            return
        info = built.manifest["stream"]
        hop, window, warm = info["hop_frames"], info["window_frames"], info["warmup_steps"]
        exe = compile_stream_driver(tmp / keep, tmp / keep / "driver")
        steps = 24
        frames = random_frames(g, (warm - 1 + steps) * hop, seed)
        got = run_stream_driver(exe, frames, hop, g.outputs[0].nbytes)[warm - 1:]
        oracle = Oracle(model)
        for k in range(steps):
            end = (warm + k) * hop
            want = oracle.run([frames[end - window:end][None]])[0].reshape(-1)
            assert np.array_equal(got[k], want), (seed, keep, k, got[k], want)


@pytest.mark.parametrize("seed", [0, 1, 3])
def test_contract_random_chains(seed: int, tmp_path: Path) -> None:
    if shutil.which("cc") is None:
        pytest.skip("no host C compiler")
    _contract(seed, tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(4, 40))
def test_contract_random_chains_sweep(seed: int, tmp_path: Path) -> None:
    if shutil.which("cc") is None:
        pytest.skip("no host C compiler")
    _contract(seed, tmp_path)


# --- the shipped model on features of speech ----------------------------------------------


def _speech_frames(model: Path, frames: int) -> np.ndarray:
    """int8 feature rows of spoken keywords (espeak-ng, 150 words per minute) through the
    model's own front end, frame by frame as the device computes them."""
    import subprocess

    from tinydeploy.frontend.native import input_quant_of
    from tinydeploy.frontend.presets import resolve_frontend
    from tinydeploy.kws.wav import decode_wav

    espeak = shutil.which("espeak-ng")
    if espeak is None:
        pytest.skip("no espeak-ng")
    text = ("yes. no. up. down. left. right. on. off. stop. go. yes, go left, then stop. "
            "no, turn right and go up. down and off, then on again. stop! go! left, right.")
    r = subprocess.run([espeak, "--stdout", "-s", "150", text], capture_output=True,
                       check=True, timeout=60)
    audio = decode_wav(r.stdout, "espeak-ng")
    choice = resolve_frontend(None, model)
    rows = choice.spec.host(choice.config).stream_s8(audio, input_quant_of(model.read_bytes()))
    assert len(rows) >= frames, f"{len(rows)} frames of speech, {frames} wanted"
    shape = load_tflite(model).inputs[0].shape
    return np.ascontiguousarray(rows[:frames]).reshape(frames, *shape[2:])


SHIPPED = ("kws/dscnn_int8.tflite", "kws-stream/dscnn_stream_int8.tflite")


@pytest.mark.parametrize("rel", SHIPPED)
def test_shipped_model_streamed_on_speech_features(rel: str, tmp_path: Path) -> None:
    """Both committed DS-CNNs (trained weights; SAME padding, and none along time) streamed
    over 200 steps of real front-end features of speech equal tflite-micro on each full
    window."""
    if shutil.which("cc") is None:
        pytest.skip("no host C compiler")
    from tinydeploy.resources import models_dir

    model = models_dir() / rel
    built = build_firmware(model, get_board("host"), "validate", tmp_path / "p",
                           streaming=True)
    info = built.manifest["stream"]
    assert (info["hop_frames"], info["window_frames"]) == (HOP, WINDOW)
    warm = info["warmup_steps"]
    exe = compile_stream_driver(tmp_path / "p", tmp_path / "d")
    frames = _speech_frames(model, (warm - 1 + STEPS) * HOP)
    got = run_stream_driver(exe, frames, HOP, 12)[warm - 1:]
    want = _expected(model.read_bytes(), frames, STEPS)
    assert len(np.unique(want, axis=0)) > 20
    bad = [k for k in range(STEPS) if not np.array_equal(got[k], want[k])]
    assert not bad, f"{len(bad)} of {STEPS} steps differ, first {bad[0]}"


@pytest.mark.parametrize("rel", SHIPPED)
def test_shipped_model_streamed_on_speech_features_on_the_m4(rel: str, tmp_path: Path
                                                             ) -> None:
    if shutil.which("qemu-system-arm") is None or shutil.which("arm-none-eabi-gcc") is None:
        pytest.skip("no QEMU or ARM toolchain")
    from tinydeploy.resources import models_dir

    model = models_dir() / rel
    _, rep = _streamed_on_device(model, "mps2-an386", tmp_path,
                                 _speech_frames(model, (24 + STEPS) * HOP))
    assert rep.steps == STEPS and rep.mismatches == 0, rep


def test_the_listening_model_computes_one_new_row_per_layer() -> None:
    """The committed streaming model (no padding along time) has no edge rows: a step
    computes exactly its hop's new rows of every layer (one per layer after the first
    convolution's stride), keeps rows, and fits its arena and state in 16 KB on the M4."""
    from tinydeploy.kernels.registry import select_kernels
    from tinydeploy.plan.stream import choose_stream
    from tinydeploy.resources import models_dir

    model = models_dir() / "kws-stream" / "dscnn_stream_int8.tflite"
    g = load_tflite(model)
    board = get_board("nrf52840dk")
    splan = choose_stream(g, select_kernels(g, board), board, "kws", stack_bytes=2048)
    sched = splan.schedule
    assert (sched.hop, sched.window, sched.keep) == (HOP, WINDOW, "rows")
    red = sched.reduction
    assert (red.top, red.bottom, red.new) == (0, 0, 1)
    for t in sched.tensors:
        assert (t.top, t.bottom, t.cone) == (0, 0, 0), t
        assert t.hop == (HOP if t.position == 0 else 1), t        # the new rows, no more
        assert t.new_first == t.rows - t.hop, t
    assert splan.arena_bytes <= 16 * 1024 and 0 < sched.state_bytes < splan.arena_bytes


# --- the command line ----------------------------------------------------------------------


def test_cli_refuses_a_non_streamable_model(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    from tinydeploy.cli import main

    path = tmp_path / "image.tflite"
    path.write_bytes(image_model())
    assert main(["plan", str(path), "--board", "host", "--streaming"]) == 1
    err = capsys.readouterr().err
    assert "op 1 (MAX_POOL_2D) cannot be streamed" in err and "Traceback" not in err


def test_cli_plan_streaming_json(models: dict[str, Path],
                                 capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from tinydeploy.cli import main

    assert main(["plan", str(models["valid"]), "--board", "mps2-an386", "--streaming",
                 "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    s = doc["streaming"]
    assert s["hop_frames"] == 2 and s["keep"] == "rows"
    full, streamed = s["full_window"], s["streamed"]
    # the budget is the streamed build's (its arena), the layout the full window's
    assert doc["arena_bytes"] == doc["ram"]["arena"] == streamed["arena_bytes"]
    assert doc["layout_arena_bytes"] == full["arena_bytes"]
    assert streamed["per_step_instructions"] * 5 < full["instructions_per_inference"]
    assert streamed["arena_bytes"] < full["arena_bytes"] and streamed["state_bytes"] > 0
    # --optimize size keeps the full window
    assert main(["plan", str(models["valid"]), "--board", "mps2-an386", "--streaming",
                 "--optimize", "size", "--json"]) == 0
    assert "streaming" not in json.loads(capsys.readouterr().out)


@pytest.mark.target
def test_cli_bench_and_validate_streaming_json(models: dict[str, Path], tmp_path: Path) -> None:
    """`bench --streaming --json` carries the step's instructions (the run's count, not its
    milliseconds), the state bytes and the hop; `validate --streaming --json` the steps
    compared and the mismatches."""
    import json
    import subprocess
    import sys

    def tool(*argv: str) -> dict:
        r = subprocess.run([sys.executable, "-m", "tinydeploy", *argv, "--json"],
                           capture_output=True, text=True, timeout=600, cwd=tmp_path)
        assert r.returncode == 0, r.stderr
        return json.loads(r.stdout)

    b = tool("bench", str(models["valid"]), "--board", "mps2-an386", "--streaming")
    assert b["per_step_instructions"] == b["per_inference"] == b["instructions_per_inference"]
    assert isinstance(b["per_step_instructions"], int)
    assert 100_000 < b["per_step_instructions"] < 250_000
    assert b["hop_frames"] == HOP and 0 < b["state_bytes"] < b["arena_bytes"]
    v = tool("validate", str(models["valid"]), "--board", "mps2-an386", "--streaming",
             "--steps", "30")
    assert v["steps"] == 30 and v["mismatches"] == 0
