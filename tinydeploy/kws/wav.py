"""WAV reading and writing for keyword spotting: everything becomes 16 kHz mono int16.

Accepted: RIFF/WAVE with PCM (8-bit unsigned, 16/24/32-bit signed) or IEEE float (32/64-bit),
any channel count (channels are averaged) and any sample rate (resampled, see `resample`).
Streaming writers (espeak-ng --stdout) leave placeholder chunk sizes: a chunk that claims
more bytes than the file holds is read up to the end of the file. Anything else (not RIFF,
no fmt or data chunk, compressed formats, no samples) is an `InputDataError` naming the file.
"""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np

from tinydeploy.errors import InputDataError

SAMPLE_RATE = 16000
_PCM, _FLOAT, _EXTENSIBLE = 1, 3, 0xFFFE


def _bad(source: str, msg: str) -> InputDataError:
    return InputDataError(f"{source}: {msg}",
                          hint="expected a RIFF/WAVE file with PCM or float samples")


def decode_wav(data: bytes, source: str = "<bytes>",
               rate: int = SAMPLE_RATE) -> np.ndarray:
    """Decode WAV bytes to mono int16 at ``rate`` Hz."""
    if len(data) < 12 or data[:4] != b"RIFF" or data[8:12] != b"WAVE":
        what = "empty file" if not data else f"not a RIFF/WAVE file ({len(data)} bytes)"
        raise _bad(source, what)
    pos, fmt, raw = 12, None, None
    while pos + 8 <= len(data):
        cid, size = data[pos:pos + 4], struct.unpack_from("<I", data, pos + 4)[0]
        body = data[pos + 8:pos + 8 + size]
        if cid == b"fmt ":
            if len(body) < 16:
                raise _bad(source, f"fmt chunk of {len(body)} bytes is truncated")
            fmt = struct.unpack_from("<HHIIHH", body)
            if fmt[0] == _EXTENSIBLE and len(body) >= 26:
                fmt = (struct.unpack_from("<H", body, 24)[0], *fmt[1:])
        elif cid == b"data":
            raw = body
            break
        pos += 8 + size + (size & 1)
    if fmt is None:
        raise _bad(source, "no fmt chunk")
    if raw is None:
        raise _bad(source, "no data chunk")
    tag, channels, src_rate, _, _, bits = fmt
    if channels < 1 or src_rate < 1:
        raise _bad(source, f"{channels} channels at {src_rate} Hz")
    width = bits // 8
    if tag == _PCM and bits in (8, 16, 24, 32):
        n = len(raw) // (width * channels) * channels
        if bits == 8:
            x = (np.frombuffer(raw, np.uint8, n).astype(np.float64) - 128.0) * 256.0
        elif bits == 16:
            x = np.frombuffer(raw, "<i2", n).astype(np.float64)
        elif bits == 24:
            b = np.frombuffer(raw, np.uint8, n * 3).reshape(-1, 3).astype(np.int32)
            v = b[:, 0] | (b[:, 1] << 8) | (b[:, 2] << 16)
            x = (np.where(v >= 1 << 23, v - (1 << 24), v)).astype(np.float64) / 256.0
        else:
            x = np.frombuffer(raw, "<i4", n).astype(np.float64) / 65536.0
    elif tag == _FLOAT and bits in (32, 64):
        n = len(raw) // (width * channels) * channels
        x = np.frombuffer(raw, "<f4" if bits == 32 else "<f8", n).astype(np.float64) * 32768.0
        if not np.isfinite(x).all():
            raise _bad(source, "float samples contain NaN or infinity")
    else:
        raise _bad(source, f"unsupported sample format (tag {tag:#x}, {bits} bits)")
    if x.size == 0:
        raise _bad(source, f"no samples ({len(raw)} data bytes, {channels} channels, "
                           f"{bits} bits)")
    x = x.reshape(-1, channels).mean(axis=1)
    if src_rate != rate:
        x = resample(x, src_rate, rate)
    return np.clip(np.round(x), -32768, 32767).astype(np.int16)


def resample(x: np.ndarray, src_rate: int, dst_rate: int) -> np.ndarray:
    """Band-limited resampling of a whole signal by FFT: zero-pad to limit wrap-around, keep
    the spectrum below the lower Nyquist frequency, inverse-transform at the new length.
    Simple and exact for short clips; the output length is round(len * dst / src)."""
    n = x.size
    m = max(1, int(round(n * dst_rate / src_rate)))
    pad = 64
    xp = np.concatenate([x, np.zeros(pad)])
    N = xp.size
    M = max(1, int(round(N * dst_rate / src_rate)))
    spec = np.fft.rfft(xp)
    keep = min(spec.size, M // 2 + 1)
    out_spec = np.zeros(M // 2 + 1, dtype=complex)
    out_spec[:keep] = spec[:keep]
    y = np.fft.irfft(out_spec, n=M) * (M / N)
    return y[:m]


def read_wav(path: str | Path, rate: int = SAMPLE_RATE) -> np.ndarray:
    p = Path(path)
    try:
        data = p.read_bytes()
    except OSError as err:
        raise InputDataError(f"{p}: cannot read ({err.strerror})") from err
    return decode_wav(data, str(p), rate)


def encode_wav(x: np.ndarray, rate: int = SAMPLE_RATE) -> bytes:
    """16-bit mono PCM WAV bytes."""
    pcm = np.ascontiguousarray(x, dtype="<i2").tobytes()
    return (b"RIFF" + struct.pack("<I", 36 + len(pcm)) + b"WAVE"
            + b"fmt " + struct.pack("<IHHIIHH", 16, _PCM, 1, rate, rate * 2, 2, 16)
            + b"data" + struct.pack("<I", len(pcm)) + pcm)


def write_wav(path: str | Path, x: np.ndarray, rate: int = SAMPLE_RATE) -> None:
    Path(path).write_bytes(encode_wav(x, rate))


def fit_clip(x: np.ndarray, n: int = SAMPLE_RATE) -> np.ndarray:
    """Zero-pad (at the end) or centre-crop to exactly ``n`` samples."""
    if x.size >= n:
        start = (x.size - n) // 2
        return x[start:start + n]
    return np.concatenate([x, np.zeros(n - x.size, dtype=x.dtype)])
