"""The detector replayed on precomputed outputs (examples/kws/replay.py), which every tuned
detector and every published curve rests on, against the device's detector twin; and the
curve script (examples/kws/curve.py) end to end on a tiny corpus."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from test_kws_real import VAL_SPK, make_folder
from test_kws_validate_tuning import _stream

from tinydeploy.kws.stream import DetectorConfig, detect
from tinydeploy.train.data import KEYWORDS

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "examples" / "kws"))

import curve  # noqa: E402
import validate  # noqa: E402


@pytest.mark.parametrize("every,avg,th", [(1, 1, 0.6), (1, 4, 0.9), (2, 8, 0.7),
                                          (3, 3, 0.5), (4, 4, 0.7)])
def test_replay_detects_what_the_twin_detects(every: int, avg: int, th: float) -> None:
    probs, times, _, _ = _stream(7)
    dc = DetectorConfig(avg_windows=avg, threshold=th, suppress_ms=750, infer_every=every)
    fast = validate.fast_detections(probs, times, dc)
    twin = detect(probs[::every], times[::every], dc)
    assert len(twin) > 10
    assert [(d.label, d.time_ms) for d in fast] == [(d.label, d.time_ms) for d in twin]


def test_best_within_takes_the_most_keywords_under_the_limit() -> None:
    grid = [{"hits": 50, "false_alarms": 9, "threshold": 0.5, "avg_windows": 1,
             "infer_every": 1},
            {"hits": 40, "false_alarms": 3, "threshold": 0.8, "avg_windows": 1,
             "infer_every": 1},
            {"hits": 45, "false_alarms": 5, "threshold": 0.7, "avg_windows": 1,
             "infer_every": 1}]
    assert validate.best_within(grid, 5)["hits"] == 45
    assert validate.best_within(grid, 9)["hits"] == 50
    assert validate.best_within(grid, 2)["false_alarms"] == 3      # none within: fewest
    # the curve over 2 hours: 1/h allows 2 false alarms (no setting), 2.5/h 5, 5/h 10
    c = validate.curve(grid, 2.0, (1.0, 2.5, 5.0))
    assert c["1"] is None and c["2.5"]["hits"] == 45 and c["5"]["hits"] == 50


def _corpus(root: Path, words: tuple[str, ...]) -> Path:
    return make_folder(root, {w: VAL_SPK for w in words})


def test_curve_on_a_tiny_corpus(tmp_path: Path) -> None:
    folder = _corpus(tmp_path / "sc", (*KEYWORDS, "bed"))
    out = tmp_path / "curve.json"
    assert curve.main([str(folder), "--minutes", "1", "--fa", "0", "60", "600",
                       "--infer-every", "2", "4", "--json", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert doc["stream"]["seed"] == 2 and doc["stream"]["keywords"] > 5
    (m,) = doc["models"].values()
    hits = [m["curve"][k]["hits"] for k in ("0", "60", "600")]
    assert hits == sorted(hits)                         # a looser bound never detects fewer
    for k, bound in (("0", 0), ("60", 1), ("600", 10)):  # 1 minute: 60/h is one alarm
        assert m["curve"][k]["false_alarms"] <= bound
    own = [m["curve_at_shipped_interval"][k]["hits"] for k in ("0", "60", "600")]
    assert all(o <= h for o, h in zip(own, hits, strict=True))    # a subset of the grid
    shipped = m["shipped"]
    assert sum(v["hits"] for v in shipped["per_keyword"].values()) == shipped["hits"]
    assert sum(v["words"] for v in shipped["per_keyword"].values()) == shipped["words"]


def test_curve_refuses_a_corpus_without_every_keyword(tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]
                                                      ) -> None:
    folder = _corpus(tmp_path / "sc", ("yes", "no", "bed"))
    assert curve.main([str(folder), "--minutes", "1"]) == 2
    err = capsys.readouterr().err
    assert "no validation-split clips of up, down" in err and "hint:" in err


def test_curve_refuses_a_missing_model(tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    folder = _corpus(tmp_path / "sc", (*KEYWORDS, "bed"))
    assert curve.main([str(folder), "--model", str(tmp_path / "none.tflite")]) == 2
    assert "none.tflite: no such model" in capsys.readouterr().err
