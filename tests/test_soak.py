"""Soak: many inferences over the serial protocol, long audio through `kws stream`, and long
listening through the virtual microphone (`kws listen`).

``--soak`` runs them at full length: 10,000 inferences of the MLP fixture on the emulated
M4 (QEMU mps2-an386, validate app), one hour of audio through the kws app on the host
board (the same C as a native process on a pseudo-terminal; over QEMU's UART the AUDIO
round trips alone take about as long as the audio, so the hour would take over an hour), and
one hour of speech and noise heard by the listening firmware on the emulated nRF52840 at its
64 MHz clock. The default run does 300 inferences and 60 s of audio each.

Checked: every result equals the reference for its own input (the inputs come from a pool
in a shuffled order, so a lost or reordered result shows as a mismatch), no request is lost,
every window's model output arrives in order and equals the host simulation, the detections
equal the detector twin's, the host's resident memory stays flat and the device's free stack
(reserve minus the high-water mark in DONE) does not change (sampled at the start, the middle
and the end; the figures are printed with ``-s``).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tinydeploy.boards import get_board
from tinydeploy.build.firmware import build_firmware
from tinydeploy.flash.runner import Firmware
from tinydeploy.frontend.config import FrontendConfig
from tinydeploy.kws.device import build_kws_firmware
from tinydeploy.kws.stream import DetectorConfig, detect, stream_posteriors, stream_to_device
from tinydeploy.kws.wav import read_wav
from tinydeploy.link.connect import connect
from tinydeploy.link.validate import random_inputs
from tinydeploy.model.loader import load_tflite
from tinydeploy.oracle import Oracle
from tinydeploy.resources import models_dir

ROOT = Path(__file__).resolve().parent.parent
MLP = ROOT / "tests" / "fixtures" / "mlp.tflite"
MODELS = models_dir() / "kws"
WAV = ROOT / "examples" / "kws" / "demo.wav"
POOL = 64
RSS_SLACK_KB = 4096   # allowed growth of the host's resident memory over a whole run

pytestmark = pytest.mark.target


def rss_kb() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def _rss_flat(samples: list[int], what: str) -> None:
    assert len(samples) == 3, samples
    assert max(samples) - samples[0] <= RSS_SLACK_KB, f"{what}: host RSS grew {samples} kB"


def test_soak_inferences_on_qemu(request: pytest.FixtureRequest, tmp_path: Path) -> None:
    n = 10_000 if request.config.getoption("--soak") else 300
    graph = load_tflite(MLP)
    oracle = Oracle(MLP.read_bytes())
    pool = random_inputs(graph, POOL, seed=17)
    want = [[np.asarray(o).reshape(-1) for o in oracle.run(c)] for c in pool]
    assert len({w[0].tobytes() for w in want}) > POOL // 2, "the pool's outputs must differ"
    order = np.random.default_rng(5).integers(0, POOL, n)
    build_firmware(MLP, get_board("mps2-an386"), "validate", tmp_path / "fw", graph=graph)
    rss: list[int] = []
    margins: list[int] = []      # device stack: reserve - high-water mark (DONE, protocol 2)
    wrong, lost = 0, 0
    t0 = time.monotonic()
    with connect(Firmware.from_build_dir(tmp_path / "fw"), timeout=7200) as conn:
        qemu = conn.device.proc.pid  # type: ignore[union-attr]
        for i, k in enumerate(order):
            if i in (0, n // 2, n - 1):
                rss.append(rss_kb())
            got, res = conn.session.run(pool[k], profile=False)
            if i in (0, n // 2, n - 1) and res.done.stack_peak is not None:
                margins.append((res.done.stack_size or 0) - res.done.stack_peak)
            same = all(np.array_equal(np.asarray(g).reshape(-1), w)
                       for g, w in zip(got, want[k], strict=True))
            wrong += not same
        stats = conn.session.stats
        dev_rss = int(Path(f"/proc/{qemu}/status").read_text().split("VmRSS:")[1].split()[0])
    took = time.monotonic() - t0
    print(f"\nsoak: {n} inferences on mps2-an386 in {took:.1f} s ({n / took:.0f}/s); "
          f"{wrong} wrong, {lost} lost, {stats.retries} retries, {stats.bad_frames} bad "
          f"frames, {stats.stale} stale; host RSS start/middle/end {rss} kB; QEMU RSS at "
          f"the end {dev_rss} kB; device free stack start/middle/end {margins} B")
    assert wrong == 0 and lost == 0
    assert len(margins) == 3 and len(set(margins)) == 1 and margins[0] > 0, margins
    assert stats.retries == 0 and stats.bad_frames == 0 and stats.stale == 0
    _rss_flat(rss, "inferences")


def _tiled_audio(seconds: float, infer_every: int) -> tuple[np.ndarray, np.ndarray, int]:
    """The demo recording padded to a period of whole inference steps and repeated for
    ``seconds``: (audio, one period, repetitions). A window covers 1 s, so every window
    whose second lies in repetition r >= 1 is the same as in repetition 1."""
    demo = read_wav(WAV)
    step = 320 * infer_every
    period = np.zeros(-(-demo.size // step) * step, dtype=np.int16)
    period[:demo.size] = demo
    reps = max(2, int(np.ceil(seconds * 16000 / period.size)))
    return np.tile(period, reps), period, reps


def _expected(period: np.ndarray, reps: int, model: Path, fcfg: Any, det: DetectorConfig
              ) -> tuple[np.ndarray, np.ndarray, list[Any]]:
    """The host twin's windows (probabilities, audio times) and detections over ``reps``
    repetitions of ``period``: repetition 0, then repetition 1 over and over (a window covers
    1 s, so every later repetition's windows are repetition 1's, shifted in time)."""
    two = np.tile(period, 2)
    probs2, times2 = stream_posteriors(two, model.read_bytes(), fcfg, det.infer_every)
    n0 = int(np.sum(times2 * 16 <= period.size))           # windows ending in repetition 0
    w1 = probs2[n0:]
    probs = np.concatenate([probs2[:n0]] + [w1] * (reps - 1))
    shift = (period.size * 1000) // 16000
    times = np.concatenate([times2[:n0]] + [times2[n0:] + r * shift for r in range(reps - 1)])
    return probs, times, detect(probs, times, det)


@pytest.mark.parametrize("streamed", [False, True], ids=["full-window", "streamed"])
def test_soak_kws_listen(streamed: bool, request: pytest.FixtureRequest,
                         tmp_path: Path) -> None:
    """The listening firmware on the emulated nRF52840 at 64 MHz hears speech and noise for
    an hour (--soak; 60 s by default): no sample lost, the host twin's detections (label and
    audio time), a duty cycle within the schedule's limit. Full window: the SAME model, an
    inference every 4 frames; streamed: the model `kws listen` hears with by default
    (models/kws-stream), a step every hop of 2 frames, its own detector, and a duty cycle
    of at most 10 %."""
    from tinydeploy.kws.device import frontend_for
    from tinydeploy.kws.listen import listen_emulated
    from tinydeploy.kws.realtime import MAX_UTILISATION
    from tinydeploy.kws.stream import model_detector

    seconds = 3600.0 if request.config.getoption("--soak") else 60.0
    if streamed:
        model = models_dir() / "kws-stream" / "dscnn_stream_int8.tflite"
        det = model_detector(model)              # its detector.json: a window every hop
        assert det.infer_every == 2
    else:
        model = MODELS / "dscnn_int8.tflite"
        det = DetectorConfig(infer_every=4)      # the schedule kws listen chooses here
    choice = frontend_for(model)
    demo = read_wav(WAV)
    noise = (np.random.default_rng(11).standard_normal(6 * 16000) * 300).astype(np.int16)
    speech = np.concatenate([demo, noise])
    step = 320 * det.infer_every
    period = np.zeros(-(-speech.size // step) * step, dtype=np.int16)
    period[:speech.size] = speech
    reps = max(2, int(np.ceil(seconds * 16000 / period.size)))
    _, _, expected = _expected(period, reps, model, choice, det)
    t0 = time.monotonic()
    res = listen_emulated(model, get_board("nrf52840"), np.tile(period, reps), det, choice,
                          tmp_path / "fw", audio_blocks=6, streaming=streamed)
    took = time.monotonic() - t0
    got = [(d.label, d.time_ms) for d in res.detections]
    want = [(d.label, d.time_ms) for d in expected]
    print(f"\nkws listen soak: {res.audio_seconds:.0f} s heard on the emulated nRF52840 at "
          f"64 MHz (icount shift {res.icount_shift}) in {took:.1f} s; {res.final.windows} "
          f"windows, {len(got)} detections ({len(want)} expected), {res.overruns} samples "
          f"lost, duty cycle {100 * res.duty_cycle:.1f} %")
    assert res.overruns == 0
    assert got == want and len(want) >= reps
    assert 0 < res.duty_cycle <= (0.10 if streamed else MAX_UTILISATION)


def test_soak_kws_stream(request: pytest.FixtureRequest, tmp_path: Path) -> None:
    seconds = 3600.0 if request.config.getoption("--soak") else 60.0
    infer_every = 4
    model = MODELS / "dscnn_int8.tflite"
    fcfg = FrontendConfig.load(MODELS / "frontend.json")
    det = DetectorConfig(infer_every=infer_every)
    audio, period, reps = _tiled_audio(seconds, infer_every)
    probs, times, expected = _expected(period, reps, model, fcfg, det)
    out_t = load_tflite(model).outputs[0]
    scale, zp = np.float32(out_t.quant.scale[0]), int(out_t.quant.zero_point[0])

    build_kws_firmware(model, get_board("host"), tmp_path / "fw", det, fcfg)
    rss: list[int] = []
    margins: list[int] = []
    state: dict[str, Any] = {"seen": 0, "wrong": 0, "gaps": 0}
    marks = {1, probs.shape[0] // 2, probs.shape[0]}

    def on_window(n: int, out: bytes | None, done: Any) -> None:
        if n != state["seen"] + 1:
            state["gaps"] += 1
        state["seen"] = n
        if out is None or n > probs.shape[0]:
            state["wrong"] += 1
        else:
            q = np.frombuffer(out, dtype=np.int8).astype(np.int32)
            p = (q - zp).astype(np.float32) * scale
            state["wrong"] += not np.array_equal(p, probs[n - 1])
        if n in marks:
            rss.append(rss_kb())
            if done.stack_peak is not None:
                margins.append((done.stack_size or 0) - done.stack_peak)

    t0 = time.monotonic()
    with connect(Firmware.from_build_dir(tmp_path / "fw"), timeout=14400) as conn:
        res = stream_to_device(conn.session, audio, on_window=on_window)
        stats = conn.session.stats
    took = time.monotonic() - t0
    got = [(d.label, d.time_ms, np.float32(d.score)) for d in res.detections]
    want = [(d.label, d.time_ms, np.float32(d.score)) for d in expected]
    print(f"\nkws soak: {audio.size / 16000:.0f} s of audio ({reps} x {period.size} samples) on "
          f"the host board in {took:.1f} s ({audio.size / 16000 / took:.1f}x real time); "
          f"{res.windows} windows ({state['wrong']} wrong, {state['gaps']} out of order), "
          f"{len(got)} detections ({len(want)} expected); {stats.retries} retries, "
          f"{stats.bad_frames} bad frames; host RSS start/middle/end {rss} kB; device free "
          f"stack start/middle/end {margins} B (the host board owns no stack: it reports 0)")
    assert res.windows == probs.shape[0] == state["seen"]
    assert state["wrong"] == 0 and state["gaps"] == 0
    assert got == want and len(want) >= reps      # the keywords of every repetition
    assert stats.retries == 0 and stats.bad_frames == 0
    _rss_flat(rss, "kws stream")
    assert len(set(margins)) <= 1, margins          # the stack's high-water mark is flat
