"""The listening kws firmware (issue: the doorbell listens for itself): the virtual microphone
under QEMU paced at the board's clock, the schedule chosen on the host, overruns counted.

Target tier: builds for the emulated nRF52840 (its Cortex-M4 stand-in, mps2-an386) and runs
QEMU with -icount shift=4 (62.5 M instructions per emulated second)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tinydeploy.boards import get_board
from tinydeploy.errors import InputDataError
from tinydeploy.flash.qemu import icount_shift_for, qemu_command
from tinydeploy.kws.device import frontend_for
from tinydeploy.kws.listen import block_audio, listen_emulated
from tinydeploy.kws.realtime import MAX_UTILISATION, KwsLoad, choose_schedule
from tinydeploy.kws.stream import DetectorConfig, model_detector, simulate_stream
from tinydeploy.kws.wav import read_wav

ROOT = Path(__file__).resolve().parent.parent
MODEL = ROOT / "models" / "kws" / "dscnn_int8.tflite"
DEMO = ROOT / "examples" / "kws" / "demo.wav"


def test_icount_shift_paces_the_emulated_core_at_the_board_clock() -> None:
    assert icount_shift_for(64_000_000) == 4          # 62.5 M instructions per second
    assert icount_shift_for(16_000_000) == 6
    assert icount_shift_for(1_000_000_000) == 0
    board = get_board("mps2-an386")
    cmd = qemu_command(board, Path("fw.elf"), shift=4, semihosting_args=("/a,b.raw",))
    assert "shift=4,sleep=off" in cmd
    assert "enable=on,target=native,arg=/a,,b.raw" in cmd


def test_schedule_is_the_most_frequent_that_keeps_up() -> None:
    nrf = get_board("nrf52840")
    cfg = frontend_for(MODEL).config
    load = KwsLoad(40_000, 3_000_000, "test")
    s = choose_schedule(nrf, load, cfg)
    # 50 frames/s: 2.0 M front end + 150 M / N model per second within 2/3 of 64 MHz
    assert s.infer_every == 4 and s.keeps_up and s.utilisation <= MAX_UTILISATION
    assert choose_schedule(nrf, load, cfg, 3).utilisation > MAX_UTILISATION
    # blocks: the next frame's one, the source's two, the ~2.4 blocks one inference takes
    assert s.audio_blocks == 1 + 2 + 3
    fast = choose_schedule(nrf, KwsLoad(40_000, 150_000, "streamed"), cfg)
    assert fast.infer_every == 1 and fast.audio_blocks == 4
    with pytest.raises(InputDataError) as e:
        choose_schedule(get_board("microbit-v1"), load, cfg)
    assert "cannot listen in real time" in e.value.message and "16 MHz" in e.value.message


def test_block_audio_keeps_whole_blocks() -> None:
    a = np.arange(1000, dtype=np.int16)
    assert block_audio(a, 320).size == 960


@pytest.mark.target
def test_listening_firmware_equals_the_host_twin(tmp_path: Path) -> None:
    """The same detections (label and audio time) as `kws stream --simulate`, no sample lost,
    and a duty cycle the firmware measured."""
    choice = frontend_for(MODEL)
    audio = block_audio(read_wav(DEMO), choice.config.stride)
    det = DetectorConfig(infer_every=5, first_keyword=2)
    res = listen_emulated(MODEL, get_board("nrf52840"), audio, det, choice, tmp_path / "b",
                          audio_blocks=6)
    twin = simulate_stream(audio, MODEL.read_bytes(), choice, det)
    assert [(d.label, d.time_ms) for d in res.detections] == \
        [(d.label, d.time_ms) for d in twin]
    assert len(twin) >= 2
    assert res.overruns == 0
    assert 0.2 < res.duty_cycle < MAX_UTILISATION
    assert res.final.windows == (res.final.frames - 49) // 5 + 1
    assert res.audio_seconds == pytest.approx(audio.size / 16000, abs=0.02)
    d = res.as_dict()
    assert d["unit"] == "instructions" and 2.5e6 < d["model_per_window"] < 3.5e6
    # memory first for the application too: the whole listening app within 16 KB of RAM
    # (measured from the ELF: arena, stack reserve, audio blocks, rows, detector, link, data)
    manifest = json.loads((tmp_path / "b" / "manifest.json").read_text())
    assert manifest["ram_bytes"] <= 16_384, manifest["ram_bytes"]


@pytest.mark.target
def test_forced_schedule_too_fast_for_the_clock_loses_samples_counted(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "tinydeploy", "kws", "listen", "--board", "nrf52840",
         "--emulate", "--infer-every", "1", "--seconds", "4", "--json",
         "-o", str(tmp_path / "b")],
        capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-2000:]
    d = json.loads(proc.stdout)
    assert d["infer_every"] == 1 and d["schedule"]["keeps_up"] is False
    assert d["overruns"] > 0 and d["overruns"] % 320 == 0     # whole blocks lost, counted
    for key in ("detections", "duty_cycle", "audio_seconds"):
        assert key in d


@pytest.mark.target
def test_listening_to_a_streamed_model_equals_the_full_window_twin(tmp_path: Path) -> None:
    """The shipped model streamed (a step every hop of 2 frames, the step computing only
    what is new): the listening firmware's detections are the host twin's with a full-window
    inference every 2 frames, label and audio time."""
    choice = frontend_for(MODEL)
    audio = block_audio(read_wav(DEMO), choice.config.stride)
    # a threshold low enough that the synthetic demo voices give several events to compare
    det = DetectorConfig(infer_every=2, first_keyword=2, threshold=0.8)
    res = listen_emulated(MODEL, get_board("nrf52840"), audio, det, choice, tmp_path / "b",
                          audio_blocks=6, streaming=True)
    twin = simulate_stream(audio, MODEL.read_bytes(), choice, det)
    assert [(d.label, d.time_ms) for d in res.detections] == \
        [(d.label, d.time_ms) for d in twin]
    assert len(twin) >= 3 and res.overruns == 0
    manifest = json.loads((tmp_path / "b" / "manifest.json").read_text())
    assert "TD_MODEL_STREAMING" in (tmp_path / "b" / "src" / "model" / "model.h").read_text()
    assert manifest["app"] == "kws"


@pytest.mark.target
def test_a_serial_kws_build_says_whether_it_keeps_up(tmp_path: Path) -> None:
    """`build --app kws` gives the same real-time verdict as `plan --app kws` (an inference
    every frame does not keep up on an 84 MHz Cortex-M4; the verdict says which interval
    would)."""
    def build(*extra: str) -> dict:
        proc = subprocess.run(
            [sys.executable, "-m", "tinydeploy", "build", str(MODEL), "--board",
             "nucleo-f401re", "--app", "kws", "--json", "-o", str(tmp_path / str(len(extra))),
             *extra], capture_output=True, text=True, timeout=600, cwd=ROOT)
        assert proc.returncode == 0, proc.stderr[-2000:]
        return json.loads(proc.stdout)["realtime"]

    rt = build("--infer-every", "1")
    assert rt["infer_every"] == 1 and rt["keeps_up"] is False and rt["utilisation"] > 1.0
    rt = build()                                   # the interval of the model's detector.json
    assert rt["infer_every"] == model_detector(MODEL).infer_every and rt["keeps_up"] is True
