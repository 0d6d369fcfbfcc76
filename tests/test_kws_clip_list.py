"""The committed list of real training clips (models/kws/training_clips.txt): no clip of a
test-split speaker (the dataset's speaker-hash rule) and none named in the dataset's
official testing_list.txt (v0.02, kept gzipped under tests/data); and the scan that makes
the list deduplicates by content and honours the testing list."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pytest

from tinydeploy.errors import InputDataError
from tinydeploy.kws.wav import write_wav
from tinydeploy.train.data import CLIP, Split, scan_speech_commands, which_set

ROOT = Path(__file__).resolve().parent.parent
CLIP_LIST = ROOT / "models" / "kws" / "training_clips.txt"
TESTING_LIST = ROOT / "tests" / "data" / "speech_commands_testing_list.txt.gz"


def _entries() -> list[tuple[str, str]]:
    rows = [line.split("\t") for line in CLIP_LIST.read_text().splitlines()]
    assert all(len(r) == 2 and r[0] and r[1] for r in rows), "word/file<TAB>source per line"
    return [(r[0], r[1]) for r in rows]


def _testing_list() -> set[str]:
    with gzip.open(TESTING_LIST, "rt") as f:
        return {line.strip() for line in f if line.strip()}


def test_the_testing_list_is_the_official_one() -> None:
    names = _testing_list()
    assert len(names) == 11005 or len(names) == 11004
    # the official list is by the speaker rule: every speaker in it is a test speaker
    assert all(which_set(n) is Split.TEST for n in names)


def test_no_training_clip_is_a_test_speaker_or_on_the_testing_list() -> None:
    entries = _entries()
    assert len(entries) > 10000
    names = [n for n, _ in entries]
    assert len(set(names)) == len(names)
    assert not [n for n in names if which_set(n) is not Split.TRAIN]
    assert not set(names) & _testing_list()


def _clip(seed: int) -> np.ndarray:
    return np.random.default_rng(seed).normal(0, 800, CLIP).astype(np.int16)


def test_scan_drops_content_duplicates_and_listed_clips(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    for d in (a / "yes", b / "yes", b / "no"):
        d.mkdir(parents=True)
    write_wav(a / "yes" / "51055bda_nohash_0.wav", _clip(1))
    write_wav(b / "yes" / "51055bda_nohash_3.wav", _clip(1))      # same audio, other name
    write_wav(b / "no" / "2f813234_nohash_0.wav", _clip(2))
    write_wav(b / "no" / "988e2f9a_nohash_0.wav", _clip(3))
    (b / "PROVENANCE").write_text("repository: someone/clips\ncommit: 0\n")
    listed = tmp_path / "testing_list.txt"
    listed.write_text("no/988e2f9a_nohash_0.wav\n")
    c = scan_speech_commands([a, b], listed)
    assert c.duplicates == 1 and c.listed_test == 1
    assert sorted(f"{x.word}/{x.path.name}" for x in c.clips) == [
        "no/2f813234_nohash_0.wav", "yes/51055bda_nohash_0.wav"]
    assert c.clip_list() == ("no/2f813234_nohash_0.wav\tsomeone/clips\n"
                             "yes/51055bda_nohash_0.wav\ta\n")
    with pytest.raises(InputDataError, match="no such list file"):
        scan_speech_commands([a], tmp_path / "absent.txt")
