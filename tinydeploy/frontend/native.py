"""The C audio front end on the host (via ctypes), and a numpy reference of the same math.

Training features are made by the very C code that runs on the device
(``firmware/frontend/td_frontend.c``), compiled here as a shared library against the header
rendered from a `FrontendConfig`. The numpy `reference_features` states the math
independently (float64, numpy's FFT, dense matrices) and is what the C output is tested
against; it is close to, not bit-identical with, the C output.

Libraries are cached per (header, sources, compiler flags) digest under the system temp
directory; building is atomic (compile to a temporary name, then rename), so concurrent
processes may share the cache.
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from tinydeploy.errors import InputDataError
from tinydeploy.frontend.config import (
    FeatureKind,
    FrontendConfig,
    hz_to_mel,
    render_frontend_header,
)
from tinydeploy.frontend.hostlib import compile_host_library
from tinydeploy.frontend.presets import FrontendPreset, PresetSpec, frame_count

SOURCES = ("td_frontend.c", "td_fe_float.h")   # this preset's files besides td_frontend.h
# The flags that make float arithmetic deterministic: no contraction into FMA, no fast-math,
# IEEE semantics. -O2 never reassociates float sums without -ffast-math.
DETERMINISTIC_CFLAGS = ("-std=c99", "-O2", "-ffp-contract=off", "-fno-fast-math",
                        "-Wall", "-Wextra", "-Wdouble-promotion", "-Werror")
HOST_CFLAGS = (*DETERMINISTIC_CFLAGS, "-fPIC", "-shared")


def build_host_library(cfg: Any, cc: str = "gcc", *, sources: tuple[str, ...] = SOURCES,
                       render: Any = render_frontend_header, stem: str = "frontend") -> Path:
    """Compile a front-end preset for the host as a shared library (``sources``: its files
    under firmware/frontend/, the .c ones compiled, every one hashed; ``render``: its config
    header); cached by content digest."""
    return compile_host_library(cfg, render, sources, HOST_CFLAGS, cc=cc, stem=stem,
                                library="libtd_frontend", what="audio")


def clip_batch(audio: np.ndarray, clip_samples: int) -> np.ndarray:
    """``audio`` as a C-contiguous int16 [n, clip_samples] batch (one 1-D clip becomes n = 1),
    the layout the host libraries' clip functions read; InputDataError for anything else."""
    a = np.asarray(audio)
    if a.dtype != np.int16:
        raise InputDataError(f"front end: audio must be int16 PCM, got {a.dtype}")
    if a.ndim == 1:
        a = a[None, :]
    if a.ndim != 2 or a.shape[1] != clip_samples:
        raise InputDataError(f"front end: audio shape {tuple(np.shape(audio))} is not "
                             f"[n,] {clip_samples} samples")
    return np.ascontiguousarray(a)


@dataclass(frozen=True)
class Quant:
    """The model input's quantization: q = round(x / scale) + zero_point."""

    scale: float
    zero_point: int


def input_quant_of(model_bytes: bytes) -> Quant:
    """The quantization of the model's (first) input: what the int8 features must use."""
    from tinydeploy.model.loader import load_tflite

    g = load_tflite(model_bytes)
    t = g.inputs[0]
    if t.quant is None:
        raise InputDataError("model input is not quantized")
    return Quant(float(t.quant.scale[0]),
                 int(t.quant.zero_point[0]))


class HostFrontend:
    """The C front end, loaded from the host shared library for ``cfg``."""

    def __init__(self, cfg: FrontendConfig | None = None, cc: str = "gcc") -> None:
        self.cfg = cfg or FrontendConfig()
        self.lib_path = build_host_library(self.cfg, cc)
        lib = ctypes.CDLL(str(self.lib_path))
        f32p = ctypes.POINTER(ctypes.c_float)
        i16p = ctypes.POINTER(ctypes.c_int16)
        i8p = ctypes.POINTER(ctypes.c_int8)
        lib.td_frontend_clip_f32.argtypes = [i16p, f32p, ctypes.c_void_p]
        lib.td_frontend_clip_s8.argtypes = [i16p, i8p, ctypes.c_float, ctypes.c_int32,
                                            ctypes.c_void_p]
        lib.td_frontend_quantize_s8.argtypes = [f32p, i8p, ctypes.c_uint32, ctypes.c_float,
                                                ctypes.c_int32]
        lib.td_frontend_frame_f32.argtypes = [i16p, ctypes.c_uint32, ctypes.c_uint32, f32p,
                                              ctypes.c_void_p]
        lib.td_frontend_frame_s8.argtypes = [i16p, ctypes.c_uint32, ctypes.c_uint32, i8p,
                                             ctypes.c_float, ctypes.c_int32, ctypes.c_void_p]
        lib.td_frontend_reset.argtypes = [ctypes.c_void_p]
        lib.td_frontend_logf.argtypes = [ctypes.c_float]
        lib.td_frontend_logf.restype = ctypes.c_float
        self._lib = lib
        self._scratch = ctypes.create_string_buffer(4 * (self.cfg.fft + self.cfg.mel_bands))

    def _clips(self, audio: np.ndarray) -> np.ndarray:
        return clip_batch(audio, self.cfg.clip_samples)

    def features(self, audio: np.ndarray) -> np.ndarray:
        """Float features: [n, frames, n_out] (or [frames, n_out] for one 1-D clip)."""
        clips = self._clips(audio)
        out = np.empty((clips.shape[0], *self.cfg.shape), dtype=np.float32)
        f32p = ctypes.POINTER(ctypes.c_float)
        i16p = ctypes.POINTER(ctypes.c_int16)
        for i in range(clips.shape[0]):
            row = clips[i]
            self._lib.td_frontend_clip_f32(row.ctypes.data_as(i16p),
                                           out[i].ctypes.data_as(f32p), self._scratch)
        return out[0] if np.ndim(audio) == 1 else out

    def features_s8(self, audio: np.ndarray, quant: Quant) -> np.ndarray:
        """int8 features as the device computes them, quantized to the model input."""
        clips = self._clips(audio)
        out = np.empty((clips.shape[0], *self.cfg.shape), dtype=np.int8)
        i8p = ctypes.POINTER(ctypes.c_int8)
        i16p = ctypes.POINTER(ctypes.c_int16)
        for i in range(clips.shape[0]):
            self._lib.td_frontend_clip_s8(clips[i].ctypes.data_as(i16p),
                                          out[i].ctypes.data_as(i8p),
                                          float(quant.scale), int(quant.zero_point),
                                          self._scratch)
        return out[0] if np.ndim(audio) == 1 else out

    def stream_s8(self, audio: np.ndarray, quant: Quant) -> np.ndarray:
        """int8 rows of every frame of a long stream, frame by frame in time order from a
        reset state, as the kws app computes them: [frames, n_out]."""
        return stream_frames_s8(self._lib, self._scratch, self.cfg, audio, quant)

    def stream_windows_s8(self, audio: np.ndarray, quant: Quant, infer_every: int = 1
                          ) -> tuple[np.ndarray, np.ndarray]:
        """The model input of every window the kws app runs (see `stream_windows`)."""
        return stream_windows(self._lib, self._scratch, self.cfg, audio, quant, infer_every)

    def quantize(self, feats: np.ndarray, quant: Quant) -> np.ndarray:
        """The C quantizer applied to float features (same bytes as ``features_s8``)."""
        f = np.ascontiguousarray(feats, dtype=np.float32)
        out = np.empty(f.shape, dtype=np.int8)
        self._lib.td_frontend_quantize_s8(
            f.ctypes.data_as(ctypes.POINTER(ctypes.c_float)),
            out.ctypes.data_as(ctypes.POINTER(ctypes.c_int8)), f.size,
            float(quant.scale), int(quant.zero_point))
        return out

    def logf(self, x: float) -> float:
        return float(self._lib.td_frontend_logf(x))


def _stream_of(audio: np.ndarray, cfg: Any) -> tuple[np.ndarray, int]:
    """``audio`` as one linear int16 buffer and its number of whole frames (at least one)."""
    x = np.ascontiguousarray(audio, dtype=np.int16).reshape(-1)
    if x.size < cfg.window:
        raise InputDataError(f"stream of {x.size} samples is shorter than one window "
                             f"({cfg.window})")
    return x, frame_count(x.size, cfg.window, cfg.stride)


def _frames_s8(lib: ctypes.CDLL, scratch: ctypes.Array, cfg: Any, x: np.ndarray,
               rows: np.ndarray, quant: Quant) -> Iterator[int]:
    """``td_frontend_reset``, then ``td_frontend_frame_s8`` of frame t of the stream ``x``
    into ``rows[t]`` for every frame in time order, yielding t after each."""
    i16p, i8p = ctypes.POINTER(ctypes.c_int16), ctypes.POINTER(ctypes.c_int8)
    base = x.ctypes.data_as(i16p)
    scale, zp = float(quant.scale), int(quant.zero_point)
    lib.td_frontend_reset(scratch)
    for t in range(rows.shape[0]):
        lib.td_frontend_frame_s8(base, x.size, t * cfg.stride, rows[t].ctypes.data_as(i8p),
                                 scale, zp, scratch)
        yield t


def stream_frames_s8(lib: ctypes.CDLL, scratch: ctypes.Array, cfg: Any, audio: np.ndarray,
                     quant: Quant) -> np.ndarray:
    """``td_frontend_reset`` then ``td_frontend_frame_s8`` on every frame of ``audio`` (a
    linear buffer) in time order, for a preset library loaded with ctypes."""
    x, n = _stream_of(audio, cfg)
    out = np.empty((n, cfg.n_out), dtype=np.int8)
    for _ in _frames_s8(lib, scratch, cfg, x, out, quant):
        pass
    return out


def stream_windows(lib: ctypes.CDLL, scratch: ctypes.Array, cfg: Any, audio: np.ndarray,
                   quant: Quant, infer_every: int = 1, window_hook: bool = False
                   ) -> tuple[np.ndarray, np.ndarray]:
    """The model inputs of every inference window the kws app runs on ``audio`` (from a reset
    state, a window every ``infer_every`` frames once ``cfg.frames`` exist) and the number of
    frames computed at each: ([windows, frames, n_out] int8, [windows] int64). With
    ``window_hook``, ``td_frontend_window_s8`` rewrites each window as the app does."""
    x, n = _stream_of(audio, cfg)
    rows = np.empty((n, cfg.n_out), dtype=np.int8)
    steps = list(range(cfg.frames, n + 1, infer_every))
    wins = np.empty((len(steps), cfg.frames, cfg.n_out), dtype=np.int8)
    i8p = ctypes.POINTER(ctypes.c_int8)
    scale, zp = float(quant.scale), int(quant.zero_point)
    w = 0
    for t in _frames_s8(lib, scratch, cfg, x, rows, quant):
        if w < len(steps) and t + 1 == steps[w]:
            wins[w] = rows[t + 1 - cfg.frames:t + 1]
            if window_hook:
                lib.td_frontend_window_s8(wins[w].ctypes.data_as(i8p), scale, zp, scratch)
            w += 1
    return wins, np.asarray(steps, dtype=np.int64)


# ---- numpy reference ------------------------------------------------------------------------

def mel_matrix(cfg: FrontendConfig) -> np.ndarray:
    """Dense [fft/2 + 1, mel_bands] triangular filterbank on the HTK mel scale (float64)."""
    lo, hi = hz_to_mel(cfg.mel_low_hz), hz_to_mel(cfg.mel_high_hz)
    edges = np.linspace(lo, hi, cfg.mel_bands + 2)
    freqs = np.arange(cfg.fft // 2 + 1) * cfg.sample_rate / cfg.fft
    m = hz_to_mel(freqs)[:, None]
    left, centre, right = edges[None, :-2], edges[None, 1:-1], edges[None, 2:]
    up = (m - left) / (centre - left)
    down = (right - m) / (right - centre)
    return np.maximum(0.0, np.minimum(up, down))


def reference_features(audio: np.ndarray, cfg: FrontendConfig | None = None) -> np.ndarray:
    """float64 features of one int16 clip, [frames, n_out], written from docs/frontend.md."""
    cfg = cfg or FrontendConfig()
    x = np.asarray(audio, dtype=np.float64) / 32768.0
    idx = np.arange(cfg.frames)[:, None] * cfg.stride + np.arange(cfg.window)[None, :]
    n = np.arange(cfg.window)
    hann = 0.5 - 0.5 * np.cos(2 * np.pi * n / cfg.window)
    spec = np.fft.rfft(x[idx] * hann, n=cfg.fft, axis=1)
    power = spec.real ** 2 + spec.imag ** 2
    logmel = np.log(power @ mel_matrix(cfg) + cfg.log_floor)
    if cfg.kind is FeatureKind.MFCC:
        nb = cfg.mel_bands
        i = np.arange(cfg.n_mfcc)[:, None]
        j = np.arange(nb)[None, :]
        dct = np.sqrt(2.0 / nb) * np.cos(np.pi * i * (j + 0.5) / nb)
        dct[0] /= np.sqrt(2.0)
        out = logmel @ dct.T
    else:
        out = logmel
    if cfg.mean:
        out = (out - np.asarray(cfg.mean)) / np.asarray(cfg.std)
    return out


def reference_quantize(x: np.ndarray, quant: Quant) -> np.ndarray:
    """round half away from zero, then clamp to int8 (TFLite's input quantization)."""
    v = np.asarray(x, dtype=np.float64) / quant.scale
    r = np.sign(v) * np.floor(np.abs(v) + 0.5) + quant.zero_point
    return np.clip(r, -128, 127).astype(np.int8)





# ---- the preset --------------------------------------------------------------------------------

def quantized_reference(features: Callable[[np.ndarray, Any], np.ndarray]
                        ) -> Callable[[np.ndarray, Any, Quant], np.ndarray]:
    """A float preset's int8 reference: its float reference ``features(audio, cfg)`` of one
    clip, quantized as TFLite quantizes the model input (`reference_quantize`)."""
    def reference(audio: np.ndarray, cfg: Any, quant: Quant) -> np.ndarray:
        return reference_quantize(features(audio, cfg), quant)
    return reference


PRESET_SPEC = PresetSpec(
    preset=FrontendPreset.TINYDEPLOY,
    summary="the project's own float32 MFCC / log-mel front end (docs/frontend.md)",
    sources=SOURCES,
    config=FrontendConfig,
    host=HostFrontend,
    reference=quantized_reference(reference_features),
    render_header=render_frontend_header,
    scratch_bytes=lambda cfg: 4 * (cfg.fft + cfg.mel_bands),
    float_features=lambda cfg, clips: HostFrontend(cfg).features(clips),
)
