"""The monitor fed random bytes between valid frames, and a port that vanishes and returns:
it keeps running, counts the garbage, reconnects, and loses no valid frame."""

from __future__ import annotations

import random

from tinydeploy.link.frame import encode_frame
from tinydeploy.link.messages import Log
from tinydeploy.link.monitor import Monitor

FRAMES = 400


class ScriptedPort:
    """Serves ``chunks`` to read(); raises OSError (the port vanished) at a None chunk."""

    def __init__(self, chunks: list[bytes | None]) -> None:
        self.chunks = chunks
        self.in_waiting = 0

    def read(self, size: int = 1) -> bytes:
        if not self.chunks:
            return b""
        c = self.chunks.pop(0)
        if c is None:
            raise OSError(5, "Input/output error")
        return c

    def write(self, data: bytes) -> int:
        return len(data)

    def flush(self) -> None:
        pass

    def close(self) -> None:
        pass


class Collect:
    def __init__(self) -> None:
        self.texts: list[str] = []
        self.bad_count = 0
        self.statuses: list[str] = []

    def message(self, t: float, msg: object, seq: int) -> None:
        if isinstance(msg, Log):
            self.texts.append(msg.text)

    def bad(self, t: float, bad: object) -> None:
        self.bad_count += 1

    def status(self, t: float, text: str) -> None:
        self.statuses.append(text)


def test_monitor_survives_garbage_and_a_vanishing_port() -> None:
    rng = random.Random(4)
    streams: list[list[bytes | None]] = [[], [], []]
    sent = []
    for k in range(FRAMES):
        s = streams[k * len(streams) // FRAMES]
        garbage = bytes(rng.randrange(256) for _ in range(rng.randrange(0, 300)))
        text = f"frame {k}"
        sent.append(text)
        frame = b"\x00" + encode_frame(int(Log.TYPE), 0, Log(1, text).pack())
        data = garbage + frame
        cut = rng.randrange(len(data) + 1)        # arbitrary read boundaries
        s += [data[:cut], data[cut:]]
    for s in streams[:-1]:
        s.append(None)                            # the port vanishes between two frames
    ports = [ScriptedPort(s) for s in streams]
    sink = Collect()
    mon = Monitor(lambda: ports.pop(0) if ports else ScriptedPort([]), sink, retry=0.01)
    stats = mon.run(count=FRAMES, duration=20)
    got = [t for t in sink.texts if t.startswith("frame ")]
    assert got[:FRAMES] == sent, f"lost {sorted(set(sent) - set(got))[:10]}"
    assert stats.reconnects == len(streams) - 1
    assert sink.bad_count > FRAMES // 4                 # the garbage was seen, and counted
    assert any("port lost" in s for s in sink.statuses)
