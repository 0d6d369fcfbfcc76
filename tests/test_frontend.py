"""The C audio front end (host build, via ctypes) against the numpy reference of
docs/frontend.md."""

from __future__ import annotations

import ctypes
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tinydeploy.errors import InputDataError
from tinydeploy.frontend.config import (
    FeatureKind,
    FrontendConfig,
    compute_tables,
    float_preset_plan,
    render_frontend_header,
)
from tinydeploy.frontend.fftplan import emulate_fft, make_plan
from tinydeploy.frontend.hostlib import FIRMWARE_FRONTEND
from tinydeploy.frontend.native import (
    HostFrontend,
    Quant,
    reference_features,
    reference_quantize,
)
from tinydeploy.resources import models_dir


@pytest.fixture(scope="module")
def fe() -> HostFrontend:
    return HostFrontend()


def _speechlike(seed: int, n: int = 16000) -> np.ndarray:
    """Tones with a moving pitch, an envelope and noise: a wide range of energies per frame."""
    rng = np.random.default_rng(seed)
    t = np.arange(n) / 16000
    f0 = rng.uniform(80, 300)
    sig = sum(np.sin(2 * np.pi * f0 * h * t * (1 + 0.2 * t)) / h for h in range(1, 8))
    env = np.exp(-((t - rng.uniform(0.2, 0.8)) ** 2) / 0.02)
    x = 9000 * env * sig + rng.normal(0, rng.uniform(5, 300), n)
    return np.clip(x, -32768, 32767).astype(np.int16)


def test_default_shape_is_the_mlperf_tiny_input() -> None:
    cfg = FrontendConfig()
    assert cfg.shape == (49, 10)


@pytest.mark.parametrize("seed", range(6))
def test_c_mfcc_close_to_numpy_reference(fe: HostFrontend, seed: int) -> None:
    clip = _speechlike(seed)
    c = fe.features(clip).astype(np.float64)
    r = reference_features(clip)
    assert c.shape == r.shape == (49, 10)
    err = np.abs(c - r)
    # float32 through a 1024-point FFT and a log: errors ~1e-5 on values of magnitude ~10
    worst = np.unravel_index(err.argmax(), err.shape)
    assert err.max() < 2e-3, f"max abs error {err.max()} at {worst}"


def test_silence_hits_the_log_floor(fe: HostFrontend) -> None:
    clip = np.zeros(16000, dtype=np.int16)
    c = fe.features(clip)
    # all mel energies are log(1e-6): MFCC 0 = sqrt(40) * ln(1e-6) / sqrt(2) * sqrt(2/40)...
    expected0 = math.sqrt(2 / 40) / math.sqrt(2) * 40 * math.log(1e-6)
    assert c[:, 0] == pytest.approx(expected0, rel=1e-5)
    assert np.abs(c[:, 1:]).max() < 1e-3


def test_full_scale_clip_does_not_overflow(fe: HostFrontend) -> None:
    clip = np.where(np.arange(16000) % 2 == 0, 32767, -32768).astype(np.int16)
    c = fe.features(clip)
    assert np.isfinite(c).all()
    r = reference_features(clip)
    assert np.abs(c - r).max() < 2e-3


def test_log_mel_variant_is_a_config_change() -> None:
    cfg = FrontendConfig(kind=FeatureKind.LOG_MEL)
    fe = HostFrontend(cfg)
    clip = _speechlike(11)
    c = fe.features(clip)
    assert c.shape == (49, 40)
    assert np.abs(c - reference_features(clip, cfg)).max() < 2e-3


def test_512_point_fft_variant() -> None:
    cfg = FrontendConfig(window=480, stride=320, fft=512)
    fe = HostFrontend(cfg)
    clip = _speechlike(5)
    assert fe.features(clip).shape == (cfg.frames, 10) == (49, 10)
    assert np.abs(fe.features(clip) - reference_features(clip, cfg)).max() < 2e-3


def test_normalisation_is_folded_in() -> None:
    base = HostFrontend()
    clip = _speechlike(3)
    raw = base.features(clip).astype(np.float64)
    mean = raw.mean(axis=0)
    std = raw.std(axis=0) + 0.5
    cfg = FrontendConfig().with_normalisation(mean, std)
    norm = HostFrontend(cfg).features(clip)
    want = (raw - np.float32(mean).astype(np.float64)) / np.float32(std).astype(np.float64)
    assert np.abs(norm - want).max() < 1e-4
    assert np.abs(norm - reference_features(clip, cfg)).max() < 2e-3


@settings(max_examples=200, deadline=None)
@given(st.floats(min_value=1e-6, max_value=1e30, allow_nan=False))
def test_logf_matches_math_log(x: float) -> None:
    fe = _FE
    got = fe.logf(x)
    want = math.log(float(np.float32(x)))
    assert abs(got - want) <= 4e-7 * max(1.0, abs(want))


_FE = HostFrontend()


@settings(max_examples=300, deadline=None)
@given(st.lists(st.floats(min_value=-60.0, max_value=60.0, width=32), min_size=1, max_size=50),
       st.floats(min_value=0.015625, max_value=2.0, width=32), st.integers(-128, 127))
def test_quantize_matches_round_half_away(xs: list[float], scale: float, zp: int) -> None:
    x = np.asarray(xs, dtype=np.float32)
    q = Quant(scale, zp)
    got = _FE.quantize(x, q)
    v = x.astype(np.float64) / np.float64(np.float32(scale))
    want = reference_quantize(x, Quant(float(np.float32(scale)), zp))
    # the C code divides in float32: a value within 1 float32 ulp of a .5 tie may go either way
    near_tie = np.abs(np.abs(v) % 1.0 - 0.5) < 1e-5 * np.maximum(1.0, np.abs(v))
    assert ((got == want) | near_tie).all(), (x[got != want], got[got != want])


def test_quantize_exact_ties_round_away_from_zero() -> None:
    x = np.array([0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 300.0, -300.0], dtype=np.float32)
    got = _FE.quantize(x, Quant(1.0, 0))
    assert got.tolist() == [1, -1, 2, -2, 3, -3, 127, -128]
    assert _FE.quantize(x, Quant(1.0, 10)).tolist()[:2] == [11, 9]


def test_features_s8_equals_quantized_float_features(fe: HostFrontend) -> None:
    clips = np.stack([_speechlike(s) for s in range(3)])
    q = Quant(0.37, -5)
    assert (fe.features_s8(clips, q) == fe.quantize(fe.features(clips), q)).all()


def test_wrong_audio_shape_and_dtype_are_input_errors(fe: HostFrontend) -> None:
    with pytest.raises(InputDataError, match="16000"):
        fe.features(np.zeros(15999, dtype=np.int16))
    with pytest.raises(InputDataError, match="int16"):
        fe.features(np.zeros(16000, dtype=np.float32))


@pytest.mark.parametrize("kwargs, word", [
    (dict(fft=1000), "power of two"), (dict(window=2048), "window"),
    (dict(mel_high_hz=9000.0), "mel range"), (dict(n_mfcc=41), "n_mfcc"),
    (dict(mean=(1.0,)), "mean"),
])
def test_bad_config_is_rejected(kwargs: dict, word: str) -> None:
    with pytest.raises(InputDataError, match=word):
        FrontendConfig(**kwargs)


def test_mel_tables_partition_each_bin() -> None:
    t = compute_tables(FrontendConfig())
    total = t.w_lower.astype(np.float64) + t.w_upper
    inner = (t.bin_band >= 0) & (t.bin_band + 1 < 40)
    assert np.allclose(total[inner], 1.0, atol=1e-6)
    assert (t.bin_band[1:] >= t.bin_band[:-1]).all()


def test_header_is_reproducible_and_round_trips_json() -> None:
    cfg = FrontendConfig(kind=FeatureKind.LOG_MEL, mel_bands=32)
    assert render_frontend_header(cfg) == render_frontend_header(cfg)
    assert FrontendConfig.from_json(cfg.to_json()) == cfg


@pytest.mark.parametrize("fft,window", [(16, 16), (32, 31), (64, 40), (128, 77), (512, 480),
                                        (1024, 640), (2048, 1000), (4096, 4000)])
def test_fft_plan_computes_the_fft(fft: int, window: int) -> None:
    """The plan's tables (first-stage radix 2, 4 or 8, digit-reversed gather, windowed slots
    of an even or odd window, one twiddle table for every radix-8 stage) give numpy's FFT of
    the zero-padded windowed frame, when its stages are followed in float64."""
    rng = np.random.default_rng(fft + window)
    win = rng.random(window).astype(np.float32)
    m = fft // 2
    plan = make_plan(fft, win, 1, m - 1, np.zeros(m - 1, np.int64),
                     np.ones(m - 1, np.float32), np.zeros(m - 1, np.float32), 1, False, "test")
    frame = rng.standard_normal(window)
    x = np.zeros(fft)
    x[:window] = frame * win
    want = np.fft.fft(x[0::2] + 1j * x[1::2])
    # float32 twiddles: about 1e-7 relative
    assert np.abs(emulate_fft(plan, frame) - want).max() < 1e-6 * max(1.0, np.abs(want).max())


def test_fft_plan_folds_the_split_halvings_into_the_weights() -> None:
    cfg = FrontendConfig()
    t = compute_tables(cfg)
    plan = float_preset_plan(cfg, t)
    assert plan.bins.shape == (t.bin_last - t.bin_first + 1, 4)
    assert np.array_equal(plan.bins[:, 2], t.w_lower * np.float32(0.25))
    assert np.array_equal(plan.bins[:, 3], t.w_upper * np.float32(0.25))
    assert int(plan.seg_len.sum()) == plan.bins.shape[0]
    assert plan.seg_first + len(plan.seg_len) - 1 == int(t.bin_band.max())


def test_committed_header_matches_committed_config() -> None:
    """firmware/frontend/td_frontend_config.h is rendered from models/kws/frontend.json."""
    cfg_path = models_dir() / "kws" / "frontend.json"
    cfg = FrontendConfig.load(cfg_path) if cfg_path.exists() else FrontendConfig()
    committed = (FIRMWARE_FRONTEND / "td_frontend_config.h").read_text()
    assert committed == render_frontend_header(cfg), \
        "regenerate with: python -m tinydeploy.frontend.config models/kws/frontend.json"


@pytest.mark.parametrize("cfg", [FrontendConfig(), FrontendConfig(window=480, fft=512),
                                 FrontendConfig(window=401, stride=200, fft=512)],
                         ids=["640-1024", "480-512", "odd-401-512"])
def test_a_frame_across_the_rings_end_equals_the_same_samples_in_line(
        cfg: FrontendConfig) -> None:
    """The first FFT stage reads the samples from the caller's ring; a window that wraps
    around its end (at an even or an odd sample, in a ring of even or odd length) gives the
    bits of the same samples in a linear buffer."""
    host = HostFrontend(cfg)
    lib = host._lib
    f32p = ctypes.POINTER(ctypes.c_float)
    i16p = ctypes.POINTER(ctypes.c_int16)
    frame = _speechlike(5)[7000:7000 + cfg.window]
    want = np.empty(cfg.n_out, dtype=np.float32)
    lib.td_frontend_frame_f32(frame.ctypes.data_as(i16p), cfg.window, 0,
                              want.ctypes.data_as(f32p), host._scratch)
    for ring_len in (cfg.window + 1, cfg.window + 320, 2 * cfg.window + 7):
        # every kind of place for the ring's end: inside a first-stage slot, on a slot's
        # boundary (multiples of 64 and 128 samples from the end), at an odd sample
        ends = set(range(1, cfg.window, 29)) | {1, 2, 64, 128, 256, cfg.window - 1}
        for start in [ring_len - e for e in sorted(ends)] + [3]:
            ring = np.zeros(ring_len, dtype=np.int16)
            ring[(start + np.arange(cfg.window)) % ring_len] = frame
            got = np.empty(cfg.n_out, dtype=np.float32)
            lib.td_frontend_frame_f32(ring.ctypes.data_as(i16p), ring_len, start,
                                      got.ctypes.data_as(f32p), host._scratch)
            assert np.array_equal(got.view(np.uint32), want.view(np.uint32)), (ring_len,
                                                                              start)
