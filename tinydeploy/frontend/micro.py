"""The ``micro-speech`` front end on the host: the C code via ctypes, an independent numpy
reference of the same integer math, and TensorFlow's ``audio_microfrontend`` op (the oracle).

All three take int16 PCM and give uint16 features [frames, channels] (and int8 through
TFLM's fixed mapping). They process a stream: frame ``k`` covers samples
``[k * stride, k * stride + window)`` and the noise estimate (which PCAN also reads) is
carried from each frame to the next, so a long recording is one call, not a loop over
clips. The reference is written from the op's documented arithmetic (fixed-point radix-4
FFT with Q15 twiddles and a /4 per stage, integer square root with rounding, Q14 noise
smoothing, the piecewise-quadratic PCAN gain, the integer log2 with a 129-segment
correction table); wrap-around of 16-bit intermediates is reproduced where the C has it.
"""

from __future__ import annotations

import ctypes
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from tinydeploy.errors import InputDataError
from tinydeploy.frontend.header import write_header
from tinydeploy.frontend.hostlib import compile_host_library
from tinydeploy.frontend.micro_config import (
    INT8_DIV,
    INT8_SCALE,
    LOG_COEFF,
    LOG_SCALE_LOG2,
    LOG_SEGMENTS_LOG2,
    NOISE_BITS,
    PCAN_SNR_BITS,
    WINDOW_BITS,
    MicroSpeechConfig,
    MicroSpeechTables,
    compute_tables,
    render_microspeech_header,
)
from tinydeploy.frontend.presets import FrontendPreset, PresetSpec, frame_count

SOURCES = ("td_frontend_micro.c",)
CFLAGS = ("-std=c99", "-O2", "-Wall", "-Wextra", "-Werror")
HOST_CFLAGS = (*CFLAGS, "-fPIC", "-shared")


def to_int8(features: np.ndarray) -> np.ndarray:
    """TFLM micro_speech's int8 input: clamp((v * 256 + 333) // 666 - 128, -128, 127)."""
    v = np.asarray(features, dtype=np.int64)
    q = (v * INT8_SCALE + INT8_DIV // 2) // INT8_DIV - 128
    return np.clip(q, -128, 127).astype(np.int8)


def _pcm(audio: np.ndarray) -> np.ndarray:
    a = np.asarray(audio)
    if a.dtype != np.int16 or a.ndim != 1:
        raise InputDataError(f"micro-speech front end: audio must be 1-D int16 PCM, got "
                             f"{a.dtype} {a.shape}")
    return np.ascontiguousarray(a)


def n_frames(n_samples: int, cfg: MicroSpeechConfig) -> int:
    return frame_count(n_samples, cfg.window, cfg.stride)


# ---- TensorFlow's op (the oracle) ----------------------------------------------------------

def tf_features(audio: np.ndarray, cfg: MicroSpeechConfig | None = None) -> np.ndarray:
    """uint16 [frames, channels] from TensorFlow's ``audio_microfrontend`` (imported lazily)."""
    cfg = cfg or MicroSpeechConfig()
    pcm = _pcm(audio)
    from tinydeploy.tfenv import quiet_tensorflow

    quiet_tensorflow()
    import tensorflow as tf
    from tensorflow.lite.experimental.microfrontend.python.ops import (
        audio_microfrontend_op as op,
    )

    out = op.audio_microfrontend(tf.constant(pcm), **cfg.op_kwargs(), out_type=tf.uint16)
    return np.asarray(out.numpy(), dtype=np.uint16).reshape(-1, cfg.channels)


# ---- numpy reference -------------------------------------------------------------------------

def _s16(x: np.ndarray) -> np.ndarray:
    """Store into int16: two's-complement wrap-around (what the C conversion does)."""
    return ((x + 0x8000) & 0xFFFF) - 0x8000


def _sround(x: np.ndarray) -> np.ndarray:
    return _s16((x + (1 << 14)) >> 15)


def _fixdiv(x: np.ndarray, k: int) -> np.ndarray:
    return _sround(x * (32767 // k))


def _cmul(ar, ai, br, bi):  # noqa: ANN001, ANN202
    return _sround(ar * br - ai * bi), _sround(ar * bi + ai * br)


@lru_cache(maxsize=8)
def fft_plan(n: int) -> tuple[np.ndarray, tuple[tuple[int, int], ...]]:
    """Input permutation and (radix, m) stages, innermost first, of the decimation-in-time
    FFT of ``n`` (a power of two) points: radix 4 while 4 divides, then one radix 2."""
    factors = []
    rest = n
    while rest > 1:
        p = 4 if rest % 4 == 0 else 2
        rest //= p
        factors.append((p, rest))
    perm = np.zeros(n, dtype=np.int64)

    def walk(out: int, src: int, stride: int, level: int) -> None:
        p, m = factors[level]
        if m == 1:
            for j in range(p):
                perm[out + j] = src + j * stride
            return
        for k in range(p):
            walk(out + k * m, src + k * stride, stride * p, level + 1)

    walk(0, 0, 1, 0)
    return perm, tuple(reversed(factors))


def _complex_fft(re: np.ndarray, im: np.ndarray, tw: np.ndarray) -> tuple[np.ndarray,
                                                                           np.ndarray]:
    n = re.size
    perm, stages = fft_plan(n)
    fr, fi = re[perm].copy(), im[perm].copy()
    twr, twi = tw[:, 0].astype(np.int64), tw[:, 1].astype(np.int64)
    for p, m in stages:
        fstride = n // (p * m)
        k = np.arange(m)
        base = (np.arange(n // (p * m)) * p * m)[:, None] + k[None, :]
        if p == 2:
            i0, i1 = base, base + m
            f0r, f0i = _fixdiv(fr[i0], 2), _fixdiv(fi[i0], 2)
            tr, ti = _cmul(_fixdiv(fr[i1], 2), _fixdiv(fi[i1], 2), twr[k * fstride],
                           twi[k * fstride])
            fr[i1], fi[i1] = _s16(f0r - tr), _s16(f0i - ti)
            fr[i0], fi[i0] = _s16(f0r + tr), _s16(f0i + ti)
            continue
        i0, i1, i2, i3 = base, base + m, base + 2 * m, base + 3 * m
        a = [(_fixdiv(fr[i], 4), _fixdiv(fi[i], 4)) for i in (i0, i1, i2, i3)]
        s0 = _cmul(*a[1], twr[k * fstride], twi[k * fstride])
        s1 = _cmul(*a[2], twr[2 * k * fstride], twi[2 * k * fstride])
        s2 = _cmul(*a[3], twr[3 * k * fstride], twi[3 * k * fstride])
        f0r, f0i = a[0]
        s5r, s5i = _s16(f0r - s1[0]), _s16(f0i - s1[1])
        f0r, f0i = _s16(f0r + s1[0]), _s16(f0i + s1[1])
        s3r, s3i = _s16(s0[0] + s2[0]), _s16(s0[1] + s2[1])
        s4r, s4i = _s16(s0[0] - s2[0]), _s16(s0[1] - s2[1])
        fr[i2], fi[i2] = _s16(f0r - s3r), _s16(f0i - s3i)
        fr[i0], fi[i0] = _s16(f0r + s3r), _s16(f0i + s3i)
        fr[i1], fi[i1] = _s16(s5r + s4i), _s16(s5i - s4r)
        fr[i3], fi[i3] = _s16(s5r - s4i), _s16(s5i + s4r)
    return fr, fi


def _real_fft(x: np.ndarray, t: MicroSpeechTables) -> tuple[np.ndarray, np.ndarray]:
    """Spectrum bins 0..n/2 of the real int16 frame ``x`` (n points) as int64 arrays."""
    ncfft = x.size // 2
    zr, zi = _complex_fft(x[0::2].astype(np.int64), x[1::2].astype(np.int64), t.twiddles)
    out_r = np.zeros(ncfft + 1, dtype=np.int64)
    out_i = np.zeros(ncfft + 1, dtype=np.int64)
    dr, di = _fixdiv(zr[0], 2), _fixdiv(zi[0], 2)
    out_r[0], out_r[ncfft] = _s16(dr + di), _s16(dr - di)
    k = np.arange(1, ncfft // 2 + 1)
    pr, pi = _fixdiv(zr[k], 2), _fixdiv(zi[k], 2)
    nr, ni = _fixdiv(zr[ncfft - k], 2), _fixdiv(_s16(-zi[ncfft - k]), 2)
    f1r, f1i = _s16(pr + nr), _s16(pi + ni)
    f2r, f2i = _s16(pr - nr), _s16(pi - ni)
    sup = t.super_twiddles.astype(np.int64)
    twr, twi = _cmul(f2r, f2i, sup[k - 1, 0], sup[k - 1, 1])
    out_r[k], out_i[k] = _s16((f1r + twr) >> 1), _s16((f1i + twi) >> 1)
    # bin ncfft - k is written after bin k: for k = ncfft / 2 this second value stands
    out_r[ncfft - k], out_i[ncfft - k] = _s16((f1r - twr) >> 1), _s16((twi - f1i) >> 1)
    return out_r, out_i


def _msb(x: int) -> int:
    return x.bit_length()


def _isqrt(num: int, bits: int) -> int:
    """The microfrontend's rounding integer square root of a ``bits``-wide unsigned value
    (its Sqrt32 / Sqrt64: bit by bit from the top, rounded up unless that would overflow
    ``bits / 2`` bits); a 64-bit value whose high word is 0 takes the 32-bit path, as the C
    does."""
    if num == 0:
        return 0
    if bits == 64 and num >> 32 == 0:
        return _isqrt(num, 32)
    top_value = (1 << (bits // 2)) - 1
    res = 0
    top = (bits - _msb(num)) | 1
    bit = 1 << (bits - 1 - top)
    for _ in range((bits - 1 - top) // 2 + 1):
        if num >= res + bit:
            num -= res + bit
            res = (res >> 1) + bit
        else:
            res >>= 1
        bit >>= 2
    if num > res and res != top_value:
        res += 1
    return res & top_value


def _sqrt32(num: int) -> int:
    return _isqrt(num, 32)


def _sqrt64(num: int) -> int:
    return _isqrt(num, 64)


def _wdf(x: int, lut: np.ndarray) -> int:
    """The PCAN gain of noise estimate ``x``: a quadratic per power-of-two interval."""
    if x <= 2:
        return int(lut[x])
    interval = _msb(x)
    base = 4 * interval - 6
    frac = ((x << (11 - interval)) if interval < 11 else (x >> (interval - 11))) & 0x3FF
    r = (int(lut[base + 2]) * frac) >> 5
    r += int(lut[base + 1]) * 32
    r *= frac
    r = (r + (1 << 14)) >> 15
    r += int(lut[base])
    return ((r + 0x8000) & 0xFFFF) - 0x8000


def _log(x: int, scale_shift: int, log_lut: np.ndarray) -> int:
    integer = _msb(x) - 1
    frac = x - (1 << integer)
    if integer < LOG_SCALE_LOG2:
        frac <<= LOG_SCALE_LOG2 - integer
    else:
        frac >>= integer - LOG_SCALE_LOG2
    seg = frac >> (LOG_SCALE_LOG2 - LOG_SEGMENTS_LOG2)
    unit = (1 << LOG_SCALE_LOG2) >> LOG_SEGMENTS_LOG2
    c0, c1 = int(log_lut[seg]), int(log_lut[seg + 1])
    rel = ((c1 - c0) * (frac - unit * seg)) >> LOG_SCALE_LOG2
    fraction = (frac + c0 + rel) & 0xFFFFFFFF
    log2 = ((integer << LOG_SCALE_LOG2) + fraction) & 0xFFFFFFFF
    half = 1 << (LOG_SCALE_LOG2 - 1)
    loge = ((LOG_COEFF * log2 + half) >> LOG_SCALE_LOG2) & 0xFFFFFFFF
    return ((((loge << scale_shift) & 0xFFFFFFFF) + half) & 0xFFFFFFFF) >> LOG_SCALE_LOG2


class ReferenceState:
    """The state a stream carries from frame to frame: the noise estimate per channel."""

    def __init__(self, cfg: MicroSpeechConfig) -> None:
        self.noise = [0] * cfg.channels


def reference_frame(frame: np.ndarray, cfg: MicroSpeechConfig, t: MicroSpeechTables,
                    state: ReferenceState) -> np.ndarray:
    """uint16 features of one window of int16 samples; updates ``state``."""
    x = (frame.astype(np.int64) * t.window.astype(np.int64)) >> WINDOW_BITS
    x = _s16(x)                                    # the product of -32768 and 4096 wraps
    a = np.abs(x)
    a[a == 0x8000] = 0                             # |-32768| does not fit int16 either
    shift = 15 - _msb(int(a.max()))
    buf = np.zeros(cfg.fft, dtype=np.int64)
    buf[:cfg.window] = _s16((x & 0xFFFF) << shift)
    re, im = _real_fft(buf, t)
    b = np.arange(t.bin_start, t.bin_end)
    energy = ((re[b] * re[b] + im[b] * im[b]) & 0xFFFFFFFF)
    energy = np.where(energy >= 1 << 31, energy - (1 << 32), energy)   # int32 ...
    e64 = [int(e) & 0xFFFFFFFFFFFFFFFF for e in energy]               # ... to uint64
    acc = [0] * cfg.channels
    mask64 = 0xFFFFFFFFFFFFFFFF
    for e, c, w, u in zip(e64, t.bin_channel, t.bin_weight, t.bin_unweight, strict=True):
        c = int(c)
        if c >= 1:
            acc[c - 1] = (acc[c - 1] + (int(w) & mask64) * e) & mask64
        if c < cfg.channels:
            acc[c] = (acc[c] + (int(u) & mask64) * e) & mask64
    m32 = 0xFFFFFFFF
    sig = [_sqrt64(v) >> shift for v in acc]
    out = np.zeros(cfg.channels, dtype=np.uint16)
    for i in range(cfg.channels):
        smooth = t.even_smoothing if i % 2 == 0 else t.odd_smoothing
        up = (sig[i] << cfg.smoothing_bits) & m32
        est = ((up * smooth + state.noise[i] * ((1 << NOISE_BITS) - smooth))
               >> NOISE_BITS) & m32
        state.noise[i] = est
        est = min(est, up)
        floor = ((sig[i] * t.min_signal_remaining) >> NOISE_BITS) & m32
        v = max((up - est) >> cfg.smoothing_bits, floor)
        if cfg.pcan:
            gain = _wdf(state.noise[i], t.gain_lut) & m32
            snr = ((v * gain) >> cfg.snr_shift) & m32
            if snr < (2 << PCAN_SNR_BITS):
                v = ((snr * snr) & m32) >> (2 + 2 * PCAN_SNR_BITS - 6)
            else:
                v = ((snr >> (PCAN_SNR_BITS - 6)) - (1 << 6)) & m32
        if cfg.log:
            cb = cfg.correction_bits
            v = (v >> -cb) if cb < 0 else ((v << cb) & m32)
            v = _log(v, cfg.scale_shift, t.log_lut) if v > 1 else 0
        out[i] = min(v, 0xFFFF)
    return out


def reference_features(audio: np.ndarray, cfg: MicroSpeechConfig | None = None) -> np.ndarray:
    """uint16 [frames, channels] of a stream of int16 samples, written from the op's math."""
    cfg = cfg or MicroSpeechConfig()
    pcm = _pcm(audio)
    t = compute_tables(cfg)
    state = ReferenceState(cfg)
    n = n_frames(pcm.size, cfg)
    out = np.zeros((n, cfg.channels), dtype=np.uint16)
    for k in range(n):
        out[k] = reference_frame(pcm[k * cfg.stride:k * cfg.stride + cfg.window], cfg, t,
                                 state)
    return out


# ---- the C front end on the host ---------------------------------------------------------------

def write_microspeech_header(cfg: MicroSpeechConfig, directory: Path,
                             name: str = "td_frontend_config.h") -> Path:
    return write_header(render_microspeech_header(cfg), directory, name)


def build_host_library(cfg: MicroSpeechConfig, cc: str = "gcc") -> Path:
    """Compile td_frontend_micro.c for the host as a shared library, cached by digest."""
    return compile_host_library(cfg, render_microspeech_header, SOURCES, HOST_CFLAGS, cc=cc,
                                stem="frontend-micro", library="libtd_frontend_micro",
                                what="micro-speech")


class HostMicroFrontend:
    """td_frontend_micro.c loaded from the host shared library for ``cfg``.

    ``stream_*`` process one stream (any length) frame by frame in time order, as the kws
    app does; ``features*`` process whole clips [n, clip_samples], each from a reset state
    (the training / scoring path). ``quant`` arguments are accepted for the preset API and
    ignored: the int8 mapping is TFLM's fixed one (`to_int8`)."""

    def __init__(self, cfg: MicroSpeechConfig | None = None, cc: str = "gcc") -> None:
        self.cfg = cfg or MicroSpeechConfig()
        self.lib_path = build_host_library(self.cfg, cc)
        lib = ctypes.CDLL(str(self.lib_path))
        i16p = ctypes.POINTER(ctypes.c_int16)
        lib.td_frontend_frame_u16.argtypes = [i16p, ctypes.c_uint32, ctypes.c_uint32,
                                              ctypes.POINTER(ctypes.c_uint16),
                                              ctypes.c_void_p]
        lib.td_frontend_frame_s8.argtypes = [i16p, ctypes.c_uint32, ctypes.c_uint32,
                                             ctypes.POINTER(ctypes.c_int8), ctypes.c_float,
                                             ctypes.c_int32, ctypes.c_void_p]
        lib.td_frontend_clip_s8.argtypes = [i16p, ctypes.POINTER(ctypes.c_int8),
                                            ctypes.c_float, ctypes.c_int32, ctypes.c_void_p]
        lib.td_frontend_reset.argtypes = [ctypes.c_void_p]
        lib.td_frontend_scratch_size.restype = ctypes.c_uint32
        self._lib = lib
        self.scratch_bytes = int(lib.td_frontend_scratch_size())
        self._scratch = ctypes.create_string_buffer(self.scratch_bytes)

    def reset(self) -> None:
        self._lib.td_frontend_reset(self._scratch)

    def _stream(self, audio: np.ndarray, dtype: type, reset: bool) -> np.ndarray:
        pcm = _pcm(audio)
        if reset:
            self.reset()
        cfg = self.cfg
        n = n_frames(pcm.size, cfg)
        out: np.ndarray = np.zeros((n, cfg.channels), dtype=dtype)
        ptr = pcm.ctypes.data_as(ctypes.POINTER(ctypes.c_int16))
        for k in range(n):
            if dtype is np.uint16:
                self._lib.td_frontend_frame_u16(
                    ptr, pcm.size, k * cfg.stride,
                    out[k].ctypes.data_as(ctypes.POINTER(ctypes.c_uint16)), self._scratch)
            else:
                self._lib.td_frontend_frame_s8(
                    ptr, pcm.size, k * cfg.stride,
                    out[k].ctypes.data_as(ctypes.POINTER(ctypes.c_int8)), 0.0, 0,
                    self._scratch)
        return out

    def stream_u16(self, audio: np.ndarray, *, reset: bool = True) -> np.ndarray:
        """uint16 [frames, channels] of a stream; ``reset=False`` continues the last one."""
        return self._stream(audio, np.uint16, reset)

    def stream_s8(self, audio: np.ndarray, quant: Any = None, *,
                  reset: bool = True) -> np.ndarray:
        """int8 [frames, channels] of a stream: the model input rows the device computes."""
        return self._stream(audio, np.int8, reset)

    def _clips(self, audio: np.ndarray) -> np.ndarray:
        a = np.asarray(audio)
        if a.dtype != np.int16:
            raise InputDataError(f"micro-speech front end: audio must be int16 PCM, got "
                                 f"{a.dtype}")
        a = a[None, :] if a.ndim == 1 else a
        if a.ndim != 2 or a.shape[1] != self.cfg.clip_samples:
            raise InputDataError(f"micro-speech front end: audio shape {np.shape(audio)} is "
                                 f"not [n,] {self.cfg.clip_samples} samples")
        return np.ascontiguousarray(a)

    def features(self, audio: np.ndarray) -> np.ndarray:
        """uint16 features of whole clips: [n, frames, channels] ([frames, channels] for one
        1-D clip), each clip from a reset state."""
        clips = self._clips(audio)
        out = np.stack([self.stream_u16(c) for c in clips])
        return out[0] if np.ndim(audio) == 1 else out

    def features_s8(self, audio: np.ndarray, quant: Any = None) -> np.ndarray:
        """int8 features of whole clips (``td_frontend_clip_s8``), shaped as `features`."""
        clips = self._clips(audio)
        cfg = self.cfg
        out = np.empty((clips.shape[0], cfg.frames, cfg.channels), dtype=np.int8)
        for i in range(clips.shape[0]):
            self._lib.td_frontend_clip_s8(clips[i].ctypes.data_as(ctypes.POINTER(ctypes.c_int16)),
                                          out[i].ctypes.data_as(ctypes.POINTER(ctypes.c_int8)),
                                          0.0, 0, self._scratch)
        return out[0] if np.ndim(audio) == 1 else out


# ---- the preset ---------------------------------------------------------------------------------

def scratch_bytes(cfg: MicroSpeechConfig) -> int:
    """sizeof(td_frontend_scratch_t): uint32 noise[ch], uint64 acc[ch], int16 in[fft],
    int16 tmp[fft] (8-byte alignment of the uint64s and of the whole struct)."""
    def up8(n: int) -> int:
        return (n + 7) // 8 * 8
    return up8(up8(4 * cfg.channels) + 8 * cfg.channels + 2 * cfg.fft + 2 * cfg.fft)


def _reference_s8(audio: np.ndarray, cfg: MicroSpeechConfig, quant: Any = None) -> np.ndarray:
    """The reference pipeline of one clip: TensorFlow's op, then TFLM's int8 mapping (the
    numpy `reference_features` computes the same bytes, ~100x slower)."""
    return to_int8(tf_features(audio, cfg))


def float_features(cfg: MicroSpeechConfig, clips: np.ndarray) -> np.ndarray:
    """The float input of a model trained on these features, as TFLM's micro_speech training
    makes it: the uint16 values times 10 / 256 (roughly 0 to 26)."""
    return HostMicroFrontend(cfg).features(clips).astype(np.float32) * np.float32(10.0 / 256.0)


PRESET_SPEC = PresetSpec(
    preset=FrontendPreset.MICRO_SPEECH,
    summary="TensorFlow's audio microfrontend as TFLM's micro_speech uses it, integer only "
            "(docs/frontend.md)",
    sources=SOURCES,
    config=MicroSpeechConfig,
    host=HostMicroFrontend,
    reference=_reference_s8,
    render_header=render_microspeech_header,
    scratch_bytes=scratch_bytes,
    float_features=float_features,
)
