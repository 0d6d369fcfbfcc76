"""A flaky cable for tests: a pseudo-terminal that forwards bytes to a device's serial port,
dropping, duplicating, bit-flipping and delaying them at set rates.

The host opens ``proxy.port`` (the slave of a pty this proxy owns) as it would open the
board's port; one thread forwards host-to-device bytes, one device-to-host bytes, each byte
facing the faults independently, drawn from a seeded generator (the same seed gives the same
faults for the same byte stream). ``counts`` says how many of each fault happened.
"""

from __future__ import annotations

import os
import random
import select
import threading
import time
import tty
from collections import Counter
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Faults:
    """Per-byte probabilities; ``delay_s`` is the longest pause before forwarding a chunk."""

    drop: float = 0.0
    duplicate: float = 0.0
    flip: float = 0.0
    delay: float = 0.0
    delay_s: float = 0.02


class FaultProxy:
    def __init__(self, device_port: Any, faults: Faults, seed: int = 0) -> None:
        """``device_port``: an open pyserial port to the device (read with a short timeout)."""
        self.dev = device_port
        self.faults = faults
        self.rng = random.Random(seed)
        self.counts: Counter[str] = Counter()
        self.master, self.slave = os.openpty()
        tty.setraw(self.slave)
        tty.setraw(self.master)
        self.port = os.ttyname(self.slave)
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._threads = [threading.Thread(target=self._to_device, daemon=True),
                         threading.Thread(target=self._to_host, daemon=True)]
        for t in self._threads:
            t.start()

    def _mangle(self, data: bytes, direction: str) -> bytes:
        f = self.faults
        out = bytearray()
        with self._lock:
            for b in data:
                r = self.rng.random()
                if r < f.drop:
                    self.counts[f"{direction} dropped"] += 1
                    continue
                if r < f.drop + f.flip:
                    b ^= 1 << self.rng.randrange(8)
                    self.counts[f"{direction} flipped"] += 1
                out.append(b)
                if self.rng.random() < f.duplicate:
                    out.append(b)
                    self.counts[f"{direction} duplicated"] += 1
            if out and self.rng.random() < f.delay:
                self.counts[f"{direction} delayed"] += 1
                pause = self.rng.uniform(0, f.delay_s)
            else:
                pause = 0.0
        if pause:
            time.sleep(pause)
        return bytes(out)

    def _to_device(self) -> None:
        while not self._stop.is_set():
            try:
                r, _, _ = select.select([self.master], [], [], 0.05)
                if not r:
                    continue
                data = os.read(self.master, 4096)
            except OSError:
                return
            out = self._mangle(data, "host->device")
            if out:
                try:
                    self.dev.write(out)
                except Exception:  # noqa: BLE001 - the device went away: stop forwarding
                    return

    def _to_host(self) -> None:
        while not self._stop.is_set():
            try:
                # what is waiting, or the first byte that comes: a full-size read would hold
                # every reply back for the port's whole timeout
                data = self.dev.read(max(1, min(4096, self.dev.in_waiting)))
            except Exception as e:  # noqa: BLE001 - the device went away: stop forwarding
                if not self._stop.is_set():
                    self.counts[f"device->host stopped: {type(e).__name__}: {e}"] += 1
                return
            if not data:
                continue
            out = self._mangle(data, "device->host")
            try:
                if out:
                    os.write(self.master, out)
            except OSError:
                return

    def close(self) -> None:
        self._stop.set()
        for t in self._threads:
            t.join(timeout=2)
        for fd in (self.master, self.slave):
            try:
                os.close(fd)
            except OSError:
                pass

    def __enter__(self) -> FaultProxy:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
