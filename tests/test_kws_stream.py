"""Stream construction, scoring (hits, misses, false alarms per hour) and per-frame features."""

from __future__ import annotations

import numpy as np
import pytest

from tinydeploy.errors import InputDataError
from tinydeploy.frontend.native import HostFrontend, Quant
from tinydeploy.kws.stream import Detection, Word, build_stream, score_stream, stream_features
from tinydeploy.train.data import LABELS

YES, NO, UP = LABELS.index("yes"), LABELS.index("no"), LABELS.index("up")


def test_build_stream_places_clips_where_it_says() -> None:
    rng = np.random.default_rng(0)
    clips = rng.integers(-20000, 20000, (5, 16000)).astype(np.int16)
    labels = np.array([YES, 0, NO, 1, UP])          # silence and unknown are distractors
    s = build_stream(clips, labels, seed=3, noise_dbfs=-60)
    assert [w.label for w in s.words] == [YES, NO, UP]
    for w, k in zip(s.words, (0, 2, 4), strict=True):
        start = w.start_ms * 16
        assert w.end_ms - w.start_ms == 1000
        diff = s.audio[start:start + 16000].astype(np.int32) - clips[k]
        assert np.abs(diff).max() < 200           # the clip plus -60 dBFS noise
    assert s.hours == pytest.approx(s.audio.size / 16000 / 3600)
    again = build_stream(clips, labels, seed=3, noise_dbfs=-60)
    assert again.audio.tobytes() == s.audio.tobytes() and again.words == s.words


def test_scoring_hits_misses_false_alarms() -> None:
    words = [Word(YES, 1000, 2000), Word(NO, 5000, 6000), Word(UP, 9000, 10000)]
    dets = [
        Detection(YES, 0.9, 1500),      # hit
        Detection(YES, 0.8, 1900),      # second detection of the same word: false alarm
        Detection(UP, 0.7, 5600),       # wrong label inside 'no': substitution (false alarm)
        Detection(UP, 0.9, 10900),      # hit within the 1 s tolerance after the word
        Detection(NO, 0.9, 30000),      # nowhere near a word
    ]
    s = score_stream(dets, words, hours=0.5, tolerance_ms=1000)
    assert (s.words, s.hits, s.misses, s.false_alarms, s.substitutions) == (3, 2, 1, 3, 1)
    assert s.false_alarms_per_hour == pytest.approx(6.0)
    assert s.hit_rate == pytest.approx(2 / 3)
    assert s.latency_ms == (500, 1900)
    d = s.as_dict()
    assert d["median_latency_ms"] == 1200 and d["misses"] == 1


def test_scoring_tolerance_edges() -> None:
    words = [Word(YES, 1000, 2000)]
    assert score_stream([Detection(YES, 1, 999)], words, 1.0).hits == 0
    assert score_stream([Detection(YES, 1, 1000)], words, 1.0).hits == 1
    assert score_stream([Detection(YES, 1, 2999)], words, 1.0, tolerance_ms=1000).hits == 1
    assert score_stream([Detection(YES, 1, 3000)], words, 1.0, tolerance_ms=1000).hits == 0
    assert score_stream([], words, 1.0).misses == 1
    assert score_stream([], [], 0.0).false_alarms_per_hour == 0.0


def test_two_close_words_each_get_their_own_detection() -> None:
    words = [Word(YES, 1000, 2000), Word(YES, 2500, 3500)]
    s = score_stream([Detection(YES, 1, 1800), Detection(YES, 1, 3200)], words, 1.0)
    assert (s.hits, s.false_alarms) == (2, 0)


def test_stream_features_match_clip_features() -> None:
    fe = HostFrontend()
    rng = np.random.default_rng(5)
    audio = rng.normal(0, 3000, 16000 + 320 * 3).astype(np.int16)
    q = Quant(0.21, 3)
    f = stream_features(audio, fe, q)
    assert f.shape == (49 + 3, 10)
    assert (f[:49] == fe.features_s8(audio[:16000], q)).all()
    assert (f[3:] == fe.features_s8(audio[960:], q)).all()
    with pytest.raises(InputDataError):
        stream_features(audio[:100], fe, q)
