"""The "unknown" class beyond the dataset's clips taken once each: rarer other words
repeated, and other real speech, 1 s windows of recordings whose transcripts name no keyword
(examples/kws/collect_speech.py cuts them; the trainer mixes a seeded share of them in, with
their own label)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest
from test_kws_real import TEST_SPK, TRAIN_SPK, VAL_SPK, make_folder
from test_kws_teacher import _train_script

from tinydeploy.errors import InputDataError
from tinydeploy.kws.wav import encode_wav
from tinydeploy.train.data import LABELS, UNKNOWN, scan_speech_commands, scan_speech_windows
from tinydeploy.train.kws import FeatureCache, MixConfig, build_feature_cache, mix_jobs


def _windows(root: Path, n: int, seed: int = 0) -> Path:
    rng = np.random.default_rng(seed)
    for i in range(n):
        d = root / f"spk{i % 3}"
        d.mkdir(parents=True, exist_ok=True)
        x = np.round(rng.normal(0, 2000, 16000)).astype(np.int16)
        (d / f"utt{i}_0.wav").write_bytes(encode_wav(x))
    return root


def _corpus(tmp_path: Path, windows: int):   # noqa: ANN202 - a RealCorpus
    words = {w: TRAIN_SPK + VAL_SPK + TEST_SPK for w in ("yes", "bed")}
    corpus = scan_speech_commands([make_folder(tmp_path / "real", words)])
    if not windows:
        return corpus
    return dataclasses.replace(corpus,
                               speech=scan_speech_windows([_windows(tmp_path / "sp", windows)]))


def test_windows_are_found_once_each_and_an_empty_folder_is_refused(tmp_path: Path) -> None:
    root = _windows(tmp_path / "sp", 5)
    (root / "copy").mkdir()
    (root / "copy" / "same.wav").write_bytes((root / "spk0" / "utt0_0.wav").read_bytes())
    found = scan_speech_windows([root])
    assert len(found) == 5 and list(found) == sorted(found)
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputDataError, match="no speech windows") as err:
        scan_speech_windows([tmp_path / "empty"])
    assert err.value.hint is not None and "collect_speech.py" in err.value.hint
    with pytest.raises(InputDataError, match="not a directory"):
        scan_speech_windows([tmp_path / "missing"])


@pytest.mark.tf
def test_a_seeded_share_of_windows_trains_as_unknown_with_its_own_label(tmp_path: Path
                                                                           ) -> None:
    from tinydeploy.frontend.config import FrontendConfig
    from tinydeploy.train.teacher import Teacher

    corpus = _corpus(tmp_path, 9)
    mix = MixConfig(other_speech=4, silence_real=0)
    jobs = [j for j in mix_jobs(None, corpus, mix) if j.kind == "speech"]
    assert len(jobs) == 4 and len({j.ref for j in jobs}) == 4
    assert all(j.label == LABELS.index(UNKNOWN) and j.augment for j in jobs)
    assert jobs == [j for j in mix_jobs(None, corpus, mix) if j.kind == "speech"]
    other = [j for j in mix_jobs(None, corpus, dataclasses.replace(mix, seed=1))
             if j.kind == "speech"]
    assert {j.ref for j in other} != {j.ref for j in jobs}             # a seeded choice
    everything = [j for j in mix_jobs(None, corpus, dataclasses.replace(mix, other_speech=99))
                  if j.kind == "speech"]
    assert len(everything) == 9                                        # no more than there are
    assert not any(j.kind == "speech" for j in mix_jobs(None, corpus, MixConfig()))

    shipped = Path(__file__).resolve().parent.parent / "models" / "kws"
    teacher = Teacher((shipped / "dscnn_int8.tflite").read_bytes(),
                      str(shipped / "frontend.json"), LABELS, weight=0.5)
    cache = build_feature_cache(tmp_path / "cache", None, corpus, mix, FrontendConfig(),
                                log=lambda _m: None, teacher=teacher)
    rows = cache.real == 3
    assert int(rows.sum()) == 4
    assert (cache.y[rows] == LABELS.index(UNKNOWN)).all()
    assert cache.soft is not None
    assert np.allclose(cache.soft[rows, LABELS.index(UNKNOWN)], 1.0)  # not the teacher's
    assert (cache.soft[cache.real == 1].max(axis=1) < 1.0).any()        # real clips: mixed
    assert len(FeatureCache(tmp_path / "cache")) == len(cache)


def test_other_windows_change_the_cache_key(tmp_path: Path) -> None:
    from tinydeploy.frontend.config import FrontendConfig

    corpus = _corpus(tmp_path, 4)
    mix = MixConfig(other_speech=4, silence_real=0)
    build_feature_cache(tmp_path / "cache", None, corpus, mix, FrontendConfig(),
                        log=lambda _m: None)
    key = (tmp_path / "cache" / "key.txt").read_text()
    more = dataclasses.replace(corpus, speech=corpus.speech[:3] + (corpus.speech[0],))
    logs: list[str] = []
    build_feature_cache(tmp_path / "cache", None, more, mix, FrontendConfig(),
                        log=logs.append)
    assert (tmp_path / "cache" / "key.txt").read_text() != key
    assert not any("cached" in m for m in logs)
    assert corpus.file_list_sha256() != dataclasses.replace(corpus, speech=()).file_list_sha256()


def test_rarer_other_words_are_repeated_up_to_the_target(tmp_path: Path) -> None:
    corpus = scan_speech_commands([make_folder(tmp_path / "real", {
        "bed": TRAIN_SPK + VAL_SPK, "dog": TRAIN_SPK[:1] + VAL_SPK, "yes": TRAIN_SPK})])
    unknown = LABELS.index(UNKNOWN)

    def uses(mix: MixConfig) -> dict[str, list[bool]]:
        out: dict[str, list[bool]] = {}
        for j in mix_jobs(None, corpus, mix):
            if j.kind == "real" and j.label == unknown:
                out.setdefault(corpus.clips[j.ref].word, []).append(j.augment)
        return out

    once = uses(MixConfig(silence_real=0))
    assert {w: len(v) for w, v in once.items()} == {"bed": 3, "dog": 1}
    more = uses(MixConfig(silence_real=0, unknown_word_target=5))
    assert {w: len(v) for w, v in more.items()} == {"bed": 6, "dog": 5}   # 3 x 2, 1 x 5
    assert all(more["dog"]) and all(more["bed"])                          # freshly augmented
    yes = [j for j in mix_jobs(None, corpus, MixConfig(silence_real=0, unknown_word_target=5))
           if j.label == LABELS.index("yes")]
    assert len(yes) == len([j for j in mix_jobs(None, corpus, MixConfig(silence_real=0))
                            if j.label == LABELS.index("yes")])            # keywords untouched


def test_an_empty_speech_folder_fails_in_one_line(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    folder = make_folder(tmp_path / "real", {"up": TRAIN_SPK})
    (tmp_path / "sp").mkdir()
    code = _train_script().main(["--speech-commands", str(folder), "--without", "synth",
                                 "--other-speech", str(tmp_path / "sp"),
                                 "--other-speech-count", "5", "--out", str(tmp_path / "m")])
    err = capsys.readouterr().err
    assert code == 2 and "no speech windows" in err and "Traceback" not in err
    assert not (tmp_path / "m").exists()


# ---- examples/kws/collect_speech.py ----------------------------------------------------------

def _collector():  # noqa: ANN202 - the examples/kws/collect_speech.py module
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples" / "kws"))
    import collect_speech

    return collect_speech


@pytest.mark.parametrize("word, said", [
    ("yes", True), ("No", True), ("know", True), ("write", True), ("going", True),
    ("stopped", True), ("leftover", True), ("downstairs", True), ("yesterday", True),
    ("off", True), ("up", True), ("on", True),
    ("once", False), ("only", False), ("upon", False), ("nothing", False), ("of", False),
    ("one", False), ("dog", False), ("house", False), ("goat", False),
])
def test_which_words_sound_like_a_keyword(word: str, said: bool) -> None:
    assert _collector().sounds_like_a_keyword(word) is said


def test_transcripts_are_read_from_every_layout() -> None:
    c = _collector()
    blobs = {
        "LibriSpeech/84/121123/84-121123.trans.txt":
            b"84-121123-0000 GO DO YOU HEAR\n84-121123-0001 BUT IN LESS THAN FIVE MINUTES\n",
        "txt/p225/p225_001.txt": b"Please call Stella.\n",
        "txt/p225/notes.txt": b"not a transcript",
        "cv/validated.tsv": b"client_id\tpath\tsentence\nab\tclips/x_1.mp3\tThe cat sat.\n",
    }
    got = c.transcripts(blobs, {"p225_001", "84-121123-0000", "84-121123-0001"})
    assert got["84-121123-0000"] == "GO DO YOU HEAR"
    assert got["p225_001"] == "Please call Stella."
    assert got["x_1"] == "The cat sat."
    assert "notes" not in got
    assert not c.keyword_free(got["84-121123-0000"]) and c.keyword_free(got["84-121123-0001"])


def test_windows_hold_speech_not_its_edge_and_never_overlap() -> None:
    c = _collector()
    rng = np.random.default_rng(0)
    x = np.round(rng.normal(0, 3, 16000 * 6)).astype(np.int16)        # 6 s of near silence
    x[16000:24000] = np.round(rng.normal(0, 3000, 8000))               # 0.5 s of "speech"
    x[64000:72000] = np.round(rng.normal(0, 3000, 8000))
    for seed in range(20):
        starts = c.speech_windows(x, 3, np.random.default_rng(seed))
        assert 1 <= len(starts) <= 3 and starts == sorted(starts)
        assert all(b - a >= 16000 for a, b in zip(starts, starts[1:], strict=False))
        for s in starts:
            assert s + 16000 <= x.size
            covered = max(min(s + 16000, b + 8000) - max(s, b) for b in (16000, 64000))
            assert covered >= 0.8 * 8000                                 # a burst, not its edge
    assert c.speech_windows(x[:15000], 2, rng) == []                   # shorter than 1 s


def _git_repo(root: Path, files: dict[str, bytes] | None = None) -> Path:
    import subprocess

    if files is None:
        rng = np.random.default_rng(3)
        files = {
            "corpus/84/84-1.trans.txt": b"84-1-0000 A LONG WAY HOME\n84-1-0001 STOP THERE\n",
        }
        for stem in ("84-1-0000", "84-1-0001"):
            x = np.round(rng.normal(0, 2000, 16000 * 3)).astype(np.int16)
            files[f"corpus/84/{stem}.wav"] = encode_wav(x)
    for rel, data in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t", "PATH": "/usr/bin:/bin"}
    for cmd in (["init", "-q"], ["add", "."], ["commit", "-q", "-m", "data"]):
        subprocess.run(["git", *cmd], cwd=root, check=True, env=env)
    return root / ".git"


def test_collect_cuts_windows_only_from_keyword_free_utterances(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    c = _collector()
    git = _git_repo(tmp_path / "repo")
    out = tmp_path / "windows"
    assert c.main([str(git), str(out), "--per-utterance", "2", "--repo", "o/r",
                   "--licence", "CC BY 4.0"]) == 0
    found = scan_speech_windows([out])
    assert len(found) == 2 and all(p.name.startswith("84-1-0000_") for p in found)
    rows = (out / "windows.tsv").read_text().splitlines()[1:]
    assert len(rows) == 2 and all("corpus/84/84-1-0000.wav" in r for r in rows)
    prov = (out / "PROVENANCE").read_text()
    assert "repository: o/r" in prov and "licence: CC BY 4.0" in prov
    assert "1 of them without a keyword" in capsys.readouterr().err
    # nothing is overwritten: the same folder again is a usage error
    with pytest.raises(SystemExit) as ex:
        c.main([str(git), str(out)])
    assert ex.value.code == 2 and "not empty" in capsys.readouterr().err
    # a part of the tree with no keyword-free transcribed utterance: exit 2, a line, a hint
    code = c.main([str(git), str(tmp_path / "none"), "--under", "corpus/84/84-1-0001"])
    err = capsys.readouterr().err
    assert code == 2 and "no transcribed utterance without a keyword" in err
    assert "Traceback" not in err


def test_flac_without_the_flac_tool_is_a_clear_error(tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str],
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    c = _collector()
    monkeypatch.setattr(c.shutil, "which", lambda _name: None)
    with pytest.raises(InputDataError, match="no 'flac' tool") as err:
        c.decode(b"fLaC", "a/b.flac")
    assert err.value.hint == "apt-get install flac"
    git = _git_repo(tmp_path / "repo", {"a/u1.flac": b"fLaC", "a/u1.txt": b"hello there"})
    assert c.main([str(git), str(tmp_path / "out")]) == 2
    out = capsys.readouterr().err
    assert "no 'flac' tool" in out and "apt-get install flac" in out and "Traceback" not in out
    assert not (tmp_path / "out").exists()
