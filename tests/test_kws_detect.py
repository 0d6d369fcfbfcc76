"""Posterior smoothing and suppression: the C detector of the kws app (compiled for the host)
on scripted scenarios, and its Python twin against it on random sequences."""

from __future__ import annotations

import ctypes
import subprocess
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tinydeploy.errors import InputDataError
from tinydeploy.kws.stream import Detection, Detector, DetectorConfig
from tinydeploy.resources import firmware_dir

APP = firmware_dir() / "app" / "kws"


@pytest.fixture(scope="module")
def lib() -> ctypes.CDLL:
    return _lib()


class CDetector:
    def __init__(self, lib: ctypes.CDLL, n: int, cfg: DetectorConfig) -> None:
        self.lib = lib
        self.mem = ctypes.create_string_buffer(8192)
        rc = lib.td_kws_detect_init(self.mem, n, cfg.avg_windows, cfg.first_keyword,
                                    cfg.threshold, cfg.suppress_ms)
        if rc != 0:
            raise ValueError("init rejected")
        if cfg.keyword_end and lib.td_kws_detect_set_keywords(self.mem, cfg.first_keyword,
                                                              cfg.keyword_end) != 0:
            raise ValueError("keywords rejected")
        for k, t in enumerate(cfg.class_thresholds):     # as the app does from the header
            if lib.td_kws_detect_set_threshold(self.mem, k, t) != 0:
                raise ValueError("threshold rejected")

    def push(self, probs: np.ndarray, t: int) -> Detection | None:
        p = np.ascontiguousarray(probs, dtype=np.float32)
        lab, score = ctypes.c_uint16(), ctypes.c_float()
        if self.lib.td_kws_detect_push(self.mem, p.ctypes.data_as(ctypes.POINTER(ctypes.c_float)),
                                       t, ctypes.byref(lab), ctypes.byref(score)):
            return Detection(lab.value, score.value, t)
        return None


def _probs(label: int, p: float, n: int = 12) -> np.ndarray:
    v = np.full(n, (1 - p) / (n - 1), dtype=np.float32)
    v[label] = p
    return v


def _run(det: object, seq: list[np.ndarray], step_ms: int = 20) -> list[Detection]:
    out = []
    for i, p in enumerate(seq):
        d = det.push(p, 1000 + i * step_ms)   # type: ignore[attr-defined]
        if d is not None:
            out.append(d)
    return out


@pytest.fixture(params=["c", "twin"])
def make(request: pytest.FixtureRequest, lib: ctypes.CDLL):
    def f(cfg: DetectorConfig, n: int = 12):
        return CDetector(lib, n, cfg) if request.param == "c" else Detector(n, cfg)
    return f


def test_one_word_gives_one_event(make) -> None:
    cfg = DetectorConfig(avg_windows=5, threshold=0.6, suppress_ms=1000)
    quiet = [_probs(0, 0.9)] * 20
    word = [_probs(4, 0.95)] * 30            # 600 ms of "up"
    events = _run(make(cfg), quiet + word + quiet)
    assert len(events) == 1
    ev = events[0]
    assert ev.label == 4
    # the average first reaches 0.6 when 4 of the 5 windows hold the word ((4*0.95 + 0.1/11)/5;
    # 3 of 5 gives 0.57, below the threshold)
    assert ev.time_ms == 1000 + (20 + 3) * 20
    assert ev.score == pytest.approx((4 * 0.95 + 0.1 / 11) / 5, abs=1e-6)


def test_suppression_window_then_second_word(make) -> None:
    cfg = DetectorConfig(avg_windows=3, threshold=0.5, suppress_ms=1000)
    gap = [_probs(1, 0.9)]
    near = [_probs(2, 0.9)] * 10 + gap * 20 + [_probs(3, 0.9)] * 10    # second word +0.6 s
    assert [e.label for e in _run(make(cfg), near)] == [2]
    far = [_probs(2, 0.9)] * 10 + gap * 50 + [_probs(3, 0.9)] * 10     # second word +1.2 s
    ev = _run(make(cfg), far)
    assert [e.label for e in ev] == [2, 3]
    assert ev[1].time_ms - ev[0].time_ms >= 1000


def test_a_long_word_fires_once_then_again_after_release(make) -> None:
    cfg = DetectorConfig(avg_windows=2, threshold=0.6, suppress_ms=500)
    held = [_probs(5, 0.9)] * 150                       # 3 s of the same label
    assert len(_run(make(cfg), held)) == 1
    # a dip to 0.4 (above threshold / 2 = 0.3) does not re-arm the label ...
    dip = [_probs(5, 0.9)] * 40 + [_probs(5, 0.4)] * 10 + [_probs(5, 0.9)] * 40
    assert len(_run(make(cfg), dip)) == 1
    # ... a drop below 0.3 does, once the suppression time has passed
    gap = [_probs(5, 0.9)] * 40 + [_probs(5, 0.1)] * 10 + [_probs(5, 0.9)] * 40
    ev = _run(make(cfg), gap)
    assert [e.label for e in ev] == [5, 5]
    assert ev[1].time_ms - ev[0].time_ms >= 500


def test_silence_and_unknown_never_fire(make) -> None:
    cfg = DetectorConfig(avg_windows=2, threshold=0.5)
    seq = [_probs(0, 1.0)] * 20 + [_probs(1, 1.0)] * 20
    assert _run(make(cfg), seq) == []


def test_a_single_spike_is_smoothed_away(make) -> None:
    cfg = DetectorConfig(avg_windows=8, threshold=0.6)
    seq = [_probs(0, 0.9)] * 10 + [_probs(7, 1.0)] * 2 + [_probs(0, 0.9)] * 10
    assert _run(make(cfg), seq) == []
    cfg1 = DetectorConfig(avg_windows=1, threshold=0.6)
    assert [e.label for e in _run(make(cfg1), seq)] == [7]


def test_no_decision_before_the_history_is_full(make) -> None:
    cfg = DetectorConfig(avg_windows=6, threshold=0.5)
    ev = _run(make(cfg), [_probs(9, 1.0)] * 10)
    assert ev[0].time_ms == 1000 + 5 * 20


def test_bad_parameters_are_rejected(lib: ctypes.CDLL) -> None:
    mem = ctypes.create_string_buffer(8192)
    for n, avg, first in ((0, 4, 0), (17, 4, 2), (12, 0, 2), (12, 17, 2), (12, 4, 12)):
        assert lib.td_kws_detect_init(mem, n, avg, first, 0.5, 1000) == -1
    assert lib.td_kws_detect_init(mem, 12, 16, 2, 0.5, 1000) == 0
    with pytest.raises(InputDataError):
        DetectorConfig(avg_windows=0)
    with pytest.raises(InputDataError):
        Detector(12, DetectorConfig(first_keyword=12))


def test_each_keyword_against_its_own_threshold(make) -> None:
    """Class thresholds: a word the model hears less surely fires at its lower threshold,
    another at the same score does not, and a repeat needs the average below half of the
    word's own threshold."""
    th = [0.9] * 12
    th[5] = 0.6
    cfg = DetectorConfig(avg_windows=1, threshold=0.9, suppress_ms=0,
                         class_thresholds=tuple(th))
    det = make(cfg)
    got = _run(det, [_probs(4, 0.7), _probs(5, 0.7), _probs(5, 0.35), _probs(5, 0.7),
                     _probs(5, 0.25), _probs(5, 0.7), _probs(4, 0.95)], step_ms=100)
    assert [(d.label, d.time_ms) for d in got] == [(5, 1100), (5, 1500), (4, 1600)]


def test_class_thresholds_checked(lib: ctypes.CDLL) -> None:
    mem = ctypes.create_string_buffer(8192)
    assert lib.td_kws_detect_init(mem, 12, 4, 2, 0.5, 1000) == 0
    assert lib.td_kws_detect_set_threshold(mem, 11, 0.7) == 0
    for label, t in ((12, 0.5), (3, -0.1), (3, 1.5), (3, float("nan"))):
        assert lib.td_kws_detect_set_threshold(mem, label, t) == -1
    with pytest.raises(InputDataError, match="class thresholds must be in"):
        DetectorConfig(class_thresholds=(0.5, 1.5))
    with pytest.raises(InputDataError, match="3 class thresholds for a model of 12"):
        Detector(12, DetectorConfig(class_thresholds=(0.5, 0.5, 0.5)))


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 16), st.floats(0.05, 0.95), st.integers(0, 2000), st.integers(2, 12),
       st.integers(0, 2**31), st.booleans())
def test_twin_matches_c_on_random_sequences(avg: int, thr: float, suppress: int, n: int,
                                            seed: int, per_class: bool) -> None:
    lib = _lib()
    rng = np.random.default_rng(seed)
    cfg = DetectorConfig(avg_windows=avg, threshold=thr, suppress_ms=suppress,
                         first_keyword=min(2, n - 1),
                         class_thresholds=tuple(float(np.float32(t)) for t in
                                                rng.uniform(0.05, 0.95, n)) if per_class
                         else ())
    # bursts of confident windows on random labels between noisy stretches
    seq = []
    for _ in range(40):
        lab = int(rng.integers(n))
        for _ in range(int(rng.integers(1, 15))):
            v = rng.dirichlet(np.ones(n) * 0.3).astype(np.float32)
            if rng.random() < 0.6:
                v = (0.2 * v + 0.8 * _probs(lab, 1.0, n)).astype(np.float32)
            seq.append(v)
    step_ms = int(rng.integers(10, 120))
    c = _run(CDetector(lib, n, cfg), seq, step_ms=step_ms)
    py = _run(Detector(n, cfg), seq, step_ms=step_ms)
    assert [(d.label, d.time_ms) for d in c] == [(d.label, d.time_ms) for d in py]
    assert [np.float32(d.score) for d in c] == [np.float32(d.score) for d in py]


_CACHE: dict[str, ctypes.CDLL] = {}


def _lib() -> ctypes.CDLL:
    """td_kws_detect.c built as a host shared library (once per test session)."""
    if "lib" not in _CACHE:
        import tempfile
        out = Path(tempfile.mkdtemp(prefix="td-det-")) / "libdet.so"
        subprocess.run(["gcc", "-std=c99", "-O2", "-Wall", "-Wextra", "-Werror",
                        "-ffp-contract=off", "-fPIC", "-shared", str(APP / "td_kws_detect.c"),
                        "-o", str(out)], check=True)
        lib = ctypes.CDLL(str(out))
        lib.td_kws_detect_init.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_uint32,
                                           ctypes.c_uint32, ctypes.c_float, ctypes.c_uint32]
        lib.td_kws_detect_push.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_float),
                                           ctypes.c_uint32, ctypes.POINTER(ctypes.c_uint16),
                                           ctypes.POINTER(ctypes.c_float)]
        lib.td_kws_detect_set_keywords.argtypes = [ctypes.c_void_p, ctypes.c_uint32,
                                                   ctypes.c_uint32]
        lib.td_kws_detect_set_threshold.argtypes = [ctypes.c_void_p, ctypes.c_uint32,
                                                    ctypes.c_float]
        _CACHE["lib"] = lib
    return _CACHE["lib"]


def test_fillers_last_never_fire(lib: ctypes.CDLL) -> None:
    """MLPerf's label order (ten keywords, then silence and unknown): keywords [0, 10)."""
    cfg = DetectorConfig(avg_windows=2, threshold=0.6, suppress_ms=0, first_keyword=0,
                         keyword_end=10)
    c, py = CDetector(lib, 12, cfg), Detector(12, cfg)
    got_c, got_py = [], []
    for t, label in enumerate([10, 10, 11, 11, 11, 0, 0, 0, 10, 10, 9, 9]):
        got_c.append(c.push(_probs(label, 0.9), 100 * t))
        got_py.append(py.push(_probs(label, 0.9), 100 * t))
    fired = [d.label for d in got_c if d is not None]
    assert fired == [0, 9]
    assert [d.label if d else None for d in got_py] == [d.label if d else None for d in got_c]
    with pytest.raises(ValueError, match="keywords rejected"):
        CDetector(lib, 8, cfg)                      # keyword_end 10 > 8 labels
