"""How `examples/kws/validate.py` chooses the shipped detector: under a false-alarm bound that
holds with confidence (a Poisson upper bound on the tuning stream's count), not only on the
count itself."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest

from tinydeploy.kws.stream import Word
from tinydeploy.train.data import LABELS

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "examples" / "kws"))

import validate  # noqa: E402


@pytest.mark.parametrize(("count", "confidence", "expected"), [
    (0, 0.9, math.log(10)),         # P(0; lam) = exp(-lam) = 0.1
    (0, 0.8, math.log(5)),
    (5, 0.9, 9.2747),               # the chi-square table's 0.5 * chi2(0.9, 12)
])
def test_fa_rate_bound_is_the_poisson_upper_bound(count: int, confidence: float,
                                                  expected: float) -> None:
    assert validate.fa_rate_bound(count, 1.0, confidence) == pytest.approx(expected, rel=1e-4)
    # per hour: the same count over two hours bounds half the rate
    assert validate.fa_rate_bound(count, 2.0, confidence) == pytest.approx(expected / 2,
                                                                           rel=1e-4)


@pytest.mark.parametrize("count", [1, 3, 20, 60])
@pytest.mark.parametrize("confidence", [0.5, 0.8, 0.95])
def test_a_count_this_low_has_the_remaining_probability_at_the_bound(count: int,
                                                                    confidence: float) -> None:
    lam = validate.fa_rate_bound(count, 1.0, confidence)
    cdf = sum(math.exp(-lam) * lam ** i / math.factorial(i) for i in range(count + 1))
    assert cdf == pytest.approx(1.0 - confidence, abs=1e-6)
    assert lam > count


def test_fa_rate_bound_without_confidence_is_the_counted_rate() -> None:
    assert validate.fa_rate_bound(7, 2.0, None) == 3.5
    with pytest.raises(ValueError, match="outside"):
        validate.fa_rate_bound(3, 1.0, 1.0)


@pytest.mark.parametrize(("hours", "confidence"), [(4.0, 0.8), (1.0, 0.9), (2.0, None)])
def test_the_count_limit_is_where_the_bound_crosses(hours: float,
                                                    confidence: float | None) -> None:
    k = validate.fa_count_limit(10.0, hours, confidence)
    assert validate.fa_rate_bound(k, hours, confidence) <= 10.0
    assert validate.fa_rate_bound(k + 1, hours, confidence) > 10.0
    assert validate.fa_count_limit(0.5, 1.0, 0.9) == -1     # not even 0 bounds it (2.3/h)


def _stream(seed: int) -> tuple[np.ndarray, np.ndarray, list[Word], float]:
    """Outputs every 20 ms for 20 minutes: a keyword every 3 s whose own output rises to a
    random peak, and a random keyword bump between words (a would-be false alarm)."""
    rng = np.random.default_rng(seed)
    n = 20 * 60 * 50
    probs = np.full((n, len(LABELS)), 0.02, np.float32)
    probs[:, LABELS.index("_unknown_")] = 0.8
    times = (np.arange(n) * 20 + 1000).astype(np.int64)
    words = []
    for start in range(2000, n * 20 - 3000, 3000):
        lab = int(rng.integers(2, len(LABELS)))
        i = (start + 300 - 1000) // 20
        probs[i:i + 20, lab] = rng.uniform(0.5, 1.0)
        words.append(Word(lab, start, start + 1000))
        j = i + 75                                   # 1.5 s later, between words
        probs[j:j + 20, int(rng.integers(2, len(LABELS)))] = rng.uniform(0.3, 0.95)
    return probs, times, words, n * 20 / 3.6e6


def test_confidence_chooses_a_setting_whose_bound_holds() -> None:
    probs, times, words, hours = _stream(4)
    plain, _ = validate.tune(probs, times, words, hours, 36.0, (1,))
    held, _ = validate.tune(probs, times, words, hours, 36.0, (1,), 0.8)
    assert 0 < plain["false_alarms"] / hours <= 36.0
    assert validate.fa_rate_bound(held["false_alarms"], hours, 0.8) <= 36.0
    # the bound costs false alarms (and so keywords) against the count alone
    assert held["false_alarms"] < plain["false_alarms"]
    assert held["hits"] < plain["hits"]


def test_bad_confidence_is_a_usage_error(tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        validate.main([str(tmp_path), "--fa-confidence", "1.5"])
    assert exc.value.code == 2
    assert "--fa-confidence 1.5 is outside [0, 1)" in capsys.readouterr().err
