"""A minimal, bounds-checked FlatBuffers reader.

The TFLite loader reads only a few dozen fields, and a model file is untrusted input: every
offset is checked against the buffer before it is followed, so a truncated, mutated or hostile
file raises `FlatBufferError` (never IndexError, struct.error, MemoryError or a hang). Loops are
bounded by vector lengths that are themselves checked against the remaining bytes.
"""

from __future__ import annotations

import struct

import numpy as np


class FlatBufferError(Exception):
    """The bytes are not a well-formed FlatBuffer at the place being read."""


_SCALARS = {
    "b": 1, "B": 1, "?": 1, "h": 2, "H": 2, "i": 4, "I": 4, "q": 8, "Q": 8, "f": 4, "d": 8,
}


class Buffer:
    def __init__(self, data: bytes) -> None:
        self.data = data
        self.view = memoryview(data)
        self.size = len(data)

    def check(self, pos: int, n: int, what: str) -> None:
        if pos < 0 or n < 0 or pos + n > self.size:
            raise FlatBufferError(
                f"{what} at byte {pos} (+{n}) lies outside the {self.size}-byte file")

    def scalar(self, fmt: str, pos: int, what: str = "value") -> int | float | bool:
        self.check(pos, _SCALARS[fmt], what)
        return struct.unpack_from("<" + fmt, self.data, pos)[0]

    def root(self) -> Table:
        pos = int(self.scalar("I", 0, "root offset"))
        return Table(self, pos, "root table")


class Table:
    """A table at ``pos``; fields are addressed by their schema index."""

    def __init__(self, buf: Buffer, pos: int, what: str) -> None:
        self.buf = buf
        self.pos = pos
        self.what = what
        soff = int(buf.scalar("i", pos, f"{what} vtable offset"))
        vt = pos - soff
        self.vt_size = int(buf.scalar("H", vt, f"{what} vtable"))
        self.table_size = int(buf.scalar("H", vt + 2, f"{what} vtable"))
        if self.vt_size < 4 or self.vt_size % 2:
            raise FlatBufferError(f"{what} has a malformed vtable (size {self.vt_size})")
        buf.check(vt, self.vt_size, f"{what} vtable")
        buf.check(pos, self.table_size, what)
        self.vt = vt

    def _field(self, index: int) -> int:
        o = 4 + 2 * index
        if o + 2 > self.vt_size:
            return 0
        off = int(self.buf.scalar("H", self.vt + o))
        if off and off >= self.table_size:
            raise FlatBufferError(f"{self.what} field {index} lies outside its table")
        return off

    def scalar(self, index: int, fmt: str, default: int | float | bool = 0) -> int | float | bool:
        off = self._field(index)
        if not off:
            return default
        return self.buf.scalar(fmt, self.pos + off, f"{self.what} field {index}")

    def _indirect(self, index: int, what: str) -> int | None:
        off = self._field(index)
        if not off:
            return None
        at = self.pos + off
        rel = int(self.buf.scalar("I", at, what))
        return at + rel

    def table(self, index: int, what: str) -> Table | None:
        pos = self._indirect(index, what)
        return None if pos is None else Table(self.buf, pos, what)

    def string(self, index: int, what: str) -> str | None:
        pos = self._indirect(index, what)
        if pos is None:
            return None
        n = int(self.buf.scalar("I", pos, what))
        self.buf.check(pos + 4, n, what)
        raw = bytes(self.buf.view[pos + 4: pos + 4 + n])
        return raw.decode("utf-8", errors="replace")

    def vector_len(self, index: int, what: str, elem_size: int) -> tuple[int, int] | None:
        pos = self._indirect(index, what)
        if pos is None:
            return None
        n = int(self.buf.scalar("I", pos, what))
        self.buf.check(pos + 4, n * elem_size, what)
        return pos + 4, n

    def numbers(self, index: int, dtype: str, what: str) -> np.ndarray | None:
        """A vector of scalars as a read-only numpy array (little-endian ``dtype``)."""
        dt = np.dtype(dtype)
        loc = self.vector_len(index, what, dt.itemsize)
        if loc is None:
            return None
        start, n = loc
        arr = np.frombuffer(self.buf.data, dtype=dt, count=n, offset=start)
        return arr

    def tables(self, index: int, what: str) -> list[Table]:
        loc = self.vector_len(index, what, 4)
        if loc is None:
            return []
        start, n = loc
        out = []
        for i in range(n):
            at = start + 4 * i
            rel = int(self.buf.scalar("I", at, what))
            out.append(Table(self.buf, at + rel, f"{what}[{i}]"))
        return out

    def strings_as_bytes(self, index: int, what: str) -> bytes | None:
        """A [ubyte] vector as bytes (without copying more than needed)."""
        loc = self.vector_len(index, what, 1)
        if loc is None:
            return None
        start, n = loc
        return bytes(self.buf.view[start: start + n])
