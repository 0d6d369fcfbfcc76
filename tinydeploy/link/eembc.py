"""Host side of the EEMBC runner's text protocol, as the ``eembc`` firmware app speaks it.

The MLPerf Tiny runner (and the EEMBC EnergyRunner) drive a device with text commands ending
in ``%``; the device answers with lines ending in CR LF, the last one ``m-ready``. Lines
starting ``e-`` are errors (the command had no effect). This client does what the runner does
(``db load``, ``db`` data in chunks, ``infer N W``, ``results``) so that tests and scripts can
drive the firmware without the runner; docs/eembc.md describes the commands.

Invariants: one command in flight at a time; every wait is bounded by ``timeout`` and a
device that stops answering is a `LinkError` naming the command and what was received.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from typing import Any

from tinydeploy.errors import LinkError

READY = "m-ready"
TERMINATOR = "%"
# bytes of input per `db` command: what the MLPerf Tiny runner sends (31 without a power
# manager), 65 characters with "db "
DB_CHUNK = 31

_RESULTS = re.compile(r"^m-results-\[([^\]]*)\]$")
_LAP = re.compile(r"^m-lap-us-([0-9]+)$")
_TICKS = re.compile(r"^m-infer-ticks-\[([0-9]+) (\S+) at ([0-9]+) Hz\]$")
_NAME = re.compile(r"^m-name-dut-\[([^\]]+)\]$")
_PROFILE = re.compile(r"^m-(profile|model)-\[([^\]]+)\]$")
_BUFFER = re.compile(r"^m-buffer-([0-9a-f]{2}(?:-[0-9a-f]{2})*)$")


class EembcError(LinkError):
    """The device answered a command with an ``e-[...]`` line."""


@dataclass(frozen=True)
class Reply:
    """Every line the device sent for one command, ``m-ready`` excluded."""

    command: str
    lines: tuple[str, ...]

    @property
    def errors(self) -> tuple[str, ...]:
        return tuple(line for line in self.lines if line.startswith("e-"))

    def check(self) -> Reply:
        """This reply, or EembcError with the device's first error line."""
        if self.errors:
            raise EembcError(f"device rejected '{_short(self.command)}': {self.errors[0]}")
        return self


@dataclass(frozen=True)
class Timing:
    """The timed part of ``infer N W``: two m-lap-us timestamps around N inferences."""

    runs: int
    warmups: int
    start_us: int
    end_us: int
    ticks: int | None        # the raw counter over the N runs, in `unit` (None if not sent)
    unit: str
    clock_hz: int | None

    @property
    def elapsed_us(self) -> int:
        return self.end_us - self.start_us

    @property
    def us_per_inference(self) -> float:
        return self.elapsed_us / self.runs


@dataclass(frozen=True)
class InferResult:
    timing: Timing
    results: tuple[float, ...]
    results_text: tuple[str, ...]   # the values as printed (fixed decimals)
    reply: Reply


def parse_results(lines: tuple[str, ...] | list[str]) -> tuple[tuple[float, ...], tuple[str, ...]]:
    """Values of the (last) ``m-results-[a,b,...]`` line, as floats and as printed."""
    found: tuple[str, ...] | None = None
    for line in lines:
        m = _RESULTS.match(line)
        if m:
            found = tuple(v.strip() for v in m.group(1).split(",") if v.strip())
    if found is None:
        raise LinkError("no m-results-[...] line in the reply: " + " | ".join(lines)[-400:])
    try:
        return tuple(float(v) for v in found), found
    except ValueError:
        raise LinkError(f"m-results values are not numbers: {','.join(found)[:200]}") from None


class EembcClient:
    """Commands over an open pyserial port (``Device.open()`` or
    `tinydeploy.link.session.open_port`). ``timeout`` bounds each reply; ``infer`` takes
    its own (N inferences can take long on a slow board)."""

    def __init__(self, port: Any, timeout: float = 10.0) -> None:
        self.port = port
        self.timeout = timeout
        self._rx = bytearray()

    # ---- lines ----

    def _read_line(self, deadline: float, command: str, got: list[str]) -> str:
        while True:
            nl = self._rx.find(b"\n")
            if nl >= 0:
                raw = bytes(self._rx[:nl])
                del self._rx[:nl + 1]
                return raw.decode("utf-8", errors="replace").strip("\r\0")
            if time.monotonic() > deadline:
                seen = " | ".join(got)[-400:] + (" | " if got else "") + self._rx.decode(
                    "utf-8", errors="replace")[-200:]
                raise LinkError(
                    f"no m-ready from {getattr(self.port, 'port', 'the device')} after "
                    f"'{_short(command)}' within the timeout; received: {seen or 'nothing'}",
                    hint="is the eembc firmware running at this baud rate?")
            try:
                chunk = self.port.read(max(1, getattr(self.port, "in_waiting", 0) or 1))
            except OSError as e:   # the pty closed: the device exited
                raise LinkError(f"serial port closed while waiting for '{_short(command)}': "
                                f"{e}") from None
            if chunk:
                self._rx += chunk

    def read_reply(self, command: str = "", timeout: float | None = None) -> Reply:
        """Lines up to and including ``m-ready`` (which is left out)."""
        deadline = time.monotonic() + (self.timeout if timeout is None else timeout)
        lines: list[str] = []
        while True:
            line = self._read_line(deadline, command, lines)
            if line == READY:
                return Reply(command, tuple(lines))
            if line:
                lines.append(line)

    def read_banner(self, timeout: float | None = None) -> Reply:
        """The start-up lines (m-timestamp-mode-..., m-init-done, m-ready)."""
        return self.read_reply("(start-up)", timeout)

    def write_raw(self, data: bytes) -> None:
        self.port.write(data)
        self.port.flush()

    def send(self, command: str, timeout: float | None = None) -> Reply:
        """One command (without the ``%``) and its reply; errors are not raised here."""
        if TERMINATOR in command:
            raise ValueError(f"command '{_short(command)}' contains the terminator '%'")
        self.write_raw(command.encode("ascii") + TERMINATOR.encode())
        return self.read_reply(command, timeout)

    # ---- the runner's commands ----

    def name(self) -> str:
        reply = self.send("name").check()
        for line in reply.lines:
            m = _NAME.match(line)
            if m:
                return m.group(1)
        raise LinkError(f"no m-name-dut-[...] line in the reply to 'name': {reply.lines}")

    def profile(self) -> dict[str, str]:
        """``{"profile": ..., "model": ...}``: the model label picks the runner's dataset."""
        out = {}
        for line in self.send("profile").check().lines:
            m = _PROFILE.match(line)
            if m:
                out[m.group(1)] = m.group(2)
        if set(out) != {"profile", "model"}:
            raise LinkError(f"'profile' did not answer m-profile-[...] and m-model-[...]: {out}")
        return out

    def timestamp_us(self) -> int:
        for line in self.send("timestamp").check().lines:
            m = _LAP.match(line)
            if m:
                return int(m.group(1))
        raise LinkError("no m-lap-us-N line in the reply to 'timestamp'")

    def load(self, data: bytes, chunk: int = DB_CHUNK) -> None:
        """``db load N`` then the bytes in ``db`` commands of ``chunk`` bytes, as the runner
        does; the last must be answered ``m-load-done``."""
        if chunk < 1:
            raise ValueError(f"chunk must be at least 1 byte, got {chunk}")
        self.send(f"db load {len(data)}").check()
        done = False
        for i in range(0, len(data), chunk):
            reply = self.send("db " + data[i:i + chunk].hex()).check()
            done = "m-load-done" in reply.lines
        if not done:
            raise LinkError(f"the device did not answer m-load-done after {len(data)} bytes")

    def db_print(self, offset: int | None = None, count: int | None = None) -> bytes:
        cmd = "db print" + ("" if offset is None else f" {offset}") + (
            "" if count is None else f" {count}")
        out = bytearray()
        for line in self.send(cmd).check().lines:
            m = _BUFFER.match(line)
            if m:
                out += bytes.fromhex(m.group(1).replace("-", ""))
        return bytes(out)

    def infer(self, runs: int, warmups: int = 0, timeout: float | None = None) -> InferResult:
        """``infer runs warmups``: timing from the two m-lap-us lines, and the results."""
        reply = self.send(f"infer {runs} {warmups}", timeout).check()
        laps = [int(m.group(1)) for m in map(_LAP.match, reply.lines) if m]
        if len(laps) != 2:
            raise LinkError(f"'infer' sent {len(laps)} m-lap-us lines, expected 2: "
                            f"{reply.lines}")
        ticks, unit, hz = None, "", None
        for line in reply.lines:
            m = _TICKS.match(line)
            if m:
                ticks, unit, hz = int(m.group(1)), m.group(2), int(m.group(3))
        values, text = parse_results(reply.lines)
        return InferResult(Timing(runs, warmups, laps[0], laps[1], ticks, unit, hz),
                           values, text, reply)

    def results(self) -> tuple[tuple[float, ...], tuple[str, ...]]:
        """The outputs of the last inference: (floats, values as printed)."""
        return parse_results(self.send("results").check().lines)


def _short(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[:limit] + "..."
