"""Live decoding of a device's frames, for ``tinydeploy monitor`` and ``flash --monitor``.

`Monitor` reads a port, decodes every frame into its typed message and hands it to a sink
(rich text or one JSON object per line). It survives the port disappearing (a board reset or
a replugged cable): it reports the loss, retries opening every ``retry`` seconds, and
carries on; everything decoded before the loss has already been emitted, only a frame cut
in half is dropped (and counted).
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TextIO

from tinydeploy.errors import LinkError
from tinydeploy.link.frame import BadFrame, Frame, FrameDecoder, encode_frame
from tinydeploy.link.messages import Hello, Info, Message, decode_message, to_json
from tinydeploy.link.units import converter_for_board_id


@dataclass
class MonitorStats:
    frames: int = 0
    bad_frames: int = 0
    reconnects: int = 0
    by_type: dict[str, int] = field(default_factory=dict)


class JsonSink:
    """One JSON object per line on ``out`` (stdout), flushed at once."""

    def __init__(self, out: TextIO | None = None) -> None:
        self.out = out or sys.stdout

    def message(self, t: float, msg: Message, seq: int) -> None:
        self._emit({"t": round(t, 4), **to_json(msg, seq)})

    def bad(self, t: float, bad: BadFrame) -> None:
        self._emit({"t": round(t, 4), "type": "BAD_FRAME", "fault": bad.fault.name,
                    "detail": bad.detail})

    def status(self, t: float, text: str) -> None:
        self._emit({"t": round(t, 4), "type": "STATUS", "text": text})

    def _emit(self, obj: dict[str, Any]) -> None:
        self.out.write(json.dumps(obj) + "\n")
        self.out.flush()


class RichSink:
    """Human-readable lines with rich markup; status lines go to stderr."""

    def __init__(self) -> None:
        from tinydeploy.report.output import stderr, stdout

        self.console = stdout
        self.err = stderr

    def message(self, t: float, msg: Message, seq: int) -> None:
        d = to_json(msg, seq)
        kind = d.pop("type")
        d.pop("seq", None)
        style = {"ERROR": "red", "LOG": "cyan", "EVENT": "bold green", "DONE": "yellow",
                 "PROFILE": "yellow"}.get(str(kind), "white")
        body = " ".join(f"{k}={_short(v)}" for k, v in d.items())
        self.console.print(f"[dim]{t:9.3f}[/dim] [{style}]{kind:<8}[/{style}] "
                           f"[dim]#{seq}[/dim] {body}", markup=True)

    def bad(self, t: float, bad: BadFrame) -> None:
        self.console.print(f"[dim]{t:9.3f}[/dim] [red]BAD {bad.fault.name}[/red] {bad.detail}")

    def status(self, t: float, text: str) -> None:
        self.err.print(f"[dim]{t:9.3f}[/dim] [magenta]{text}[/magenta]")


def _short(v: Any) -> str:
    s = str(v)
    return s if len(s) <= 80 else s[:77] + "..."


class Monitor:
    """Decode frames from the port that ``opener()`` returns until duration/count is met."""

    def __init__(self, opener: Callable[[], Any], sink: Any, *, retry: float = 0.5,
                 hello: bool = False, alive: Callable[[], bool] | None = None,
                 convert: Callable[[Message], Message] | None = None,
                 learn_units: bool = False) -> None:
        self.opener = opener
        # without a board (monitor --port): the device's INFO names its board, from which on
        # the counts of an emulated one are converted too
        self.learn_units = learn_units
        self.convert = convert   # the device's counts into the host's unit (link/units.py)
        self.alive = alive
        self.sink = sink
        self.retry = retry
        self.hello = hello
        self.stats = MonitorStats()
        self.decoder = FrameDecoder()
        self._t0 = time.monotonic()

    def now(self) -> float:
        return time.monotonic() - self._t0

    def run(self, duration: float | None = None, count: int | None = None) -> MonitorStats:
        deadline = None if duration is None else time.monotonic() + duration
        port = self.opener()  # errors on the first open go to the caller
        self._greet(port)
        try:
            while True:
                if deadline is not None and time.monotonic() >= deadline:
                    break
                if count is not None and self.stats.frames >= count:
                    break
                try:
                    data = port.read(max(1, port.in_waiting))
                except (OSError, ValueError) as e:
                    _close(port)
                    port = self._reconnect(e, deadline)
                    if port is None:
                        break
                    continue
                if data:
                    self._feed(data)
        finally:
            _close(port)
        return self.stats

    def _greet(self, port: Any) -> None:
        if self.hello:
            port.write(b"\x00" + encode_frame(int(Hello.TYPE), 1, b""))
            port.flush()

    def _feed(self, data: bytes) -> None:
        t = self.now()
        for item in self.decoder.feed(data):
            if isinstance(item, BadFrame):
                self.stats.bad_frames += 1
                self.sink.bad(t, item)
                continue
            self._emit(t, item)

    def _emit(self, t: float, frame: Frame) -> None:
        try:
            msg = decode_message(frame)
            if self.convert is None and self.learn_units and isinstance(msg, Info):
                self.convert = converter_for_board_id(msg.board)
            if self.convert is not None:
                msg = self.convert(msg)
        except LinkError as e:
            self.stats.bad_frames += 1
            self.sink.status(t, f"undecodable frame type 0x{frame.type:02x}: {e.message}")
            return
        self.stats.frames += 1
        name = msg.TYPE.name
        self.stats.by_type[name] = self.stats.by_type.get(name, 0) + 1
        self.sink.message(t, msg, frame.seq)

    def _reconnect(self, err: BaseException, deadline: float | None) -> Any:
        self.decoder.reset()
        self.sink.status(self.now(), f"port lost ({err}); waiting for it to come back")
        while deadline is None or time.monotonic() < deadline:
            if self.alive is not None and not self.alive():
                self.sink.status(self.now(), "device stopped")
                return None
            time.sleep(self.retry)
            try:
                port = self.opener()
            except LinkError:
                continue
            self.stats.reconnects += 1
            self.sink.status(self.now(), "port back; monitoring again")
            self._greet(port)
            return port
        return None


def _close(port: Any) -> None:
    try:
        port.close()
    except Exception:  # noqa: BLE001 - closing a vanished port may fail in many ways
        pass
