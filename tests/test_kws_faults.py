"""`kws stream` over a flaky cable (tests/faultproxy.py) and through a board reset.

The kws app on the emulated M4 gets the demo recording (8.7 s) in AUDIO frames through the
fault proxy. Every run either reports exactly what the fault-free run reports (the default
run's 2 s: what the host simulation predicts) — every
detection (label, time, score), every window's model output in order, the window count and
the per-window counts (within 0.01 %: they are measurements that include waiting for the UART) —
or fails with a LinkError naming the samples whose results are
lost; never a different number, never a hang (each case is bounded by the session's
timeouts and the stream's attempts per frame). ``-s`` prints the figures.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from faultproxy import FaultProxy, Faults

from tinydeploy.boards import get_board
from tinydeploy.errors import LinkError
from tinydeploy.flash import Firmware, runner_for
from tinydeploy.frontend.config import FrontendConfig
from tinydeploy.kws.device import build_kws_firmware
from tinydeploy.kws.stream import DetectorConfig, detect, stream_posteriors, stream_to_device
from tinydeploy.kws.wav import read_wav
from tinydeploy.link.session import Session, open_port
from tinydeploy.model.loader import load_tflite
from tinydeploy.resources import models_dir

ROOT = Path(__file__).resolve().parent.parent
MODELS = models_dir() / "kws"
WAV = ROOT / "examples" / "kws" / "demo.wav"
BOARD = "mps2-an386"
DET = DetectorConfig(infer_every=3)

pytestmark = pytest.mark.target


@pytest.fixture(scope="module")
def firmware(tmp_path_factory: pytest.TempPathFactory) -> Firmware:
    d = tmp_path_factory.mktemp("kws-faults")
    build_kws_firmware(MODELS / "dscnn_int8.tflite", get_board(BOARD), d, DET,
                       FrontendConfig.load(MODELS / "frontend.json"))
    return Firmware.from_build_dir(d)


def _outcome(res: Any, windows: list[tuple[int, bytes | None]]) -> dict[str, Any]:
    """Everything the host reports about a stream (not the wall-clock seconds)."""
    return {"detections": [(d.label, d.time_ms, d.score) for d in res.detections],
            "windows": res.windows, "outputs": windows, "last_output": res.last_output,
            "unit": res.unit,
            "counts": (res.per_window_min, res.per_window_max, res.per_window_mean,
                       res.frontend_total, res.model_total)}


def _same(got: dict[str, Any], want: dict[str, Any]) -> bool:
    """Equal results; the per-window counts (measurements, not results) within 0.01 %: a
    window that raises an EVENT waits for the UART, which the cable's delays stretch."""
    if {k: v for k, v in got.items() if k in want and k != "counts"} != \
            {k: v for k, v in want.items() if k != "counts"}:
        return False
    if "counts" not in want:        # the simulation: counts only have to be there
        return all(c > 0 for c in got["counts"])
    return all(abs(a - b) <= 1e-4 * max(abs(b), 1) + 16
               for a, b in zip(got["counts"], want["counts"], strict=True))


def _stream(firmware: Firmware, faults: Faults, seed: int, port_wrap: Any = None,
            seconds: float | None = None
            ) -> tuple[dict[str, Any] | None, str | None, dict[str, int], float]:
    audio = read_wav(WAV)
    if seconds is not None:
        audio = audio[:int(seconds * 16000)]
    t0 = time.monotonic()
    windows: list[tuple[int, bytes | None]] = []
    with runner_for(firmware.board).start(firmware, timeout=300) as dev:
        ser = dev.open(timeout=0.02)
        with FaultProxy(ser, Faults(), seed=seed) as proxy:
            host = open_port(proxy.port, firmware.board.uart.baud, 0.05)
            try:
                port = port_wrap(host, dev) if port_wrap else host
                session = Session(port, timeout=0.5, retries=4)
                session.hello()
                proxy.faults = faults          # the faults start with the stream
                try:
                    res = stream_to_device(session, audio,
                                           on_window=lambda n, out, _: windows.append((n, out)))
                    outcome, lost = _outcome(res, windows), None
                except LinkError as e:
                    outcome, lost = None, e.message
            finally:
                host.close()
        ser.close()
    return outcome, lost, dict(proxy.counts), time.monotonic() - t0


SHORT = 2.0      # seconds of the recording in the default run (its first keyword at 1.6 s)


def _clean(firmware: Firmware, seconds: float | None) -> dict[str, Any]:
    outcome, lost, counts, took = _stream(firmware, Faults(), seed=0, seconds=seconds)
    assert lost is None and outcome is not None, lost
    assert not counts
    assert outcome["detections"], "the recording holds keywords"
    assert outcome["windows"] == len(outcome["outputs"]) > 10
    print(f"\nclean ({seconds or 'all'} s): {outcome['windows']} windows, "
          f"{len(outcome['detections'])} detections; {took:.1f} s")
    return outcome


@pytest.fixture(scope="module")
def clean(firmware: Firmware) -> dict[str | None, dict[str, Any]]:
    return {}           # filled on demand (--sweep: the whole recording's fault-free run)


def _simulated(seconds: float) -> dict[str, Any]:
    """The results the host simulation (the C front end, tflite-micro, the detector twin)
    predicts for the first ``seconds``: the default run's reference, no clean device run
    needed. Per-window counts are device measurements: not predicted."""
    model = MODELS / "dscnn_int8.tflite"
    audio = read_wav(WAV)[:int(seconds * 16000)]
    probs, times = stream_posteriors(audio, model.read_bytes(),
                                     FrontendConfig.load(MODELS / "frontend.json"),
                                     DET.infer_every)
    out = load_tflite(model).outputs[0]
    scale, zp = np.float32(out.quant.scale[0]), int(out.quant.zero_point[0])
    q = [bytes(np.clip(np.round(p / scale) + zp, -128, 127).astype(np.int8).tobytes())
         for p in probs]
    for b, p in zip(q, probs, strict=True):     # the bytes give back the very probabilities
        assert np.array_equal((np.frombuffer(b, np.int8).astype(np.int32) - zp)
                              .astype(np.float32) * scale, p)
    return {"detections": [(d.label, d.time_ms, d.score) for d in detect(probs, times, DET)],
            "windows": len(q), "outputs": [(k + 1, b) for k, b in enumerate(q)],
            "last_output": q[-1] if q else None}


RATES = {
    "flip-light": Faults(flip=0.0005),
    "flip": Faults(flip=0.002),
    "drop": Faults(drop=0.002),
    "duplicate": Faults(duplicate=0.002),
    "delay": Faults(delay=0.05, delay_s=0.05),
    "all": Faults(drop=0.001, duplicate=0.001, flip=0.001, delay=0.02, delay_s=0.05),
}
DEFAULT = {"flip-light"}     # the default run; --sweep runs every rate on the whole recording


@pytest.mark.parametrize("name", [pytest.param(n, marks=() if n in DEFAULT else
                                               (pytest.mark.slow,)) for n in RATES])
def test_kws_stream_through_a_flaky_cable(name: str, firmware: Firmware,
                                          clean: dict[Any, dict[str, Any]]) -> None:
    seconds = SHORT if name in DEFAULT else None
    if seconds not in clean:
        clean[seconds] = _simulated(SHORT) if seconds else _clean(firmware, seconds)
    want = clean[seconds]
    outcome, lost, counts, took = _stream(firmware, RATES[name], seed=7, seconds=seconds)
    print(f"\n{name}: faults {counts}; "
          + (f"LOST: {lost}" if lost else f"{outcome['windows']} windows, "  # type: ignore
             f"{len(outcome['detections'])} detections, equal to the reference")  # type: ignore
          + f"; {took:.1f} s")
    assert sum(counts.values()) > 0, "no fault was injected"
    if lost is not None:
        assert "samples [" in lost or "lost at sample" in lost, lost   # names what was lost
        return
    assert not any("stopped" in k for k in counts), counts
    assert outcome is not None and _same(outcome, want), \
        "a result differs from the fault-free run"


class _PassThroughPort:
    """The host's port as the stream sees it, passed through unchanged; a test overrides
    ``write`` to act on the device (``dev``: the emulator) at a chosen write."""

    def __init__(self, host: Any, dev: Any) -> None:
        self.host, self.dev = host, dev
        self.timeout = host.timeout

    def read(self, size: int = 1) -> bytes:
        return bytes(self.host.read(size))

    def write(self, data: bytes) -> int | None:
        return self.host.write(data)

    def flush(self) -> None:
        self.host.flush()

    @property
    def in_waiting(self) -> int:
        return int(self.host.in_waiting)


def test_kws_stream_through_a_board_reset(firmware: Firmware) -> None:
    """A reset in the middle of an AUDIO frame, 1.2 s into the stream: the device has lost
    the stream, so the command must fail naming the sample where it was lost."""
    state = {"writes": 0, "resets": 0}

    class ResettingPort(_PassThroughPort):
        def write(self, data: bytes) -> int | None:
            state["writes"] += 1
            if state["writes"] == 150 and not state["resets"]:     # HELLO is 1
                half = len(data) // 2
                self.host.write(data[:half])
                self.host.flush()
                time.sleep(0.05)
                self.dev._qmp({"execute": "system_reset"})
                state["resets"] += 1
                time.sleep(0.3)
                return self.host.write(data[half:])
            return self.host.write(data)

    outcome, lost, _, took = _stream(firmware, Faults(), seed=0, port_wrap=ResettingPort,
                                     seconds=SHORT)
    print(f"\nreset: {state['resets']} reset; {lost or 'no error'}; {took:.1f} s")
    assert state["resets"] == 1
    assert outcome is None, "the stream went on as if nothing was lost"
    assert lost is not None and "lost at sample" in lost, lost


@pytest.mark.slow      # ~18 s: --sweep
def test_kws_stream_gives_up_on_a_silent_device(firmware: Firmware) -> None:
    """The emulator stops (QMP ``stop``: the board hangs) in the middle of the stream: the
    stream fails within its bound (16 resends of the session's 0.5 s here), naming the
    samples, instead of waiting for ever."""
    state = {"writes": 0}

    class FreezingPort(_PassThroughPort):
        def write(self, data: bytes) -> int | None:
            state["writes"] += 1
            if state["writes"] == 100:
                self.dev._qmp({"execute": "stop"})
            return self.host.write(data)

    t0 = time.monotonic()
    outcome, lost, _, took = _stream(firmware, Faults(), seed=0, port_wrap=FreezingPort,
                                     seconds=SHORT)
    print(f"\nfrozen: {lost}; {took:.1f} s")
    assert outcome is None and lost is not None
    assert "no reply to AUDIO" in lost and "samples [" in lost, lost
    assert time.monotonic() - t0 < 120
