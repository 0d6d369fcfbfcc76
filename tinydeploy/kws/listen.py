"""Listening: the kws firmware hears its own microphone, continuously, and streams its results.

On an emulated board the microphone is the virtual one (firmware/audio/virtual): the firmware
reads a raw 16 kHz int16 file through semihosting, one block per block period of the emulated
clock, and QEMU runs with ``-icount shift=N`` chosen so that the emulated core executes
instructions at the board's clock (`tinydeploy.flash.qemu.icount_shift_for`). A schedule too
slow for the clock therefore loses samples here as on the chip, and the firmware counts them.
The host only listens: EVENT frames as keywords fire, STATUS frames every second and a final
one when the file has ended (docs/audio.md, docs/protocol.md).
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from tinydeploy.boards import Board, emulation_target
from tinydeploy.errors import InputDataError, LinkError
from tinydeploy.kws.stream import Detection, DetectorConfig, model_detector

# Wall-clock seconds QEMU may take per second of audio (it runs far faster than real time
# when the core sleeps most of the time) and for starting up.
SECONDS_PER_AUDIO_SECOND = 2.0
START_SECONDS = 60.0


@dataclass(frozen=True)
class ListenResult:
    detections: tuple[Detection, ...]
    final: Any                  # the last STATUS (tinydeploy.link.messages.Status)
    infer_every: int
    audio_blocks: int
    board: str
    target: str
    icount_shift: int
    clock_hz: int
    target_clock_hz: int = 0    # the emulated machine's SysTick clock; 0 on a real board

    @property
    def overruns(self) -> int:
        return int(self.final.overruns)

    @property
    def duty_cycle(self) -> float:
        return float(self.final.duty_cycle)

    @property
    def audio_seconds(self) -> float:
        return self.final.audio_ms / 1000.0

    def instructions(self, count: float) -> float:
        """A count of the firmware's clock as instructions under emulation (SysTick runs at
        the machine's clock; one instruction is 2^shift ns of emulated time), else as is."""
        if self.target_clock_hz and self.final.unit == "cycles":
            return count * 1e9 / self.target_clock_hz / 2 ** self.icount_shift
        return count

    @property
    def unit(self) -> str:
        return "instructions" if self.target_clock_hz else "cycles"

    def as_dict(self, names: list[str] | None = None) -> dict[str, Any]:
        f = self.final
        windows = max(f.windows, 1)
        return {
            "detections": [{"label": names[d.label] if names else d.label, "index": d.label,
                            "time_ms": d.time_ms, "score": d.score} for d in self.detections],
            "overruns": self.overruns, "duty_cycle": self.duty_cycle,
            "infer_every": self.infer_every, "audio_seconds": self.audio_seconds,
            "audio_blocks": self.audio_blocks, "windows": f.windows, "frames": f.frames,
            "board": self.board, "emulated_on": self.target,
            "icount_shift": self.icount_shift, "clock_hz": self.clock_hz,
            "frontend_per_frame": self.instructions(f.frontend / max(f.frames, 1)),
            "model_per_window": self.instructions(f.model / windows), "unit": self.unit,
        }


def block_audio(audio: np.ndarray, stride: int) -> np.ndarray:
    """``audio`` cut to whole blocks of one stride: the microphone delivers whole blocks, so
    the last partial block is never heard (the host twin is given the same samples)."""
    n = (audio.size // stride) * stride
    return np.ascontiguousarray(audio[:n], dtype="<i2")


def listen_emulated(model: Path, board: Board, audio: np.ndarray, det: DetectorConfig,
                    choice: Any, out_dir: Path, *, audio_blocks: int,
                    on_detection: Callable[[Detection], None] | None = None,
                    on_status: Callable[[Any], None] | None = None,
                    streaming: bool = False, optimize: str = "balanced") -> ListenResult:
    """Build the listening firmware for ``board`` (on its emulated stand-in when it is real
    hardware), let it hear ``audio`` through the virtual microphone at the board's clock, and
    collect what it reports."""
    from tinydeploy.flash.qemu import icount_shift_for
    from tinydeploy.flash.runner import Firmware
    from tinydeploy.kws.device import ListenSettings, build_kws_firmware
    from tinydeploy.link.connect import connect

    emulate = not board.qemu_machine
    target = emulation_target(board) if emulate else board
    stride = int(choice.config.stride)
    pcm = block_audio(audio, stride)
    if pcm.size < stride * 3:
        raise InputDataError(f"{pcm.size} samples are too few to listen to",
                             hint="give at least a second of audio")
    build_kws_firmware(model, board, out_dir, det, choice, emulate=emulate,
                       listen=ListenSettings("virtual", audio_blocks), streaming=streaming,
                       optimize=optimize)
    fw = Firmware.from_build_dir(out_dir)
    shift = icount_shift_for(board.clock_hz)
    seconds = pcm.size / 16000.0
    detections: list[Detection] = []
    with tempfile.TemporaryDirectory(prefix="td-listen-") as tmp:
        raw = Path(tmp) / "audio.raw"
        raw.write_bytes(pcm.tobytes())
        timeout = START_SECONDS + SECONDS_PER_AUDIO_SECOND * seconds
        with connect(fw, timeout=timeout,
                     runner_options={"shift": shift, "semihosting_args": (str(raw),)}) as conn:
            session = conn.session
            final = collect(session, timeout, on_detection, on_status, detections,
                            log=lambda: conn.log)
    return ListenResult(tuple(detections), final, det.infer_every, audio_blocks, board.id,
                        target.id, shift, board.clock_hz, target.clock_hz)


def collect(session: Any, timeout: float,
            on_detection: Callable[[Detection], None] | None,
            on_status: Callable[[Any], None] | None, detections: list[Detection], *,
            seconds: float | None = None, log: Callable[[], str] | None = None) -> Any:
    """Read what a listening firmware sends until its final STATUS (a finite source), or,
    with ``seconds``, until that much audio was heard (a microphone never ends). Returns the
    last STATUS."""
    from tinydeploy.link.messages import Event, Log, Status, decode_message

    final: Any = None

    def take(msg: Any) -> bool:
        nonlocal final
        if isinstance(msg, Event):
            d = Detection(int(msg.label), float(msg.score), int(msg.timestamp_ms))
            detections.append(d)
            if on_detection:
                on_detection(d)
        elif isinstance(msg, Status):
            final = msg
            if on_status:
                on_status(msg)
            return bool(msg.final) or (seconds is not None and
                                       msg.audio_ms >= seconds * 1000.0)
        elif isinstance(msg, Log) and msg.level >= 3:
            raise LinkError(f"the listening firmware reported: {msg.text}")
        return False

    pending = list(session.unsolicited)
    session.unsolicited.clear()
    done = any([take(m) for m in pending])
    while not done:
        frame = session.read_frame(timeout)
        if frame is None:
            tail = log() if log else ""
            raise LinkError(f"the listening firmware sent nothing for {timeout:.0f} s",
                            hint=tail[-1000:] or "is it running, and the port right?")
        done = take(decode_message(frame))
    return final


def build_listening(model: Path, board: Board, out_dir: Path, *,
                    choice: Any = None, labels: Path | None = None,
                    infer_every: int | None = None,
                    log: Callable[[str], None] | None = None) -> tuple[Any, Any]:
    """The listening firmware for a board with a microphone (its ``[audio]`` table), with the
    schedule chosen from the front end's and the model's cost measured on the board's
    emulated core: (BuildResult, ListenSchedule). What `build`/`run --app kws` build for such
    a board. ``labels``: the label file (default labels.txt beside the model);
    ``infer_every``: forces the inference interval (else the schedule's)."""
    import dataclasses
    import tempfile

    from tinydeploy.kws.device import (
        ListenSettings,
        audio_source_for,
        build_kws_firmware,
        frontend_for,
    )
    from tinydeploy.kws.labels import keyword_range, load_labels
    from tinydeploy.kws.realtime import measure_kws_load, pick_schedule, stream_hop

    source = audio_source_for(board)
    choice = choice or frontend_for(model)
    names = load_labels(model, labels)
    first, end = keyword_range(names)
    det = replace(model_detector(model, names), first_keyword=first, keyword_end=end)
    with tempfile.TemporaryDirectory(prefix="td-kws-load-") as tmp:
        loads = [measure_kws_load(model, board, choice, Path(tmp) / "full")]
        if stream_hop(model) is not None and infer_every is None:
            loads.append(measure_kws_load(model, board, choice, Path(tmp) / "streamed",
                                          streaming=True))
    sched = pick_schedule(board, loads, choice.config, infer_every)
    if log:
        log(sched.text())
    det = dataclasses.replace(det, infer_every=sched.infer_every)
    res = build_kws_firmware(model, board, out_dir, det, choice,
                             listen=ListenSettings(source, sched.audio_blocks),
                             streaming=sched.streamed)
    return res, sched


def listen_board(model: Path, board: Board, det: DetectorConfig, choice: Any,
                 out_dir: Path, *, audio_blocks: int, seconds: float,
                 port: str | None = None,
                 on_detection: Callable[[Detection], None] | None = None,
                 on_status: Callable[[Any], None] | None = None,
                 streaming: bool = False, optimize: str = "balanced") -> ListenResult:
    """A real board with a microphone: build the listening firmware for its ``[audio]``
    source, flash it with the board's runner, and listen for ``seconds`` of audio."""
    from tinydeploy.flash import runner_for
    from tinydeploy.flash.runner import Firmware
    from tinydeploy.kws.device import ListenSettings, audio_source_for, build_kws_firmware
    from tinydeploy.link.connect import connect

    source = audio_source_for(board)
    build_kws_firmware(model, board, out_dir, det, choice,
                       listen=ListenSettings(source, audio_blocks), streaming=streaming,
                       optimize=optimize)
    fw = Firmware.from_build_dir(out_dir)
    device = runner_for(board, None, port=port).start(fw)
    detections: list[Detection] = []
    timeout = START_SECONDS
    with connect(fw, port=getattr(device, "port", port)) as conn:
        final = collect(conn.session, timeout, on_detection, on_status, detections,
                        seconds=seconds)
    return ListenResult(tuple(detections), final, det.infer_every, audio_blocks, board.id,
                        board.id, 0, board.clock_hz)
