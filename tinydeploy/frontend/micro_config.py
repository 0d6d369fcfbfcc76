"""The ``micro-speech`` front end's parameters, its integer tables, and its C config header.

The preset reproduces TensorFlow's audio microfrontend (``audio_microfrontend`` op; the
front end TFLM's micro_speech example was trained with) byte for byte: a 30 ms window every
20 ms, a 16-bit fixed-point FFT, a 40-channel mel filterbank with integer weights, noise
reduction, PCAN gain control and an integer logarithm, giving uint16 features; the int8
model input is TFLM's fixed mapping ``(v * 256 + 333) / 666 - 128``.

Everything the C code (``firmware/frontend/td_frontend_micro.c``) reads besides the samples
is an integer table computed here, with the same floating-point expressions, in the same
precision (float32 where TensorFlow's C uses float, float64 where it uses double), as the
op's own set-up code; so the device needs no libm and no FPU. The trigonometric and
logarithm calls go to the host C library (CPython's ``math`` module, and ``powf`` through
ctypes), as the op's do.

Invariants: the same config renders byte-identical headers; ``window <= fft``; every
filterbank bin lies in ``[bin_start, bin_end)`` inside the spectrum, and each bin feeds at
most two adjacent output channels.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import json
import math
from dataclasses import asdict, dataclass, fields
from functools import lru_cache
from pathlib import Path
from typing import ClassVar

import numpy as np

from tinydeploy.errors import InputDataError
from tinydeploy.frontend.header import (
    c_array,
    framing_macros,
    read_config_text,
    render_config_header,
)
from tinydeploy.frontend.presets import PresetConfig

PRESET = "micro-speech"
WINDOW_BITS = 12          # window coefficients are Q12
FILTERBANK_BITS = 12      # filterbank weights are Q12
NOISE_BITS = 14           # noise-reduction coefficients are Q14
PCAN_SNR_BITS = 12
WDF_BITS = 32             # the PCAN gain table covers uint32 noise estimates
LOG_SEGMENTS_LOG2 = 7
LOG_SCALE_LOG2 = 16
LOG_COEFF = 45426         # round(ln(2) * 2^16)
INT8_SCALE = 256          # TFLM's int8 mapping: (v * 256 + 666 / 2) / 666 - 128
INT8_DIV = int(25.6 * 26.0 + 0.5)


@dataclass(frozen=True)
class MicroSpeechConfig(PresetConfig):
    """Microfrontend parameters; the defaults are TFLM micro_speech's (49 x 40 input)."""

    ERROR_PREFIX: ClassVar[str] = "micro-speech front-end config"
    ERROR_HINT: ClassVar[str] = "see docs/frontend.md (micro-speech preset)"

    window_ms: int = 30
    stride_ms: int = 20
    channels: int = 40
    lower_hz: float = 125.0
    upper_hz: float = 7500.0
    smoothing_bits: int = 10
    even_smoothing: float = 0.025
    odd_smoothing: float = 0.06
    min_signal_remaining: float = 0.05
    pcan: bool = True
    pcan_strength: float = 0.95
    pcan_offset: float = 80.0
    gain_bits: int = 21
    log: bool = True
    scale_shift: int = 6

    def __post_init__(self) -> None:
        bad = self.error
        if not 1000 <= self.sample_rate <= 48000:
            raise bad(f"sample_rate={self.sample_rate} must be in [1000, 48000]")
        if self.window * 1000 != self.window_ms * self.sample_rate or self.window < 16:
            raise bad(f"window_ms={self.window_ms} must be a whole number of samples >= 16 "
                      f"at {self.sample_rate} Hz")
        if not 0 < self.stride <= self.window:
            raise bad(f"stride_ms={self.stride_ms} must give 1..{self.window} samples")
        if self.fft > 4096:
            raise bad(f"window {self.window} samples needs an FFT of {self.fft} > 4096")
        if self.clip_samples < self.window:
            raise bad(f"clip_samples={self.clip_samples} is shorter than one window")
        if not 1 <= self.channels <= 127:
            raise bad(f"channels={self.channels} must be in [1, 127]")
        if not 0.0 <= self.lower_hz < self.upper_hz <= self.sample_rate / 2:
            raise bad(f"band {self.lower_hz}..{self.upper_hz} Hz must lie in "
                      f"[0, {self.sample_rate / 2}]")
        if not 0 <= self.smoothing_bits <= 16:
            raise bad(f"smoothing_bits={self.smoothing_bits} must be in [0, 16]")
        for name in ("even_smoothing", "odd_smoothing", "min_signal_remaining"):
            if not 0.0 <= getattr(self, name) < 1.0:
                raise bad(f"{name}={getattr(self, name)} must be in [0, 1)")
        if not 0 <= self.scale_shift <= 16:
            raise bad(f"scale_shift={self.scale_shift} must be in [0, 16]")
        if self.pcan and not (self.pcan_offset > 0.0 and 0 < self.gain_bits <= 30
                              and 0 <= self.snr_shift < 32 and self.pcan_input_bits >= 0):
            raise bad(f"PCAN offset={self.pcan_offset}, gain_bits={self.gain_bits} need "
                      f"offset > 0 and 0 <= gain_bits - {self.correction_bits} - 12 < 32")

    # -- derived sizes -------------------------------------------------------------------
    @property
    def window(self) -> int:
        return self.window_ms * self.sample_rate // 1000

    @property
    def stride(self) -> int:
        return self.stride_ms * self.sample_rate // 1000

    @property
    def fft(self) -> int:
        n = 1
        while n < self.window:
            n <<= 1
        return n

    @property
    def n_out(self) -> int:
        return self.channels

    @property
    def correction_bits(self) -> int:
        """log2(fft) - FILTERBANK_BITS / 2: the filterbank output's extra scale."""
        return self.fft.bit_length() - 1 - FILTERBANK_BITS // 2

    @property
    def snr_shift(self) -> int:
        return self.gain_bits - self.correction_bits - PCAN_SNR_BITS

    @property
    def pcan_input_bits(self) -> int:
        return self.smoothing_bits - self.correction_bits

    # -- serialisation -------------------------------------------------------------------
    def to_json(self) -> str:
        return json.dumps({"frontend": PRESET, **asdict(self)}, indent=2) + "\n"

    @classmethod
    def from_dict(cls, d: dict, source: str = "<dict>") -> MicroSpeechConfig:
        d = dict(d)
        preset = d.pop("frontend", PRESET)
        if preset != PRESET:
            raise InputDataError(f"{source}: front end '{preset}' is not {PRESET}")
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(d) - known)
        if unknown:
            raise InputDataError(f"{source}: unknown micro-speech parameter(s) "
                                 f"{', '.join(unknown)}",
                                 hint=f"parameters: {', '.join(sorted(known))}")
        try:
            return cls(**d)
        except TypeError as err:
            raise InputDataError(f"{source}: not a micro-speech config ({err})") from err

    @classmethod
    def from_json(cls, text: str, source: str = "<string>") -> MicroSpeechConfig:
        try:
            d = json.loads(text)
        except ValueError as err:
            raise InputDataError(f"{source}: not JSON ({err})") from err
        if not isinstance(d, dict):
            raise InputDataError(f"{source}: a front-end config is a JSON object")
        return cls.from_dict(d, source)

    @classmethod
    def load(cls, path: Path) -> MicroSpeechConfig:
        return cls.from_json(read_config_text(path), str(path))

    def op_kwargs(self) -> dict:
        """The same parameters as keyword arguments of TensorFlow's ``audio_microfrontend``."""
        return dict(sample_rate=self.sample_rate, window_size=self.window_ms,
                    window_step=self.stride_ms, num_channels=self.channels,
                    upper_band_limit=self.upper_hz, lower_band_limit=self.lower_hz,
                    smoothing_bits=self.smoothing_bits, even_smoothing=self.even_smoothing,
                    odd_smoothing=self.odd_smoothing,
                    min_signal_remaining=self.min_signal_remaining, enable_pcan=self.pcan,
                    pcan_strength=self.pcan_strength, pcan_offset=self.pcan_offset,
                    gain_bits=self.gain_bits, enable_log=self.log,
                    scale_shift=self.scale_shift)


# ---- tables ----------------------------------------------------------------------------------

F32 = np.float32


@lru_cache(maxsize=1)
def _powf():  # noqa: ANN202
    lib = ctypes.CDLL(ctypes.util.find_library("m") or "libm.so.6")
    fn = lib.powf
    fn.argtypes = [ctypes.c_float, ctypes.c_float]
    fn.restype = ctypes.c_float
    return fn


def _freq_to_mel(f: np.float32) -> np.float32:
    """float in, float out, double inside (as the op's FreqToMel)."""
    return F32(1127.0 * math.log1p(float(f) / 700.0))


@dataclass(frozen=True)
class MicroSpeechTables:
    """Every constant the C front end reads; all integers."""

    window: np.ndarray          # [window] int16, Q12 Hann (0.5 - 0.5 cos(2 pi (i + 0.5) / N))
    twiddles: np.ndarray        # [fft/2, 2] int16, Q15 exp(-2 pi i k / (fft/2))
    super_twiddles: np.ndarray  # [fft/4, 2] int16, Q15 the real FFT's split twiddles
    bin_start: int              # first spectrum bin fed into the filterbank (DC excluded)
    bin_end: int                # one past the last
    bin_channel: np.ndarray     # [bins] uint8: channel c; the bin's weight goes to output c-1
    bin_weight: np.ndarray      # [bins] int16 Q12 weight (into output c - 1, c >= 1)
    bin_unweight: np.ndarray    # [bins] int16 Q12 1 - weight (into output c, c < channels)
    even_smoothing: int         # Q14
    odd_smoothing: int          # Q14
    min_signal_remaining: int   # Q14
    gain_lut: np.ndarray        # [4 * 32 - 3] int16, PCAN gain, piecewise quadratic
    log_lut: np.ndarray         # [130] uint16: (log2(1 + x) - x) in Q16 at x = i / 128
    fft_order: np.ndarray       # [fft/2] uint16: the complex FFT's input read at position i


def _window(cfg: MicroSpeechConfig) -> np.ndarray:
    n = cfg.window
    arg = float(F32(math.pi * 2.0 / float(F32(n))))
    out = np.empty(n, dtype=np.int16)
    for i in range(n):
        v = F32(0.5 - 0.5 * math.cos(arg * (i + 0.5)))
        out[i] = int(math.floor(float(v * F32(1 << WINDOW_BITS)) + 0.5))
    return out


def _cexp(phase: float) -> tuple[int, int]:
    return (int(math.floor(0.5 + 32767 * math.cos(phase))),
            int(math.floor(0.5 + 32767 * math.sin(phase))))


def _twiddles(cfg: MicroSpeechConfig) -> tuple[np.ndarray, np.ndarray]:
    ncfft = cfg.fft // 2
    pi = 3.141592653589793
    tw = np.array([_cexp(-2 * pi * i / ncfft) for i in range(ncfft)], dtype=np.int16)
    sup = np.array([_cexp(-pi * ((i + 1) / ncfft + 0.5)) for i in range(ncfft // 2)],
                   dtype=np.int16)
    return tw, sup


def _filterbank(cfg: MicroSpeechConfig) -> tuple[int, int, np.ndarray, np.ndarray, np.ndarray]:
    n1 = cfg.channels + 1
    lower, upper = F32(cfg.lower_hz), F32(cfg.upper_hz)
    mel_low = _freq_to_mel(lower)
    mel_span = F32(_freq_to_mel(upper) - mel_low)
    spacing = F32(mel_span / F32(n1))
    centres = [F32(mel_low + spacing * F32(i + 1)) for i in range(n1)]
    spectrum = cfg.fft // 2 + 1
    hz_per_bin = F32(0.5 * cfg.sample_rate / float(F32(spectrum) - F32(1)))
    start = int(1.5 + float(F32(lower / hz_per_bin)))
    chans: list[int] = []
    weights: list[int] = []
    unweights: list[int] = []
    freq = start
    for chan in range(n1):
        denom = mel_low if chan == 0 else centres[chan - 1]
        while _freq_to_mel(F32(F32(freq) * hz_per_bin)) <= centres[chan]:
            w = F32((centres[chan] - _freq_to_mel(F32(F32(freq) * hz_per_bin)))
                    / (centres[chan] - denom))
            chans.append(chan)
            weights.append(int(math.floor(float(w * F32(1 << FILTERBANK_BITS)) + 0.5)))
            unweights.append(int(math.floor((1.0 - float(w)) * (1 << FILTERBANK_BITS) + 0.5)))
            freq += 1
    end = freq
    if end >= spectrum or end <= start:
        raise InputDataError(f"micro-speech front-end config: the filterbank spans bins "
                             f"{start}..{end} of a {spectrum}-bin spectrum",
                             hint="lower upper_hz or use a longer window")
    return (start, end, np.asarray(chans, dtype=np.uint8),
            np.asarray(weights, dtype=np.int16), np.asarray(unweights, dtype=np.int16))


def _gain_lut(cfg: MicroSpeechConfig) -> np.ndarray:
    powf = _powf()
    input_bits = cfg.pcan_input_bits
    strength, offset = F32(cfg.pcan_strength), F32(cfg.pcan_offset)

    def gain(x: int) -> int:
        xf = F32(F32(x) / F32(1 << input_bits))
        g = F32(F32(1 << cfg.gain_bits) * F32(powf(float(F32(xf + offset)), float(-strength))))
        if g > F32(0x7FFF):
            return 0x7FFF
        return int(F32(g + F32(0.5)))       # C's float -> int16 truncates

    def s16(v: int) -> int:
        return ((v + 0x8000) & 0xFFFF) - 0x8000

    lut = np.zeros(4 * WDF_BITS - 3, dtype=np.int16)
    lut[0], lut[1] = gain(0), gain(1)
    for interval in range(2, WDF_BITS + 1):
        x0 = 1 << (interval - 1)
        x1 = x0 + (x0 >> 1)
        x2 = x0 + (x0 - 1) if interval == WDF_BITS else 2 * x0
        y0, y1, y2 = gain(x0), gain(x1), gain(x2)
        a1 = 4 * (y1 - y0) - (y2 - y0)
        a2 = (y2 - y0) - a1
        base = 4 * interval - 6
        lut[base], lut[base + 1], lut[base + 2] = y0, s16(a1), s16(a2)
    return lut


def fft_input_order(ncfft: int) -> np.ndarray:
    """The digit-reversed input order of the complex FFT of ``ncfft`` points (radix-4
    digits, then one radix-2 digit when ``log2 ncfft`` is odd): position ``pos`` of the first
    stage reads input ``src``, whose digits, least significant first, are those of ``pos``,
    most significant first."""
    total = ncfft.bit_length() - 1
    out = np.zeros(ncfft, dtype=np.uint16)
    for pos in range(ncfft):
        src, bits, sbits, rest = 0, total, 0, pos
        while bits > 0:
            rb = 2 if bits >= 2 else 1
            bits -= rb
            src += (rest >> bits) << sbits
            rest &= (1 << bits) - 1
            sbits += rb
        out[pos] = src
    return out


def _log_lut() -> np.ndarray:
    """The log2 correction table: (log2(1 + x) - x) * 2^16 at x = i / 128, one padding 0."""
    n = 1 << LOG_SEGMENTS_LOG2
    x = np.arange(n + 1, dtype=np.float64) / n
    v = np.floor((np.log2(1.0 + x) - x) * (1 << LOG_SCALE_LOG2) + 0.5)
    return np.concatenate([v, [0.0]]).astype(np.uint16)


def compute_tables(cfg: MicroSpeechConfig) -> MicroSpeechTables:
    tw, sup = _twiddles(cfg)
    start, end, chans, w, u = _filterbank(cfg)
    return MicroSpeechTables(
        window=_window(cfg), twiddles=tw, super_twiddles=sup, bin_start=start, bin_end=end,
        bin_channel=chans, bin_weight=w, bin_unweight=u,
        even_smoothing=int(F32(cfg.even_smoothing) * F32(1 << NOISE_BITS)),
        odd_smoothing=int(F32(cfg.odd_smoothing) * F32(1 << NOISE_BITS)),
        min_signal_remaining=int(F32(cfg.min_signal_remaining) * F32(1 << NOISE_BITS)),
        gain_lut=_gain_lut(cfg) if cfg.pcan else np.zeros(4 * WDF_BITS - 3, dtype=np.int16),
        log_lut=_log_lut(),
        fft_order=fft_input_order(cfg.fft // 2),
    )


# ---- the C header ----------------------------------------------------------------------------

def render_microspeech_header(cfg: MicroSpeechConfig) -> str:
    """The config header of ``td_frontend_micro.c``: the ``TD_FE_*`` sizes of the front-end
    API, the caller-owned state/scratch struct, and (when the including file defines
    ``TD_FRONTEND_MICRO_DEFINE_TABLES``, which only td_frontend_micro.c does) the tables."""
    t = compute_tables(cfg)
    ncfft = cfg.fft // 2
    body = [
        "#include <stdint.h>",
        "",
        "#define TD_FE_PRESET_MICRO_SPEECH 1",
        *framing_macros(cfg),
        f"#define TD_FE_FFT {cfg.fft}",
        f"#define TD_FE_OUT {cfg.channels}",
        f"#define TD_FE_CHANNELS {cfg.channels}",
        f"#define TD_FE_BIN_START {t.bin_start}",
        f"#define TD_FE_BIN_END {t.bin_end}",
        f"#define TD_FE_SMOOTHING_BITS {cfg.smoothing_bits}",
        f"#define TD_FE_EVEN_SMOOTHING {t.even_smoothing}u",
        f"#define TD_FE_ODD_SMOOTHING {t.odd_smoothing}u",
        f"#define TD_FE_MIN_SIGNAL {t.min_signal_remaining}u",
        f"#define TD_FE_PCAN {int(cfg.pcan)}",
        f"#define TD_FE_SNR_SHIFT {cfg.snr_shift if cfg.pcan else 0}",
        f"#define TD_FE_LOG {int(cfg.log)}",
        f"#define TD_FE_SCALE_SHIFT {cfg.scale_shift}",
        f"#define TD_FE_CORRECTION_BITS {cfg.correction_bits}",
        f"#define TD_FE_INT8_SCALE {INT8_SCALE}",
        f"#define TD_FE_INT8_DIV {INT8_DIV}",
        "",
        "/* Caller-owned state and working memory of the front end. The noise estimate is",
        "   carried from frame to frame (frames must come in time order); a zeroed struct or",
        "   td_frontend_reset() starts a new stream. */",
        "typedef struct {",
        f"    uint32_t noise[{cfg.channels}];       /* noise estimate per channel, state */",
        f"    uint64_t acc[{cfg.channels}];         /* filterbank accumulators */",
        f"    int16_t in[{cfg.fft}];          /* windowed, scaled frame, zero padded */",
        f"    int16_t tmp[{ncfft} * 2];       /* complex FFT of half the size, re, im */",
        "} td_frontend_scratch_t;",
        "",
        "/* This preset's own additions to the td_frontend.h API: the frame's uint16 features",
        "   (those of TensorFlow's audio_microfrontend op; same call order rules as",
        "   td_frontend_frame_s8), and sizeof(td_frontend_scratch_t) for ctypes callers. */",
        "void td_frontend_frame_u16(const int16_t *ring, uint32_t ring_len, uint32_t start,",
        "                           uint16_t *out, td_frontend_scratch_t *scratch);",
        "uint32_t td_frontend_scratch_size(void);",
    ]
    tables = [
        *c_array("int16_t", "td_fe_window", t.window, per_line=12),
        *c_array("int16_t", "td_fe_twiddles", t.twiddles, per_line=8),
        *c_array("int16_t", "td_fe_super_twiddles", t.super_twiddles, per_line=8),
        *c_array("uint8_t", "td_fe_bin_channel", t.bin_channel, per_line=16),
        *c_array("int16_t", "td_fe_bin_weight", t.bin_weight, per_line=12),
        *c_array("int16_t", "td_fe_bin_unweight", t.bin_unweight, per_line=12),
        *c_array("int16_t", "td_fe_gain_lut", t.gain_lut, per_line=12),
        *c_array("uint16_t", "td_fe_log_lut", t.log_lut, per_line=12),
        *c_array("uint16_t", "td_fe_fft_order", t.fft_order, per_line=16),
    ]
    return render_config_header(cfg, body, tables,
                                tables_macro="TD_FRONTEND_MICRO_DEFINE_TABLES")
