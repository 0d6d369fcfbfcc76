"""Does a board keep up with live keyword spotting? Compute and link, from measured figures.

Compute: every stride the front end computes one frame; every ``infer_every`` frames the model
runs once. The load per second is ``frames/s * frontend_per_frame + windows/s *
model_per_window`` instructions, measured by running the kws app on the board's emulated
stand-in (QEMU ``-icount shift=0``: SysTick ticks are instructions, docs in EMULATION.md) and
reading the counts the app reports per window (front end and model, protocol DONE/PROFILE).
Instructions are a lower bound on cycles (one cycle per instruction at best; flash wait
states and multi-cycle instructions add more), so a utilisation near 1 does not keep up on
the real chip: the verdict asks for at most `MAX_UTILISATION`.

Link: the host streams 16-bit PCM in AUDIO frames of `AUDIO_CHUNK` samples; each frame is
4 header + 4 first_sample + 2 * 126 PCM + 2 CRC bytes, COBS-encoded (+1 per 254 bytes, +1
delimiter), 10 bits per byte on a UART (8N1): 16 kHz needs 336.5 kbit/s, more than 115,200.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from tinydeploy.errors import InputDataError

AUDIO_CHUNK = 126                 # samples per AUDIO frame (tinydeploy.kws.stream)
# Busy at most 2/3 of the clock at one cycle per instruction: on the chip, flash wait states
# and multi-cycle instructions make cycles exceed instructions (up to 1.5x keeps up).
MAX_UTILISATION = 2 / 3
MAX_INFER_EVERY = 10              # frames between inferences: beyond 200 ms a word is missed


def audio_frame_bytes(samples: int = AUDIO_CHUNK) -> int:
    """Wire bytes of one AUDIO frame: COBS(type, seq, length, payload, CRC) + delimiter."""
    body = 4 + 4 + 2 * samples + 2
    return body + 1 + body // 254 + 1


def link_bits_per_second(sample_rate: int = 16000, samples: int = AUDIO_CHUNK) -> float:
    """UART bit rate (8N1: 10 bits a byte) that carries ``sample_rate`` int16 samples/s."""
    return sample_rate / samples * audio_frame_bytes(samples) * 10.0


@dataclass(frozen=True)
class KwsLoad:
    """Measured instructions: one front-end frame, one model inference."""

    frontend_per_frame: float
    model_per_window: float
    source: str
    stream_hop: int = 0       # > 0: the model streamed, model_per_window is one step's


@dataclass(frozen=True)
class RealtimeVerdict:
    board: str
    clock_hz: int
    stride_ms: float
    infer_every: int
    interval_ms: float
    instructions_per_second: float
    utilisation: float
    keeps_up_compute: bool
    link_baud: int
    link_needed_baud: float
    keeps_up_link: bool
    frontend_per_frame: float
    model_per_window: float
    source: str

    @property
    def keeps_up(self) -> bool:
        return self.keeps_up_compute and self.keeps_up_link

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "keeps_up": self.keeps_up,
                "max_utilisation": MAX_UTILISATION}

    def text(self) -> str:
        cpu = (f"{self.instructions_per_second / 1e6:.1f} M instructions/s of "
               f"{self.clock_hz / 1e6:.0f} MHz ({100 * self.utilisation:.0f} %, limit "
               f"{100 * MAX_UTILISATION:.0f} %)")
        link = (f"link {self.link_baud:,} baud for {self.link_needed_baud / 1e3:.1f} kbit/s "
                "of 16-bit PCM")
        verdict = "keeps up" if self.keeps_up else "does NOT keep up"
        why = []
        if not self.keeps_up_compute:
            n = min_infer_every(self)
            why.append("compute" + (f" (it would with --infer-every {n})" if n else ""))
        if not self.keeps_up_link:
            why.append("link rate (set uart.kws_baud in the board file)")
        return (f"real time: {self.board} {verdict} with an inference every "
                f"{self.interval_ms:.0f} ms: {cpu}; {link}"
                + (f" -- short on {' and '.join(why)}" if why else "")
                + f" [{self.source}]")


def realtime_verdict(board: Any, load: KwsLoad, cfg: Any, infer_every: int) -> RealtimeVerdict:
    if infer_every < 1:
        raise InputDataError(f"--infer-every must be >= 1, got {infer_every}")
    frames_per_s = cfg.sample_rate / cfg.stride
    ips = frames_per_s * load.frontend_per_frame + frames_per_s / infer_every * \
        load.model_per_window
    util = ips / board.clock_hz
    baud = board.uart.baud_for("kws")
    need = link_bits_per_second(cfg.sample_rate)
    v = RealtimeVerdict(board.id, board.clock_hz, 1000.0 * cfg.stride / cfg.sample_rate,
                        infer_every, 1000.0 * cfg.stride * infer_every / cfg.sample_rate,
                        ips, util, util <= MAX_UTILISATION, baud, need,
                        baud >= need or board.family == "host", load.frontend_per_frame,
                        load.model_per_window, load.source)
    return v


@dataclass(frozen=True)
class ListenSchedule:
    """The listening firmware's schedule on one board, chosen on the host: an inference every
    ``infer_every`` frames, and ``audio_blocks`` blocks of one stride in its audio ring: the
    blocks the next frame needs (one window less a stride: the app hands the oldest back
    before an inference runs), the two the source fills and arms, and the blocks that arrive
    while one frame and one inference run at one instruction per cycle; never fewer than a
    window's blocks and the source's two."""

    board: str
    clock_hz: int
    infer_every: int
    audio_blocks: int
    utilisation: float
    forced: bool
    frontend_per_frame: float
    model_per_window: float
    source: str
    streamed: bool = False

    @property
    def keeps_up(self) -> bool:
        return self.utilisation <= MAX_UTILISATION

    @property
    def margin(self) -> float:
        """How far below the limit the load stays, as a fraction of the clock."""
        return MAX_UTILISATION - self.utilisation

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "keeps_up": self.keeps_up, "margin": self.margin,
                "max_utilisation": MAX_UTILISATION}

    def text(self) -> str:
        verdict = "keeps up" if self.keeps_up else "does NOT keep up"
        why = ("a streamed step every hop" if self.streamed else "as asked" if self.forced
               else "the most frequent that keeps up")
        return (f"schedule: {self.board} {verdict} with an inference every {self.infer_every} "
                f"frame{'s' if self.infer_every > 1 else ''} ({why}): busy "
                f"{100 * self.utilisation:.0f} % of {self.clock_hz / 1e6:.0f} MHz at one "
                f"cycle per instruction (limit {100 * MAX_UTILISATION:.0f} %, margin "
                f"{100 * self.margin:+.0f} points); {self.audio_blocks} audio blocks "
                f"[{self.source}]")


def load_utilisation(board: Any, load: KwsLoad, cfg: Any, infer_every: int) -> float:
    """Busy fraction of ``board``'s clock at one cycle per instruction."""
    frames_per_s = cfg.sample_rate / cfg.stride
    ips = frames_per_s * load.frontend_per_frame + \
        frames_per_s / infer_every * load.model_per_window
    return float(ips / board.clock_hz)


def pick_schedule(board: Any, loads: list[KwsLoad], cfg: Any,
                  infer_every: int | None = None) -> ListenSchedule:
    """Of the full-window and the streamed load (when the model streams), the schedule that
    keeps up with the least of the clock; ties go to the first (the full window: no state).
    The InputDataError of the first load when none keeps up."""
    found: list[ListenSchedule] = []
    first: InputDataError | None = None
    for load in loads:
        try:
            found.append(choose_schedule(board, load, cfg, infer_every))
        except InputDataError as e:
            first = first or e
    ok = [s for s in found if s.keeps_up] or found
    if not ok:
        assert first is not None
        raise first
    return min(ok, key=lambda s: s.utilisation)


def choose_schedule(board: Any, load: KwsLoad, cfg: Any,
                    infer_every: int | None = None) -> ListenSchedule:
    """The most frequent inference (the smallest ``infer_every`` <= `MAX_INFER_EVERY`) whose
    load stays within `MAX_UTILISATION` of the clock, and the audio blocks it needs; an
    InputDataError with the figures when none keeps up. ``infer_every`` forces the interval
    (a schedule that does not keep up is then built as asked: it loses samples, counted)."""
    if load.stream_hop:
        # a streamed model runs a step every hop, which is also when its window is new
        if infer_every is not None and infer_every != load.stream_hop:
            raise InputDataError(f"--infer-every {infer_every}: a streamed model runs a step "
                                 f"every hop ({load.stream_hop} frames)",
                                 hint="leave --infer-every out, or listen to the full window")
        n = load.stream_hop
        if load_utilisation(board, load, cfg, n) > MAX_UTILISATION and infer_every is None:
            raise InputDataError(
                f"{board.id} cannot listen to the streamed model in real time: busy "
                f"{100 * load_utilisation(board, load, cfg, n):.0f} % of its "
                f"{board.clock_hz / 1e6:.0f} MHz (limit {100 * MAX_UTILISATION:.0f} %): "
                f"{load.frontend_per_frame:,.0f} instructions per front-end frame, "
                f"{load.model_per_window:,.0f} per step every {n} frames",
                hint="listen to the full window (--full-window), or a faster board")
    elif infer_every is not None:
        if not 1 <= infer_every <= 1000:
            raise InputDataError(f"--infer-every must be in [1, 1000], got {infer_every}")
        n = infer_every
    else:
        ok = [k for k in range(1, MAX_INFER_EVERY + 1)
              if load_utilisation(board, load, cfg, k) <= MAX_UTILISATION]
        if not ok:
            best = load_utilisation(board, load, cfg, MAX_INFER_EVERY)
            ms = MAX_INFER_EVERY * 1000 * cfg.stride // cfg.sample_rate
            raise InputDataError(
                f"{board.id} cannot listen in real time: with an inference every "
                f"{MAX_INFER_EVERY} frames ({ms} ms) it would be busy {100 * best:.0f} % of "
                f"its {board.clock_hz / 1e6:.0f} MHz "
                f"(limit {100 * MAX_UTILISATION:.0f} %): {load.frontend_per_frame:,.0f} "
                f"instructions per front-end frame, {load.model_per_window:,.0f} per inference",
                hint="a smaller or streamed model (--streaming), a cheaper front end, or a "
                     "faster board")
        n = ok[0]
    block_instructions = board.clock_hz * cfg.stride / cfg.sample_rate
    burst = math.ceil((load.frontend_per_frame + load.model_per_window) / block_instructions)
    window_blocks = -(-cfg.window // cfg.stride)
    blocks = max(window_blocks - 1 + 2 + burst, window_blocks + 2)
    return ListenSchedule(board.id, board.clock_hz, n, blocks,
                          load_utilisation(board, load, cfg, n), infer_every is not None,
                          load.frontend_per_frame, load.model_per_window, load.source,
                          load.stream_hop > 0)


def build_verdict(model: Path, board: Any, frontend: Any = None,
                  infer_every: int | None = None) -> RealtimeVerdict | None:
    """The real-time verdict of the serial kws firmware just built for ``board`` (what
    `plan --app kws` says), measured on its emulated stand-in; None when the board has none
    to measure on."""
    import tempfile

    from tinydeploy.frontend.presets import resolve_frontend
    from tinydeploy.kws.stream import model_detector

    if not board.qemu_machine and not board.emulate:
        return None
    choice = resolve_frontend(frontend, Path(model))
    with tempfile.TemporaryDirectory(prefix="td-kws-rt-") as tmp:
        load = measure_kws_load(Path(model), board, choice, Path(tmp) / "fw")
    every = infer_every or model_detector(Path(model)).infer_every
    return realtime_verdict(board, load, choice.config, every)


def min_infer_every(v: RealtimeVerdict) -> int | None:
    """The smallest inference interval (in frames) at which compute keeps up, if any."""
    frames_per_s = 1000.0 / v.stride_ms
    spare = MAX_UTILISATION * v.clock_hz - frames_per_s * v.frontend_per_frame
    if spare <= 0:
        return None
    return max(1, math.ceil(frames_per_s * v.model_per_window / spare))


def to_instructions(count: float, unit: str, board: Any) -> float:
    """SysTick at the processor clock under ``-icount shift=0`` advances clock / 1 GHz ticks
    per instruction (EMULATION.md): instructions = ticks * 1e9 / clock."""
    if board.qemu_machine and unit == "cycles":
        return count * 1e9 / board.clock_hz
    return count


def stream_hop(model: Path) -> int | None:
    """The hop in frames of ``model`` streamed (docs/streaming.md), None when it cannot be."""
    from tinydeploy.model.loader import load_tflite
    from tinydeploy.stream.analysis import StreamError
    from tinydeploy.stream.schedule import schedule_stream

    try:
        return int(schedule_stream(load_tflite(Path(model))).hop)
    except StreamError:
        return None


def measure_kws_load(model: Path, board: Any, choice: Any, out_dir: Path,
                     seconds: float = 1.5, streaming: bool = False,
                     optimize: str = "balanced") -> KwsLoad:
    """Run the kws app on ``board``'s emulated stand-in, streaming ``seconds`` of noise with an
    inference every frame (``streaming``: the model streamed, a step every hop); the counts it
    reports per window give the two figures."""
    from tinydeploy.boards import emulation_target
    from tinydeploy.flash.runner import Firmware
    from tinydeploy.kws.device import build_kws_firmware
    from tinydeploy.kws.stream import DetectorConfig, stream_to_device
    from tinydeploy.link.connect import connect

    emulate = not board.qemu_machine
    if emulate and not board.emulate:
        raise InputDataError(f"board '{board.id}' has no emulated stand-in to measure the kws "
                             f"app on",
                             hint="give the figures: --kws-instructions FRONTEND,MODEL")
    target = emulation_target(board) if emulate else board
    cfg = choice.config
    hop = 1
    if streaming:
        found = stream_hop(model)
        if found is None:
            raise InputDataError(f"{model}: the model cannot be streamed (tinydeploy plan "
                                 "--streaming says why)")
        hop = found
        seconds = max(seconds, (cfg.frames + 4 * hop) * cfg.stride / cfg.sample_rate + 0.1)
    build_kws_firmware(Path(model), board, out_dir, DetectorConfig(infer_every=hop), choice,
                       emulate=emulate, streaming=streaming, optimize=optimize)
    n = int(seconds * cfg.sample_rate)
    audio = (np.random.default_rng(0).standard_normal(n) * 2000).astype(np.int16)
    with connect(Firmware.from_build_dir(out_dir)) as conn:
        res = stream_to_device(conn.session, audio)
    if res.windows < 2:
        raise InputDataError(f"measuring the kws app: {res.windows} windows in {seconds} s")
    if streaming:      # a step every hop from the first frame on (warm-up steps included)
        frames = res.windows * hop - (hop - cfg.frames % hop) % hop
    else:              # frames computed up to the last window
        frames = cfg.frames + res.windows - 1
    fe = to_instructions(res.frontend_total / frames, res.unit, target)
    model_i = to_instructions(res.model_total / res.windows, res.unit, target)
    what = "per step (streamed)" if streaming else "per inference"
    return KwsLoad(fe, model_i, f"measured: kws app on {target.id} (QEMU icount), "
                                f"{fe:,.0f} instructions per front-end frame, "
                                f"{model_i:,.0f} {what}", hop if streaming else 0)
