"""What `examples/kws/validate.py` reports beside the stream: per word of the "unknown" clips,
how many are called a keyword (the words that would ring the doorbell), and the dataset's
published test set read in its own layout."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from tinydeploy.errors import InputDataError
from tinydeploy.kws.wav import write_wav
from tinydeploy.train.data import CLIP, LABELS

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "examples" / "kws"))

import validate  # noqa: E402

UNK, YES, DOWN = LABELS.index("_unknown_"), LABELS.index("yes"), LABELS.index("down")


def test_other_words_counts_which_keywords_each_word_is_called() -> None:
    y = np.array([UNK, UNK, UNK, UNK, UNK, YES])
    pred = np.array([DOWN, DOWN, UNK, 0, YES, YES])
    words = ["dog", "dog", "dog", "bed", "bed", "yes"]
    out = validate.other_words(pred, y, words)
    assert list(out) == ["dog", "bed"]                        # most often called a keyword first
    assert out["dog"] == {"clips": 3, "called_keyword": pytest.approx(2 / 3),
                          "as": {"down": 2}}
    assert out["bed"] == {"clips": 2, "called_keyword": 0.5, "as": {"yes": 1}}
    assert "yes" not in out                                   # keywords are not other words
    line = validate.other_words_line({"other_words": out})
    assert line == "dog 2/3 (down 2), bed 1/2 (yes 1)"
    assert validate.other_words_line({"other_words": {"cat": {"clips": 4, "as": {}}}}) == "none"


def test_word_outside_moves_the_named_share_of_the_word_out_of_the_window() -> None:
    x = np.zeros(CLIP, np.int16)
    x[3200:9600] = 8000                                    # the word: 200-600 ms
    assert validate.word_extent(validate.word_outside(x, 0.0, "start")) == (4800, 11200)
    first = validate.word_outside(x, 0.25, "start")        # a quarter before the window
    assert validate.word_extent(first) == (0, 4800) and first.sum() == 0.75 * x.sum()
    last = validate.word_outside(x, 0.5, "end")            # half after it
    assert validate.word_extent(last) == (CLIP - 3200, CLIP) and last.sum() == 0.5 * x.sum()
    with pytest.raises(ValueError, match="side"):
        validate.word_outside(x, 0.5, "middle")


def _test_set(root: Path, skip: str = "") -> Path:
    rng = np.random.default_rng(0)
    for lab in LABELS:
        if lab == skip:
            continue
        (root / lab).mkdir(parents=True)
        names = (["dog_0a1b2c3d_nohash_0.wav", "house_0a1b2c3d_nohash_1.wav"]
                 if lab == "_unknown_" else ["0a1b2c3d_nohash_0.wav"])
        for n in names:
            write_wav(root / lab / n, rng.normal(0, 300, CLIP).astype(np.int16))
    return root


def test_the_canonical_test_set_is_read_with_each_clips_word(tmp_path: Path) -> None:
    audio, y, words = validate.read_files(validate.canonical_test_files(_test_set(tmp_path / "t")))
    assert audio.shape == (len(LABELS) + 1, CLIP)
    assert sorted(y.tolist()) == sorted(list(range(len(LABELS))) + [UNK])
    assert sorted(w for w, lab in zip(words, y, strict=True) if lab == UNK) == ["dog", "house"]
    assert all(w == LABELS[lab] for w, lab in zip(words, y, strict=True) if lab != UNK)


def test_a_test_set_without_a_label_folder_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InputDataError, match="no folder for off"):
        validate.canonical_test_files(_test_set(tmp_path / "t", skip="off"))
    with pytest.raises(InputDataError, match="no such folder"):
        validate.canonical_test_files(tmp_path / "none")
    empty = tmp_path / "empty"
    for lab in LABELS:
        (empty / lab).mkdir(parents=True)
    with pytest.raises(InputDataError, match="no .wav clips"):
        validate.canonical_test_files(empty)


def test_a_bad_canonical_folder_fails_before_any_stream(tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]
                                                        ) -> None:
    assert validate.main([str(tmp_path), "--canonical-test", str(tmp_path / "none")]) == 2
    err = capsys.readouterr().err
    assert "none: no such folder" in err and "hint:" in err


def test_validate_reports_every_set_of_clips_end_to_end(tmp_path: Path) -> None:
    import json

    from test_kws_real import TEST_SPK, VAL_SPK, make_folder

    from tinydeploy.train.data import KEYWORDS

    folder = make_folder(tmp_path / "sc", {w: VAL_SPK + TEST_SPK for w in (*KEYWORDS, "bed")})
    out = tmp_path / "v.json"
    assert validate.main([str(folder), "--no-tune", "--check-minutes", "0.5", "--test-report",
                          "--canonical-test", str(_test_set(tmp_path / "t")),
                          "--partial-words", "--json", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert doc["validation_clips"]["other_words"]["bed"]["clips"] == 1
    assert doc["test_split_clips"]["other_words"]["bed"]["clips"] == 1
    canon = doc["canonical_test"]
    assert set(canon["other_words"]) == {"dog", "house"}
    partial = doc["partial_words"]
    assert len(partial) == 1 + 2 * len(validate.PARTIAL) and "first 40 % outside" in partial
    assert all(0 <= v["right_keyword"] <= v["any_keyword"] <= 1 for v in partial.values())
    assert sum(v["clips"] for v in canon["per_class"].values()) == len(LABELS) + 1
    shipped = doc["stream_shipped"]
    assert shipped["words"] == doc["stream"]["keywords"]
    for part in ("per_keyword", "per_snr_db"):          # every keyword in one row of each
        assert sum(v["words"] for v in shipped[part].values()) == shipped["words"]
        assert sum(v["hits"] for v in shipped[part].values()) == shipped["hits"]
