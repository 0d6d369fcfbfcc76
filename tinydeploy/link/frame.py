"""Frames: the unit the serial protocol exchanges (docs/protocol.md, "Frame").

On the wire a frame is ``COBS(body) 0x00``; the body is ``type u8, seq u8, length u16 LE,
payload[length], crc16 LE`` with the CRC (CRC-16/CCITT-FALSE) over everything before it.
`FrameDecoder` is the host's receiver: it never raises on garbage, it reports each bad frame
as a `BadFrame` (with the same reason codes the device uses) and resynchronises at the next
0x00, so a stream of noise costs nothing but the frames it destroyed.
"""

from __future__ import annotations

import enum
import struct
from dataclasses import dataclass

from tinydeploy.link import cobs
from tinydeploy.link.crc import crc16

#: Largest payload either side sends or accepts (the device's buffer is sized from it).
MAX_PAYLOAD = 256
HEADER_BYTES = 4
CRC_BYTES = 2
MAX_BODY = HEADER_BYTES + MAX_PAYLOAD + CRC_BYTES
#: Largest encoded frame, without the delimiter.
MAX_ENCODED = cobs.encoded_size_max(MAX_BODY)
DELIMITER = b"\x00"


class FrameFault(enum.IntEnum):
    """Why a received frame was rejected; the values are the protocol's error codes."""

    CRC = 1
    COBS = 2
    TRUNCATED = 3
    LENGTH = 4
    OVERSIZED = 5


@dataclass(frozen=True)
class Frame:
    """One well-formed frame: ``type`` and ``seq`` are 0..255, ``payload`` ≤ MAX_PAYLOAD."""

    type: int
    seq: int
    payload: bytes = b""

    def encode(self) -> bytes:
        return encode_frame(self.type, self.seq, self.payload)


@dataclass(frozen=True)
class BadFrame:
    """A delimited block that was not a valid frame, kept for counting and diagnostics."""

    fault: FrameFault
    raw: bytes
    detail: str


def frame_body(ftype: int, seq: int, payload: bytes) -> bytes:
    """The unencoded body (header, payload, CRC) of a frame."""
    if not 0 <= ftype <= 0xFF or not 0 <= seq <= 0xFF:
        raise ValueError(f"frame type {ftype} and seq {seq} must be 0..255")
    if len(payload) > MAX_PAYLOAD:
        raise ValueError(f"payload of {len(payload)} bytes exceeds the {MAX_PAYLOAD}-byte "
                         "maximum; split it into chunks")
    head = struct.pack("<BBH", ftype, seq, len(payload)) + bytes(payload)
    return head + struct.pack("<H", crc16(head))


def encode_frame(ftype: int, seq: int, payload: bytes = b"") -> bytes:
    """The bytes to write to the port for one frame, delimiter included."""
    return cobs.encode(frame_body(ftype, seq, payload)) + DELIMITER


def parse_block(block: bytes) -> Frame | BadFrame:
    """Decode one delimited block (without its 0x00); never raises."""
    if len(block) > MAX_ENCODED:
        return BadFrame(FrameFault.OVERSIZED, block,
                        f"{len(block)} encoded bytes > {MAX_ENCODED}")
    try:
        body = cobs.decode(block)
    except cobs.CobsError as e:
        return BadFrame(FrameFault.COBS, block, str(e))
    if len(body) < HEADER_BYTES + CRC_BYTES:
        return BadFrame(FrameFault.TRUNCATED, block,
                        f"{len(body)} body bytes < {HEADER_BYTES + CRC_BYTES}")
    ftype, seq, length = struct.unpack_from("<BBH", body)
    if length > MAX_PAYLOAD or len(body) != HEADER_BYTES + length + CRC_BYTES:
        return BadFrame(FrameFault.LENGTH, block,
                        f"length field {length} but {len(body) - HEADER_BYTES - CRC_BYTES} "
                        "payload bytes")
    (crc,) = struct.unpack_from("<H", body, len(body) - CRC_BYTES)
    want = crc16(body[:-CRC_BYTES])
    if crc != want:
        return BadFrame(FrameFault.CRC, block, f"crc {crc:#06x}, computed {want:#06x}")
    return Frame(ftype, seq, bytes(body[HEADER_BYTES:-CRC_BYTES]))


class FrameDecoder:
    """Streaming receiver: feed it bytes as they arrive, get complete frames back.

    Empty blocks (two delimiters in a row) are ignored: senders emit a lone 0x00 to flush
    the other side's partial frame. A block longer than MAX_ENCODED is dropped as it grows
    (memory stays bounded) and reported once its delimiter arrives.
    """

    def __init__(self) -> None:
        self._buf = bytearray()
        self._overflow = 0
        self.frames = 0
        self.bad = 0

    def feed(self, data: bytes) -> list[Frame | BadFrame]:
        out: list[Frame | BadFrame] = []
        chunk = bytes(data)
        start = 0
        while True:
            idx = chunk.find(0, start)
            if idx < 0:
                self._append(chunk[start:])
                return out
            self._append(chunk[start:idx])
            item = self._finish()
            if item is not None:
                out.append(item)
            start = idx + 1

    def reset(self) -> None:
        """Forget a partially received frame (after a port reconnect, for example)."""
        self._buf.clear()
        self._overflow = 0

    def _append(self, data: bytes) -> None:
        if self._overflow:
            self._overflow += len(data)
            return
        self._buf += data
        if len(self._buf) > MAX_ENCODED:
            self._overflow = len(self._buf)
            self._buf = self._buf[:16]

    def _finish(self) -> Frame | BadFrame | None:
        if self._overflow:
            item: Frame | BadFrame = BadFrame(FrameFault.OVERSIZED, bytes(self._buf),
                                              f"{self._overflow} encoded bytes > {MAX_ENCODED}")
        elif not self._buf:
            return None
        else:
            item = parse_block(bytes(self._buf))
        self._buf.clear()
        self._overflow = 0
        if isinstance(item, Frame):
            self.frames += 1
        else:
            self.bad += 1
        return item
