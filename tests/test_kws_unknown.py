"""The "unknown" class: synthetic other words from a word list (no keyword, no homophone of
one), and real unknown clips taken from every word alike."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tinydeploy.errors import InputDataError
from tinydeploy.kws.wav import write_wav
from tinydeploy.train.data import (
    CLIP,
    KEYWORDS,
    LABELS,
    UNKNOWN,
    Split,
    SynthConfig,
    generate_other_words,
    scan_speech_commands,
)
from tinydeploy.train.kws import MixConfig, mix_jobs

ROOT = Path(__file__).resolve().parent.parent
WORDS = ROOT / "examples" / "kws" / "other_words.txt"


def test_the_committed_word_list_holds_no_keyword_or_homophone() -> None:
    words = WORDS.read_text().split()
    assert len(words) >= 2000 and len(set(words)) == len(words)
    assert not set(words) & set(KEYWORDS)
    assert not set(words) & {"know", "write", "rite", "wright"}      # "no", "right"
    assert {"dog", "learn", "house", "yet", "stock", "often"} <= set(words)


def test_other_words_are_unknown_training_clips() -> None:
    pytest.importorskip("shutil").which("espeak-ng") or pytest.skip("no espeak-ng")
    cfg = SynthConfig(per_class=10, seed=3, workers=1)
    ds = generate_other_words(cfg, ["dog", "learn", "house"], 4)
    assert ds.audio.shape == (4, CLIP)
    assert set(ds.labels.tolist()) == {LABELS.index(UNKNOWN)}
    assert set(ds.split.tolist()) == {int(Split.TRAIN)}
    assert all(np.abs(a).max() > 100 for a in ds.audio)     # speech, not silence
    again = generate_other_words(cfg, ["dog", "learn", "house"], 4)
    assert np.array_equal(ds.audio, again.audio)


def test_other_words_refuse_a_keyword() -> None:
    with pytest.raises(InputDataError, match="keywords or non-words"):
        generate_other_words(SynthConfig(per_class=10, workers=1), ["dog", "yes"], 2)


def test_real_unknown_clips_come_from_every_word(tmp_path: Path) -> None:
    root = tmp_path / "real"
    rng = np.random.default_rng(0)
    # train-split speakers (dataset rule): 51055bda 2f813234 988e2f9a
    spk = ["51055bda", "2f813234", "988e2f9a"]
    for word, n in (("bed", 30), ("dog", 2), ("wow", 2)):
        (root / word).mkdir(parents=True)
        for i in range(n):
            write_wav(root / word / f"{spk[i % 3]}_nohash_{i}.wav",
                      rng.normal(0, 500, CLIP).astype(np.int16))
    corpus = scan_speech_commands([root])
    jobs = mix_jobs(None, corpus, MixConfig(unknown_real_max=8))
    words = sorted(corpus.clips[j.ref].word for j in jobs if j.kind == "real")
    assert words.count("dog") == 2 and words.count("wow") == 2 and words.count("bed") == 4
