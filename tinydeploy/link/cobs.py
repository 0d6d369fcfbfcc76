"""Consistent Overhead Byte Stuffing: the framing of the serial protocol (docs/protocol.md).

COBS removes every 0x00 from a frame body so that 0x00 can delimit frames on the wire. A
receiver that joins a stream half-way, or loses bytes, resynchronises at the next 0x00.
Invariants: ``decode(encode(b)) == b`` for every ``b``; ``encode`` output contains no zero
byte and is at most ``len(b) + len(b) // 254 + 1`` bytes long.
"""

from __future__ import annotations


class CobsError(ValueError):
    """An encoded block that no COBS encoder could have produced."""


def encoded_size_max(n: int) -> int:
    """Worst-case encoded length of ``n`` body bytes (without the 0x00 delimiter)."""
    return n + n // 254 + 1


def encode(data: bytes) -> bytes:
    """COBS-encode ``data``; the result has no 0x00 byte and no delimiter."""
    out = bytearray([0])
    code_pos = 0
    code = 1
    for byte in data:
        if byte == 0:
            out[code_pos] = code
            code_pos = len(out)
            out.append(0)
            code = 1
            continue
        out.append(byte)
        code += 1
        if code == 0xFF:
            out[code_pos] = code
            code_pos = len(out)
            out.append(0)
            code = 1
    out[code_pos] = code
    return bytes(out)


def decode(block: bytes) -> bytes:
    """Decode one COBS block (delimiter already removed); CobsError if it is malformed."""
    out = bytearray()
    i = 0
    n = len(block)
    while i < n:
        code = block[i]
        if code == 0:
            raise CobsError(f"zero byte inside a COBS block at offset {i}")
        end = i + code
        if end > n:
            raise CobsError(f"COBS code {code} at offset {i} runs past the end ({n} bytes)")
        chunk = block[i + 1:end]
        if 0 in chunk:
            raise CobsError(f"zero byte inside a COBS block after offset {i}")
        out += chunk
        i = end
        if code != 0xFF and i < n:
            out.append(0)
    return bytes(out)
