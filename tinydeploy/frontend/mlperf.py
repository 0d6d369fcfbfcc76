"""The ``mlperf-kws`` front-end preset: MLPerf Tiny's keyword-spotting MFCCs.

What MLPerf Tiny's training code computes (``benchmark/training/keyword_spotting/
get_dataset.py`` in mlcommons/tiny, feature_type "mfcc", read at commit 1afd2c98), step by step:

1. ``x = float32(pcm) / reduce_max(x)``: peak normalisation by the clip's largest *signed*
   sample (not max |x|); the clip is then zero-padded to 16,000 samples;
2. ``tf.signal.stft(frame_length=480, frame_step=320, fft_length=None)``: 30 ms periodic Hann
   window, 20 ms stride, FFT length the next power of two (512), no end padding: 49 frames;
3. ``tf.abs``: the magnitude (not the power) of the 257 bins;
4. ``tf.signal.linear_to_mel_weight_matrix(40, 257, 16000, 20, 4000)``: 40 triangular bands on
   the HTK mel scale, 1127 ln(1 + f / 700), over the bins' linear frequencies k * 8000 / 256,
   bin 0 zeroed; each bin feeds at most two adjacent bands;
5. ``log(mel + 1e-6)``;
6. ``tf.signal.mfccs_from_log_mel_spectrograms(...)[..., :10]``: DCT-II scaled by
   1 / sqrt(2 * 40), i.e. ``sqrt(2 / 40) * sum_n x_n cos(pi k (2n + 1) / 80)`` for every k
   (coefficient 0 is not divided by sqrt 2, unlike an orthonormal DCT).

The tables here are computed in float64 and rounded once to float32 (the mel weights agree
with TensorFlow's float32 matrix within 6e-6); ``td_frontend_mlperf.c`` does the arithmetic in
IEEE single precision and the reference (`tf_reference_features`) is the same TensorFlow ops.

Peak normalisation on a stream (the device): a clip-at-once call (``td_frontend_clip_s8``)
divides by the clip's own peak, exactly as MLPerf does. A stream has no clip: each frame is
divided by the largest sample of the frames seen in the last 49 frame spans (the model's 1 s
window ending at that frame), kept as one peak per frame in the scratch state. MFCC
coefficients 1..9 do not depend on the gain (the DCT rows sum to zero; only the log floor
breaks this, on near-digital silence); coefficient 0 shifts by sqrt(80) ln(gain), so rows
computed before a louder sound arrived carry a larger coefficient 0 than the clip-at-once
features. When the largest sample is 0 (digital silence, or only negative samples and zeros)
TensorFlow divides by zero (NaN / inf); here the divisor is then 1 and the features are the
log floor's. A negative largest sample divides by that negative value, as TF does (the
magnitude only sees its absolute value).
"""

from __future__ import annotations

import ctypes
import json
import math
from dataclasses import asdict, dataclass
from typing import Any, ClassVar

import numpy as np

from tinydeploy.errors import InputDataError
from tinydeploy.frontend.config import (
    FloatPresetConfig,
    dct_columns,
    float_preset_macros,
    float_preset_plan,
    float_preset_tables,
)
from tinydeploy.frontend.header import c_array, hexf, render_config_header
from tinydeploy.frontend.native import (
    Quant,
    build_host_library,
    clip_batch,
    quantized_reference,
    stream_frames_s8,
    stream_windows,
)
from tinydeploy.frontend.presets import PRESET_KEY, FrontendPreset, PresetSpec

SOURCES = ("td_frontend_mlperf.c", "td_fe_float.h")


@dataclass(frozen=True)
class MlperfConfig(FloatPresetConfig):
    """MLPerf Tiny KWS feature parameters; the defaults are MLPerf's (49 x 10 MFCC)."""

    ERROR_PREFIX: ClassVar[str] = "mlperf-kws front end"
    ERROR_HINT: ClassVar[str] = "see docs/frontend.md (presets)"

    window: int = 480             # 30 ms
    fft: int = 512                # TF: the next power of two >= window
    n_mfcc: int = 10
    log_floor: float = 1e-6
    peak_normalise: bool = True   # divide by the clip's largest sample (else by 32768)

    def __post_init__(self) -> None:
        super().__post_init__()
        if not 0 <= self.mel_low_hz < self.mel_high_hz <= self.sample_rate / 2:
            raise self.error(f"mel range {self.mel_low_hz}..{self.mel_high_hz} Hz must lie in "
                             f"[0, {self.sample_rate / 2}]")
        if not 1 <= self.n_mfcc <= self.mel_bands:
            raise self.error(f"n_mfcc={self.n_mfcc} must be in [1, mel_bands={self.mel_bands}]")
        if not self.log_floor > 0:
            raise self.error(f"log_floor={self.log_floor} must be > 0")

    @property
    def n_out(self) -> int:
        return self.n_mfcc

    def to_json(self) -> str:
        return json.dumps({PRESET_KEY: FrontendPreset.MLPERF_KWS.value, **asdict(self)},
                          indent=2) + "\n"

    @classmethod
    def from_dict(cls, d: dict[str, Any], source: str = "<string>") -> MlperfConfig:
        known = set(cls.__dataclass_fields__)
        extra = sorted(set(d) - known)
        if extra:
            raise InputDataError(f"{source}: unknown mlperf-kws parameter(s) {', '.join(extra)}",
                                 hint="parameters: " + ", ".join(sorted(known)))
        try:
            return cls(**d)
        except TypeError as err:
            raise InputDataError(f"{source}: not an mlperf-kws config ({err})") from err


# ---- tables ------------------------------------------------------------------------------------

def mel_weight_matrix(cfg: MlperfConfig) -> np.ndarray:
    """[fft/2 + 1, mel_bands] float64, the math of TF's linear_to_mel_weight_matrix: bin
    frequencies linspace(0, nyquist, bins), bin 0 zeroed, HTK mel, triangles between
    equally spaced mel edges."""
    bins = cfg.fft // 2 + 1

    def mel(f: np.ndarray | float) -> np.ndarray:
        return 1127.0 * np.log1p(np.asarray(f, dtype=np.float64) / 700.0)

    freqs = np.linspace(0.0, cfg.sample_rate / 2, bins)[1:]
    m = mel(freqs)[:, None]
    edges = np.linspace(mel(cfg.mel_low_hz), mel(cfg.mel_high_hz), cfg.mel_bands + 2)
    lo, centre, hi = edges[None, :-2], edges[None, 1:-1], edges[None, 2:]
    w = np.maximum(0.0, np.minimum((m - lo) / (centre - lo), (hi - m) / (hi - centre)))
    return np.vstack([np.zeros((1, cfg.mel_bands)), w])


def dct_matrix(cfg: MlperfConfig) -> np.ndarray:
    """[n_mfcc, mel_bands] float64: TF's mfccs_from_log_mel_spectrograms (DCT-II / sqrt(2N))."""
    n = cfg.mel_bands
    k = np.arange(cfg.n_mfcc, dtype=np.float64)[:, None]
    j = np.arange(n, dtype=np.float64)[None, :]
    return np.sqrt(2.0 / n) * np.cos(np.pi * k * (2.0 * j + 1.0) / (2.0 * n))


@dataclass(frozen=True)
class MlperfTables:
    window: np.ndarray        # [window] float32 periodic Hann (unscaled)
    bin_first: int
    bin_last: int
    bin_band: np.ndarray      # [bins] int: band of w_lower (-1: none)
    w_lower: np.ndarray       # [bins] float32 into band bin_band[k]
    w_upper: np.ndarray       # [bins] float32 into band bin_band[k] + 1
    dct: np.ndarray           # [n_mfcc, mel_bands] float32


def compute_tables(cfg: MlperfConfig) -> MlperfTables:
    n = np.arange(cfg.window, dtype=np.float64)
    hann = 0.5 - 0.5 * np.cos(2.0 * np.pi * n / cfg.window)
    w = mel_weight_matrix(cfg).astype(np.float32)
    first, last = cfg.bin_range(np.nonzero(w.max(axis=1) > 0)[0])
    bands, wl, wu = [], [], []
    for b in range(first, last + 1):
        nz = np.nonzero(w[b])[0]
        if nz.size > 2 or (nz.size == 2 and nz[1] != nz[0] + 1):
            raise InputDataError(f"mlperf-kws front end: FFT bin {b} feeds bands "
                                 f"{list(nz)}, not at most two adjacent ones")
        if nz.size == 0:
            bands.append(-1)
            wl.append(0.0)
            wu.append(0.0)
        elif nz.size == 2:
            bands.append(int(nz[0]))
            wl.append(float(w[b, nz[0]]))
            wu.append(float(w[b, nz[1]]))
        else:
            # one band: it is the "upper" band of the pair (j, j+1) with j = band - 1
            j = int(nz[0])
            bands.append(j - 1)
            wl.append(0.0)
            wu.append(float(w[b, j]))
    return MlperfTables(
        window=hann.astype(np.float32),
        bin_first=first, bin_last=last, bin_band=np.asarray(bands, dtype=np.int32),
        w_lower=np.asarray(wl, dtype=np.float32), w_upper=np.asarray(wu, dtype=np.float32),
        dct=dct_matrix(cfg).astype(np.float32))


def render_header(cfg: MlperfConfig) -> str:
    """The preset's config header (``td_frontend_config_model.h`` in a build)."""
    t = compute_tables(cfg)
    plan = float_preset_plan(cfg, t, magnitude=True)
    peaks = cfg.frames          # one stored peak per frame of the model window
    body = [
        "#define TD_FE_PRESET_MLPERF_KWS 1",
        *float_preset_macros(cfg, plan),
        f"#define TD_FE_LOG_FLOOR {hexf(cfg.log_floor)}",
        f"#define TD_FE_PEAK_NORMALISE {1 if cfg.peak_normalise else 0}",
        f"#define TD_FE_PEAKS {peaks}",
        "#define TD_FE_HAS_WINDOW_S8 1",
        f"#define TD_FE_C0_GAIN {hexf(math.sqrt(2.0 * cfg.mel_bands))}",
        f"#define TD_FE_C0_SILENCE {hexf(c0_silence(cfg))}",
        "",
        "/* Working memory of one frame, and the stream state of the last TD_FE_PEAKS frames",
        " * (rings indexed by frame number): each frame's largest sample, the divisor it used,",
        " * its coefficient 0 before quantization. */",
        "typedef struct {",
        "    float fft[TD_FE_FFT]; /* TD_FE_FFT / 2 complex values, interleaved re, im */",
        "    float mel[TD_FE_MEL_BANDS];",
        "    float c0[TD_FE_PEAKS];",
        "    float div[TD_FE_PEAKS];",
        "    int16_t peak[TD_FE_PEAKS];",
        "    uint32_t frames; /* frames computed since the reset */",
        "} td_frontend_scratch_t;",
    ]
    tables = [*float_preset_tables(plan),
              *c_array("float", "td_fe_dct_half", dct_columns(t.dct))]
    return render_config_header(cfg, body, tables, what="mlperf-kws front-end config")


def c0_silence(cfg: MlperfConfig) -> float:
    """Coefficient 0 of digital silence (every band at the log floor): sqrt(2B) ln(floor)."""
    return math.sqrt(2.0 * cfg.mel_bands) * math.log(float(np.float32(cfg.log_floor)))


def scratch_bytes(cfg: MlperfConfig) -> int:
    return 4 * (cfg.fft + cfg.mel_bands + 2 * cfg.frames) + 2 * cfg.frames \
        + (cfg.frames & 1) * 2 + 4


# ---- the C code on the host --------------------------------------------------------------

class MlperfHost:
    """``td_frontend_mlperf.c`` compiled for the host and loaded with ctypes."""

    def __init__(self, cfg: MlperfConfig | None = None, cc: str = "gcc") -> None:
        self.cfg = cfg or MlperfConfig()
        self.lib_path = build_host_library(self.cfg, cc, sources=SOURCES, render=render_header,
                                           stem="frontend-mlperf")
        lib = ctypes.CDLL(str(self.lib_path))
        f32p, i16p = ctypes.POINTER(ctypes.c_float), ctypes.POINTER(ctypes.c_int16)
        i8p = ctypes.POINTER(ctypes.c_int8)
        lib.td_frontend_clip_f32.argtypes = [i16p, f32p, ctypes.c_void_p]
        lib.td_frontend_clip_s8.argtypes = [i16p, i8p, ctypes.c_float, ctypes.c_int32,
                                            ctypes.c_void_p]
        lib.td_frontend_frame_s8.argtypes = [i16p, ctypes.c_uint32, ctypes.c_uint32, i8p,
                                             ctypes.c_float, ctypes.c_int32, ctypes.c_void_p]
        lib.td_frontend_reset.argtypes = [ctypes.c_void_p]
        lib.td_frontend_window_s8.argtypes = [i8p, ctypes.c_float, ctypes.c_int32,
                                              ctypes.c_void_p]
        self._lib = lib
        self._scratch = ctypes.create_string_buffer(scratch_bytes(self.cfg) + 64)

    def _clips(self, audio: np.ndarray) -> np.ndarray:
        return clip_batch(audio, self.cfg.clip_samples)

    def features(self, audio: np.ndarray) -> np.ndarray:
        """Float MFCCs [n, frames, n_mfcc] (or [frames, n_mfcc] for one 1-D clip)."""
        clips = self._clips(audio)
        out = np.empty((clips.shape[0], *self.cfg.shape), dtype=np.float32)
        f32p, i16p = ctypes.POINTER(ctypes.c_float), ctypes.POINTER(ctypes.c_int16)
        for i in range(clips.shape[0]):
            self._lib.td_frontend_clip_f32(clips[i].ctypes.data_as(i16p),
                                           out[i].ctypes.data_as(f32p), self._scratch)
        return out[0] if np.ndim(audio) == 1 else out

    def features_s8(self, audio: np.ndarray, quant: Quant) -> np.ndarray:
        clips = self._clips(audio)
        out = np.empty((clips.shape[0], *self.cfg.shape), dtype=np.int8)
        i8p, i16p = ctypes.POINTER(ctypes.c_int8), ctypes.POINTER(ctypes.c_int16)
        for i in range(clips.shape[0]):
            self._lib.td_frontend_clip_s8(clips[i].ctypes.data_as(i16p),
                                          out[i].ctypes.data_as(i8p), float(quant.scale),
                                          int(quant.zero_point), self._scratch)
        return out[0] if np.ndim(audio) == 1 else out

    def stream_s8(self, audio: np.ndarray, quant: Quant) -> np.ndarray:
        return stream_frames_s8(self._lib, self._scratch, self.cfg, audio, quant)

    def stream_windows_s8(self, audio: np.ndarray, quant: Quant, infer_every: int = 1
                          ) -> tuple[np.ndarray, np.ndarray]:
        """The model input of every window the kws app runs, each brought to its window's
        peak by ``td_frontend_window_s8`` as the app does."""
        return stream_windows(self._lib, self._scratch, self.cfg, audio, quant, infer_every,
                              window_hook=True)


# ---- the reference: TensorFlow's ops, as MLPerf calls them ----------------------------------

def peak_divisor(pcm: np.ndarray) -> np.float32:
    """MLPerf divides by the largest signed sample; 0 (where TF gives NaN) becomes 1."""
    m = np.float32(np.max(np.asarray(pcm, dtype=np.float32)))
    return m if m != 0 else np.float32(1.0)


def tf_reference_features(audio: np.ndarray, cfg: MlperfConfig | None = None) -> np.ndarray:
    """float32 [frames, n_mfcc] of one int16 clip through TensorFlow's ops (MLPerf's graph)."""
    from tinydeploy.tfenv import quiet_tensorflow

    quiet_tensorflow()
    import tensorflow as tf

    cfg = cfg or MlperfConfig()
    pcm = np.asarray(audio).reshape(-1)
    if pcm.size != cfg.clip_samples:
        raise InputDataError(f"mlperf-kws reference: {pcm.size} samples, expected "
                             f"{cfg.clip_samples}")
    x = tf.cast(tf.constant(pcm.astype(np.int64)), tf.float32)
    div = peak_divisor(pcm) if cfg.peak_normalise else np.float32(32768.0)
    x = x / tf.constant(div)
    stfts = tf.signal.stft(x, frame_length=cfg.window, frame_step=cfg.stride,
                           fft_length=cfg.fft, window_fn=tf.signal.hann_window)
    spec = tf.abs(stfts)
    mel_w = tf.signal.linear_to_mel_weight_matrix(cfg.mel_bands, cfg.fft // 2 + 1,
                                                  cfg.sample_rate, cfg.mel_low_hz,
                                                  cfg.mel_high_hz)
    mel = tf.tensordot(spec, mel_w, 1)
    log_mel = tf.math.log(mel + cfg.log_floor)
    mfcc = tf.signal.mfccs_from_log_mel_spectrograms(log_mel)[..., :cfg.n_mfcc]
    return np.asarray(mfcc.numpy(), dtype=np.float32)


def numpy_reference_features(audio: np.ndarray, cfg: MlperfConfig | None = None) -> np.ndarray:
    """float64 [frames, n_mfcc]: the same math in numpy (dense matrices, numpy's FFT)."""
    cfg = cfg or MlperfConfig()
    pcm = np.asarray(audio).reshape(-1)
    div = float(peak_divisor(pcm)) if cfg.peak_normalise else 32768.0
    x = pcm.astype(np.float64) / div
    idx = np.arange(cfg.frames)[:, None] * cfg.stride + np.arange(cfg.window)[None, :]
    n = np.arange(cfg.window)
    hann = 0.5 - 0.5 * np.cos(2 * np.pi * n / cfg.window)
    mag = np.abs(np.fft.rfft(x[idx] * hann, n=cfg.fft, axis=1))
    log_mel = np.log(mag @ mel_weight_matrix(cfg) + cfg.log_floor)
    return log_mel @ dct_matrix(cfg).T


PRESET_SPEC = PresetSpec(
    preset=FrontendPreset.MLPERF_KWS,
    summary="MLPerf Tiny KWS: peak-normalised 30 ms Hann, |FFT 512|, 40 mel, log, 10 MFCC",
    sources=SOURCES,
    config=MlperfConfig,
    host=MlperfHost,
    reference=quantized_reference(tf_reference_features),
    render_header=render_header,
    scratch_bytes=scratch_bytes,
    float_features=lambda cfg, clips: MlperfHost(cfg).features(clips),
)
