"""The float presets' transform plan: the tables td_fe_float.h's real FFT and filterbank read.

The float presets (``tinydeploy``, ``mlperf-kws``) take the real FFT of ``fft`` points of one
zero-padded, windowed frame as a complex FFT of ``M = fft / 2`` points (``z[m] = x[2m] +
i x[2m+1]``), then split it into the real spectrum's bins, only the bins the filterbank uses.
The complex FFT is a mixed-radix decimation in time: a first stage of radix ``R0`` (8, or 2
or 4 when ``log2 M`` is not a multiple of 3), then radix-8 stages. Everything that can be
decided here is, so the C has no index arithmetic beyond pointer steps:

- ``gather[g]``: the first stage's group ``g`` reads the complex inputs ``gather[g] + j * M /
  R0`` (``j < R0``), the base-8 digit reversal of ``g``; it writes ``z[R0 g + r]``, so the
  later stages run in place and the spectrum comes out in natural order. The stage reads the
  samples straight from the caller's ring, times the window: ``window`` holds the window in
  the order the groups read it (only the ``slots`` inputs a group can have inside the frame;
  the rest are the zero padding and are never read).
- ``twiddle[k]``: ``cos, sin`` of ``2 pi n k / M`` for ``n = 1..7`` (row ``k < M / 8``),
  the last radix-8 stage's twiddles; a stage of span ``L`` reads rows ``k * M / (8 L)``.
- ``bins``: per bin ``k`` the filterbank uses, in order: ``cos, sin`` of ``2 pi k / fft``
  (the split) and its two mel weights, times ``1/4`` (power) or ``1/2`` (magnitude): the
  split's halvings moved into the weights, exact since they are powers of two.
- ``seg_len``: the bins per band segment: segment ``s`` holds the bins whose lower band is
  ``seg_first + s``; the C keeps the two bands a segment feeds in registers.

Invariants: every table is float32 rounded once from float64 (exact hex literals in the
header); the plan reproduces ``numpy.fft`` (`emulate_fft`, tested); a bin feeds at most two
adjacent bands and the bands of successive bins never decrease.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tinydeploy.errors import InputDataError
from tinydeploy.frontend.header import c_array


def first_radix(m: int) -> int:
    """The first stage's radix for a complex FFT of ``m`` points (a power of two >= 8)."""
    r = (m.bit_length() - 1) % 3
    return 8 if r == 0 else 1 << r


def gather_bases(m: int) -> np.ndarray:
    """The first stage's input base of each group: the base-8 digit reversal of ``g`` over
    the radix-8 stages that follow (``log8(m / R0)`` digits)."""
    r0 = first_radix(m)
    groups = m // r0
    digits = (groups.bit_length() - 1) // 3
    out = np.zeros(groups, dtype=np.int64)
    for g in range(groups):
        v, b = g, 0
        for _ in range(digits):
            b = b * 8 + (v & 7)
            v >>= 3
        out[g] = b
    return out


@dataclass(frozen=True)
class FftPlan:
    fft: int
    window_len: int
    radix0: int
    slots: int                 # inputs per first-stage group that can hold samples
    full: int                  # of them, the ones that hold two samples in every group
    gather: np.ndarray         # [M / R0] int
    window: np.ndarray         # [M / R0, slots, 2] float32
    twiddle: np.ndarray        # [max(M / 8, 1), 7, 2] float32
    bin_first: int
    bin_last: int
    bins: np.ndarray           # [bins, 4] float32: cos, sin, w_lower * s, w_upper * s
    seg_first: int
    seg_len: np.ndarray        # [segments] int

    @property
    def half(self) -> int:
        return self.fft // 2


def make_plan(fft: int, window: np.ndarray, bin_first: int, bin_last: int,
              bin_band: np.ndarray, w_lower: np.ndarray, w_upper: np.ndarray,
              mel_bands: int, magnitude: bool, what: str) -> FftPlan:
    """The plan for a float preset: ``window`` is its float32 window (the samples' factor),
    ``bin_band``/``w_lower``/``w_upper`` its filterbank over bins ``bin_first..bin_last``
    (``what`` names the preset in errors)."""
    m = fft // 2
    if m < 8:
        raise InputDataError(f"{what}: fft={fft} must be at least 16")
    if not 1 <= bin_first <= bin_last < m:
        raise InputDataError(f"{what}: the filterbank uses FFT bins {bin_first}..{bin_last} "
                             f"of {fft}; bins 0 and {m} (0 Hz and half the sample rate) are "
                             "not supported", hint="narrow the mel range")
    r0 = first_radix(m)
    span = m // r0
    wlen = len(window)
    pairs = (wlen + 1) // 2                    # complex inputs that hold a sample
    slots = -(-pairs // span)
    full = (wlen // 2) // span
    gather = gather_bases(m)
    win = np.zeros((span, slots, 2), dtype=np.float32)
    for g in range(span):
        for j in range(slots):
            p = int(gather[g]) + j * span
            for h in range(2):
                if 2 * p + h < wlen:
                    win[g, j, h] = window[2 * p + h]
    rows = max(m // 8, 1)
    k = np.arange(rows, dtype=np.float64)[:, None] * np.arange(1, 8, dtype=np.float64)[None, :]
    ang = 2.0 * np.pi * k / m
    tw = np.stack([np.cos(ang), np.sin(ang)], axis=-1).astype(np.float32)

    band = np.asarray(bin_band, dtype=np.int64).copy()
    wl = np.asarray(w_lower, dtype=np.float32)
    wu = np.asarray(w_upper, dtype=np.float32)
    for i in range(1, len(band)):              # a bin that feeds nothing (weights 0) keeps
        if wl[i] == 0 and wu[i] == 0:          # its predecessor's bands: it adds exact zeros
            band[i] = band[i - 1]
    if (np.diff(band) < 0).any() or band[0] < -1 or band[-1] >= mel_bands:
        raise InputDataError(f"{what}: the bands of successive FFT bins must not decrease")
    scale = np.float32(0.5 if magnitude else 0.25)
    kk = np.arange(bin_first, bin_last + 1, dtype=np.float64)
    bins = np.stack([np.cos(2.0 * np.pi * kk / fft).astype(np.float32),
                     np.sin(2.0 * np.pi * kk / fft).astype(np.float32),
                     wl * scale, wu * scale], axis=1).astype(np.float32)
    seg_first = int(band[0])
    seg_len = np.bincount(band - seg_first, minlength=int(band[-1]) - seg_first + 1)
    return FftPlan(fft=fft, window_len=wlen, radix0=r0, slots=slots, full=full, gather=gather,
                   window=win, twiddle=tw, bin_first=bin_first, bin_last=bin_last, bins=bins,
                   seg_first=seg_first, seg_len=seg_len)


def plan_macros(p: FftPlan) -> list[str]:
    """The plan's size macros (td_fe_float.h reads them)."""
    return [
        f"#define TD_FE_FFT {p.fft}",
        f"#define TD_FE_RADIX0 {p.radix0}",
        f"#define TD_FE_SLOTS {p.slots}",
        f"#define TD_FE_FULL_SLOTS {p.full}",
        f"#define TD_FE_BIN_FIRST {p.bin_first}",
        f"#define TD_FE_BIN_LAST {p.bin_last}",
        f"#define TD_FE_SEG_FIRST {p.seg_first}",
        f"#define TD_FE_SEGS {len(p.seg_len)}",
    ]


def plan_tables(p: FftPlan) -> list[str]:
    """The plan's tables, as td_fe_float.h reads them."""
    idx = "uint16_t" if p.half <= 65536 else "uint32_t"
    seg = "uint8_t" if int(p.seg_len.max()) < 256 else "uint16_t"
    return [
        *c_array(idx, "td_fe_gather", p.gather, per_line=16),
        *c_array("float", "td_fe_window", p.window),
        *c_array("float", "td_fe_twiddle", p.twiddle),
        *c_array("float", "td_fe_bins", p.bins),
        *c_array(seg, "td_fe_seg_len", p.seg_len, per_line=16),
    ]


def emulate_fft(p: FftPlan, frame: np.ndarray) -> np.ndarray:
    """The complex spectrum ``Z`` (``M`` points) of one frame of ``window_len`` samples as
    the plan's stages compute it, in float64 (a check of the tables, not of rounding)."""
    m = p.half
    span = m // p.radix0
    z = np.zeros(m, dtype=np.complex128)
    for g in range(span):
        a = np.zeros(p.radix0, dtype=np.complex128)
        for j in range(p.slots):
            q = int(p.gather[g]) + j * span
            re = frame[2 * q] * float(p.window[g, j, 0]) if 2 * q < p.window_len else 0.0
            im = frame[2 * q + 1] * float(p.window[g, j, 1]) \
                if 2 * q + 1 < p.window_len else 0.0
            a[j] = re + 1j * im
        z[p.radix0 * g:p.radix0 * (g + 1)] = np.fft.fft(a)
    span_l = p.radix0
    while span_l < m:
        stride = m // (8 * span_l)
        for k1 in range(span_l):
            row = p.twiddle[k1 * stride].astype(np.float64)
            w = np.concatenate([[1.0], row[:, 0] - 1j * row[:, 1]])
            for g in range(stride):
                idx = g * 8 * span_l + k1 + span_l * np.arange(8)
                z[idx] = np.fft.fft(z[idx] * w)
        span_l *= 8
    return z
