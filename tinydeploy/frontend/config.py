"""The audio front end's parameters, and the C header that carries them to the firmware.

One `FrontendConfig` fixes everything the C front end (``firmware/frontend/``) computes:
framing, window, FFT size, mel filterbank, MFCC or log-mel output, and a per-coefficient
normalisation. Every table the C code reads (window, twiddles, mel weights, DCT matrix) is
computed here in float64, rounded once to float32 and written as an exact hexadecimal float
literal, so the host library and every device build read the very same bits (see
``docs/frontend.md``). Nothing is derived from trigonometric or logarithm functions of a C
library, whose last bits differ between glibc and newlib.

Invariants: the same config renders byte-identical headers; ``window <= fft``; the mel
band edges lie strictly inside (0, sample_rate / 2]; each FFT bin feeds at most two adjacent
mel bands.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any, ClassVar, Protocol

import numpy as np

from tinydeploy.errors import InputDataError
from tinydeploy.frontend.fftplan import FftPlan, make_plan, plan_macros, plan_tables
from tinydeploy.frontend.header import (
    c_array,
    framing_macros,
    hexf,
    read_config_text,
    render_config_header,
)
from tinydeploy.frontend.presets import PresetConfig
from tinydeploy.resources import firmware_dir


def framing_reason(fft: int, window: int, stride: int, clip_samples: int) -> str | None:
    """Why a float preset's framing cannot work (td_fe_float.h's FFT is radix 2 and each
    window must fit it; frames may overlap but not skip samples; a clip holds a window at
    least), else None."""
    if fft & (fft - 1) or not 16 <= fft <= 4096:
        return f"fft={fft} must be a power of two in [16, 4096]"
    if not 0 < window <= fft:
        return f"window={window} must be in (0, fft={fft}]"
    if not 0 < stride <= window:
        return f"stride={stride} must be in (0, window={window}]"
    if clip_samples < window:
        return f"clip_samples={clip_samples} is shorter than one window"
    return None


@dataclass(frozen=True)
class FloatPresetConfig(PresetConfig):
    """The fields and checks the float presets (``tinydeploy``, ``mlperf-kws``) share, in the
    order their field lists (and JSON) open with: the framing, the FFT of one window, and the
    mel filterbank. A preset's own defaults replace these in place; its ``__post_init__``
    calls this one first, then checks its own fields."""

    window: int = 640             # 40 ms
    stride: int = 320             # 20 ms
    fft: int = 1024               # a power of two >= window
    mel_bands: int = 40
    mel_low_hz: float = 20.0
    mel_high_hz: float = 4000.0

    def __post_init__(self) -> None:
        why = framing_reason(self.fft, self.window, self.stride, self.clip_samples)
        if why:
            raise self.error(why)
        if not 1 <= self.mel_bands <= 127:
            raise self.error(f"mel_bands={self.mel_bands} must be in [1, 127]")

    def bin_range(self, used: np.ndarray) -> tuple[int, int]:
        """The first and last of the FFT bins ``used`` (their indices, ascending) that feed
        a mel band: the bins td_fe_float.h visits. None used is an error: the mel range is
        narrower than one bin."""
        if used.size == 0:
            raise self.error(f"no FFT bin of {self.fft} falls inside the mel range "
                             f"{self.mel_low_hz}..{self.mel_high_hz} Hz",
                             hint="widen the mel range or raise fft")
        return int(used[0]), int(used[-1])


class FeatureKind(StrEnum):
    MFCC = "mfcc"
    LOG_MEL = "log_mel"


@dataclass(frozen=True)
class FrontendConfig(FloatPresetConfig):
    """Front-end parameters. Defaults: the MLPerf Tiny / Hello-Edge 49 x 10 MFCC input."""

    ERROR_HINT: ClassVar[str] = "see docs/frontend.md for the parameters"

    kind: FeatureKind = FeatureKind.MFCC
    n_mfcc: int = 10              # outputs per frame when kind is MFCC
    log_floor: float = 1e-6       # added to each mel energy before the logarithm
    # per-output normalisation y = (x - mean) / std, folded into the output tables
    mean: tuple[float, ...] = field(default=())
    std: tuple[float, ...] = field(default=())

    def __post_init__(self) -> None:
        super().__post_init__()
        if not 0 < self.mel_low_hz < self.mel_high_hz <= self.sample_rate / 2:
            raise self.error(f"mel range {self.mel_low_hz}..{self.mel_high_hz} Hz must lie in "
                             f"(0, {self.sample_rate / 2}]")
        if self.kind is FeatureKind.MFCC and not 1 <= self.n_mfcc <= self.mel_bands:
            raise self.error(f"n_mfcc={self.n_mfcc} must be in [1, mel_bands={self.mel_bands}]")
        for name in ("mean", "std"):
            v = getattr(self, name)
            if v and len(v) != self.n_out:
                raise self.error(f"{name} has {len(v)} values, expected {self.n_out} (one per "
                                 "output)")
        if any(s <= 0 for s in self.std):
            raise self.error("std values must be > 0")

    @property
    def n_out(self) -> int:
        return self.n_mfcc if self.kind is FeatureKind.MFCC else self.mel_bands

    def with_normalisation(self, mean: np.ndarray, std: np.ndarray) -> FrontendConfig:
        from dataclasses import replace
        return replace(self, mean=tuple(float(np.float32(m)) for m in mean),
                       std=tuple(float(np.float32(max(s, 1e-6))) for s in std))

    # -- serialisation -------------------------------------------------------------------
    def to_json(self) -> str:
        d = asdict(self)
        d["kind"] = self.kind.value
        d["mean"] = list(self.mean)
        d["std"] = list(self.std)
        return json.dumps(d, indent=2) + "\n"

    @classmethod
    def from_json(cls, text: str, source: str = "<string>") -> FrontendConfig:
        try:
            d = json.loads(text)
            d["kind"] = FeatureKind(d.get("kind", "mfcc"))
            d["mean"] = tuple(float(x) for x in d.get("mean", ()))
            d["std"] = tuple(float(x) for x in d.get("std", ()))
            return cls(**d)
        except (ValueError, TypeError, KeyError) as err:
            raise InputDataError(f"{source}: not a front-end config ({err})",
                                 hint="write it with FrontendConfig.to_json()") from err

    @classmethod
    def from_dict(cls, d: dict[str, Any], source: str = "<dict>") -> FrontendConfig:
        return cls.from_json(json.dumps(d), source)

    @classmethod
    def load(cls, path: Path) -> FrontendConfig:
        return cls.from_json(read_config_text(path), str(path))


# ---- tables ------------------------------------------------------------------------------

def hz_to_mel(f: np.ndarray | float) -> np.ndarray:
    """HTK mel scale: 1127 ln(1 + f / 700)."""
    return 1127.0 * np.log1p(np.asarray(f, dtype=np.float64) / 700.0)


@dataclass(frozen=True)
class FrontendTables:
    """Every constant the C front end reads, as float32 (int32 for indices)."""

    window: np.ndarray        # [window] periodic Hann, scaled by 1/32768 (int16 -> [-1, 1))
    bin_first: int            # first FFT bin with a nonzero mel weight
    bin_last: int             # last one (inclusive)
    bin_band: np.ndarray      # [bins] int: lower band index (-1 = the bin feeds band 0 only)
    w_lower: np.ndarray       # [bins] weight into band bin_band[k]
    w_upper: np.ndarray       # [bins] weight into band bin_band[k] + 1
    out_matrix: np.ndarray    # [n_out, mel_bands] DCT-II (orthonormal) or identity, / std
    out_bias: np.ndarray      # [n_out] -mean / std


def compute_tables(cfg: FrontendConfig) -> FrontendTables:
    n = np.arange(cfg.window, dtype=np.float64)
    hann = 0.5 - 0.5 * np.cos(2.0 * np.pi * n / cfg.window)        # periodic Hann
    window = (hann / 32768.0).astype(np.float32)

    lo, hi = hz_to_mel(cfg.mel_low_hz), hz_to_mel(cfg.mel_high_hz)
    edges = np.linspace(lo, hi, cfg.mel_bands + 2)        # edges[j+1] is band j's centre
    centres = edges[1:-1]
    freqs = np.arange(cfg.fft // 2 + 1, dtype=np.float64) * cfg.sample_rate / cfg.fft
    mels = hz_to_mel(freqs)
    first, last = cfg.bin_range(np.nonzero((mels > lo) & (mels < hi))[0])
    bands, wl, wu = [], [], []
    for b in range(first, last + 1):
        m = mels[b]
        # j = index of the last centre <= m (-1 when m lies below the first centre)
        j = int(np.searchsorted(centres, m, side="right")) - 1
        lower_c = edges[j + 1]            # centre of band j (edges[0] = lo when j = -1)
        upper_c = edges[j + 2]            # centre of band j+1 (edges[-1] = hi when j = last)
        rise = (m - lower_c) / (upper_c - lower_c)
        bands.append(j)
        wl.append(0.0 if j < 0 else 1.0 - rise)
        wu.append(0.0 if j + 1 >= cfg.mel_bands else rise)
    if cfg.kind is FeatureKind.MFCC:
        i = np.arange(cfg.n_mfcc, dtype=np.float64)[:, None]
        jj = np.arange(cfg.mel_bands, dtype=np.float64)[None, :]
        mat = np.sqrt(2.0 / cfg.mel_bands) * np.cos(np.pi * i * (jj + 0.5) / cfg.mel_bands)
        mat[0, :] *= 1.0 / np.sqrt(2.0)
    else:
        mat = np.eye(cfg.mel_bands)
    mean = np.asarray(cfg.mean or [0.0] * cfg.n_out, dtype=np.float64)
    std = np.asarray(cfg.std or [1.0] * cfg.n_out, dtype=np.float64)
    return FrontendTables(
        window=window, bin_first=first, bin_last=last,
        bin_band=np.asarray(bands, dtype=np.int32),
        w_lower=np.asarray(wl, dtype=np.float32), w_upper=np.asarray(wu, dtype=np.float32),
        out_matrix=(mat / std[:, None]).astype(np.float32),
        out_bias=(-mean / std).astype(np.float32),
    )


# ---- the C header ----------------------------------------------------------------------------

class FloatPresetTables(Protocol):
    """The tables every float preset computes for td_fe_float.h (FrontendTables,
    MlperfTables)."""

    @property
    def bin_first(self) -> int: ...
    @property
    def bin_last(self) -> int: ...
    @property
    def window(self) -> np.ndarray: ...
    @property
    def bin_band(self) -> np.ndarray: ...
    @property
    def w_lower(self) -> np.ndarray: ...
    @property
    def w_upper(self) -> np.ndarray: ...


def float_preset_plan(cfg: FloatPresetConfig, t: FloatPresetTables, *,
                      magnitude: bool = False) -> FftPlan:
    """The FFT and filterbank plan of a float preset (``magnitude``: its bins feed the mel
    bands with |X| rather than |X|^2, as mlperf-kws's do)."""
    return make_plan(cfg.fft, t.window, t.bin_first, t.bin_last, t.bin_band, t.w_lower,
                     t.w_upper, cfg.mel_bands, magnitude, cfg.ERROR_PREFIX)


def float_preset_macros(cfg: FloatPresetConfig, plan: FftPlan) -> list[str]:
    """The size macros of a float preset's config header, in this order in every preset
    (td_fe_float.h and both preset sources read them)."""
    return [
        *framing_macros(cfg),
        *plan_macros(plan),
        f"#define TD_FE_MEL_BANDS {cfg.mel_bands}",
        f"#define TD_FE_OUT {cfg.n_out}",
    ]


def float_preset_tables(plan: FftPlan) -> list[str]:
    """The tables td_fe_float.h reads (the FFT plan's: window, twiddles, bins, segments)."""
    return plan_tables(plan)


def dct_columns(mat: np.ndarray) -> np.ndarray:
    """The first ceil(B/2) columns of a DCT-II matrix [rows, B]: td_fe_float.h's td_fe_dct
    reads the rest from them (row i is even or odd about the middle as i is)."""
    return np.ascontiguousarray(mat[:, :(mat.shape[1] + 1) // 2])


def out_table(cfg: FrontendConfig, mat: np.ndarray) -> np.ndarray:
    """The output table td_frontend.c reads: the DCT's first columns (MFCC), or the diagonal
    of the identity divided by std (log-mel)."""
    return dct_columns(mat) if cfg.kind is FeatureKind.MFCC else np.diag(mat).copy()


def render_frontend_header(cfg: FrontendConfig) -> str:
    """``td_frontend_config.h`` for ``cfg``: macros for the sizes, and (when the including
    file defines ``TD_FRONTEND_DEFINE_TABLES``, which only td_frontend.c does) the tables."""
    t = compute_tables(cfg)
    plan = float_preset_plan(cfg, t)
    body = [
        *float_preset_macros(cfg, plan),
        f"#define TD_FE_KIND_MFCC {1 if cfg.kind is FeatureKind.MFCC else 0}",
        f"#define TD_FE_LOG_FLOOR {hexf(cfg.log_floor)}",
        "#define TD_FE_PRESET_TINYDEPLOY 1",
        "",
        "/* Working memory of one frame computation (4 * (TD_FE_FFT + TD_FE_MEL_BANDS) bytes);",
        " * this preset keeps no state from frame to frame. */",
        "typedef struct {",
        "    float fft[TD_FE_FFT]; /* TD_FE_FFT / 2 complex values, interleaved re, im */",
        "    float mel[TD_FE_MEL_BANDS];",
        "} td_frontend_scratch_t;",
    ]
    tables = [
        *float_preset_tables(plan),
        *c_array("float", "td_fe_out_matrix", out_table(cfg, t.out_matrix)),
        *c_array("float", "td_fe_out_bias", t.out_bias),
    ]
    return render_config_header(cfg, body, tables)


def main(argv: list[str] | None = None) -> int:
    """``python -m tinydeploy.frontend.config [CONFIG.json]``: rewrite the committed
    ``firmware/frontend/td_frontend_config.h`` (default config when no file is given)."""
    import sys

    args = sys.argv[1:] if argv is None else argv
    cfg = FrontendConfig.load(Path(args[0])) if args else FrontendConfig()
    out = firmware_dir() / "frontend" / "td_frontend_config.h"
    out.write_text(render_frontend_header(cfg))
    print(out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
