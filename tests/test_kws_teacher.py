"""Distillation: a teacher model's posteriors as soft training targets, and clips spliced
from two real clips that only the teacher labels."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pytest
from test_kws_real import TEST_SPK, TRAIN_SPK, VAL_SPK, make_folder

from tinydeploy.errors import InputDataError
from tinydeploy.train.data import LABELS, UNKNOWN, Split, scan_speech_commands
from tinydeploy.train.kws import (
    FeatureCache,
    MixConfig,
    _Job,
    _targets,
    build_feature_cache,
    mix_jobs,
    real_training_clips,
)
from tinydeploy.train.teacher import Teacher

ROOT = Path(__file__).resolve().parent.parent
SHIPPED = ROOT / "models" / "kws"


def test_targets_mix_label_and_teacher_by_kind() -> None:
    t = np.full((4, len(LABELS)), 1 / len(LABELS), np.float32)
    jobs = [_Job("real", 0, 2, True), _Job("synth", 0, 3, True), _Job("noise", 0, 0, True),
            _Job("splice", 0, 1, True, 1)]
    soft = _targets(jobs, t, 0.25)
    assert np.allclose(soft.sum(axis=1), 1.0)
    assert soft[0, 2] == pytest.approx(0.75 + 0.25 / len(LABELS))     # real: mixed
    assert soft[1, 3] == 1.0 and soft[1].sum() == 1.0                  # synthetic: its label
    assert soft[2, 0] == pytest.approx(0.75 + 0.25 / len(LABELS))     # real noise: mixed
    assert np.allclose(soft[3], t[3])                                  # splice: teacher only


def test_soft_targets_round_trip_and_a_rewrite_without_them_drops_them(tmp_path: Path
                                                                          ) -> None:
    rng = np.random.default_rng(1)
    feats = rng.normal(0, 1, (12, 49, 10)).astype(np.float32)
    labels = rng.integers(0, len(LABELS), 12)
    soft = rng.dirichlet(np.ones(len(LABELS)), 12).astype(np.float32)
    cache = FeatureCache.write(tmp_path, iter([(feats[:5], labels[:5], np.ones(5), soft[:5]),
                                               (feats[5:], labels[5:], np.ones(7), soft[5:])]),
                               12, (49, 10))
    idx = np.array([7, 0, 11])
    got = cache.targets(idx)
    assert got.dtype == np.float32 and got.shape == (3, len(LABELS))
    assert np.allclose(got, soft[idx], atol=1e-3)
    assert np.array_equal(FeatureCache(tmp_path).targets(idx), got)     # reopened
    cache = FeatureCache.write(tmp_path, iter([(feats, labels, np.ones(12), None)]), 12,
                               (49, 10))
    assert cache.soft is None and not (tmp_path / "soft.npy").exists()
    assert np.array_equal(cache.targets(idx), labels[idx])


def _corpus(tmp_path: Path):   # noqa: ANN202 - a RealCorpus
    words = {w: TRAIN_SPK + VAL_SPK + TEST_SPK for w in ("yes", "up", "bed")}
    return scan_speech_commands([make_folder(tmp_path / "real", words)])


def test_splices_pair_two_training_clips(tmp_path: Path) -> None:
    corpus = _corpus(tmp_path)
    jobs = mix_jobs(None, corpus, MixConfig(splices=25, silence_real=0))
    splices = [j for j in jobs if j.kind == "splice"]
    assert len(splices) == 25
    for j in splices:
        assert j.ref != j.ref2 and j.label == LABELS.index(UNKNOWN) and j.augment
        assert corpus.clips[j.ref].split is Split.TRAIN
        assert corpus.clips[j.ref2].split is Split.TRAIN
    assert len({(j.ref, j.ref2) for j in splices}) > 5                 # not one pair
    assert not any(j.kind == "splice" for j in mix_jobs(None, corpus, MixConfig()))


def test_splices_without_a_teacher_are_refused(tmp_path: Path) -> None:
    from tinydeploy.frontend.config import FrontendConfig

    with pytest.raises(InputDataError, match="need a teacher") as err:
        build_feature_cache(tmp_path / "c", None, _corpus(tmp_path), MixConfig(splices=3),
                            FrontendConfig(), log=lambda _m: None)
    assert err.value.hint is not None and "--teacher" in err.value.hint


def test_teacher_checks_its_labels_weight_and_front_end(tmp_path: Path) -> None:
    model = SHIPPED / "dscnn_int8.tflite"
    with pytest.raises(InputDataError, match="not this project's"):
        Teacher.load(model, "tinydeploy", " ".join(LABELS[:-1]), 0.5)
    with pytest.raises(InputDataError, match="outside"):
        Teacher.load(model, "tinydeploy", " ".join(LABELS), 1.5)
    with pytest.raises(InputDataError):
        Teacher.load(model, "no-such-preset", " ".join(LABELS), 0.5)
    with pytest.raises(InputDataError, match="cannot read"):
        Teacher.load(tmp_path / "missing.tflite", "tinydeploy", " ".join(LABELS), 0.5)


@pytest.mark.tf
def test_teacher_posteriors_follow_its_label_order(tmp_path: Path) -> None:
    """The shipped model as a teacher: its posteriors agree with tflite-micro's argmax,
    and naming its outputs in another order moves the columns, not the judgement."""
    from tinydeploy.frontend.config import FrontendConfig
    from tinydeploy.frontend.native import HostFrontend, input_quant_of
    from tinydeploy.train.data import read_clip
    from tinydeploy.train.kws import int8_predict

    corpus = _corpus(tmp_path)
    audio = np.stack([read_clip(c.path) for c in corpus.clips])
    model = (SHIPPED / "dscnn_int8.tflite").read_bytes()
    fe = str(SHIPPED / "frontend.json")
    p = Teacher(model, fe, LABELS).probs(audio)
    assert p.shape == (len(audio), len(LABELS)) and np.allclose(p.sum(axis=1), 1.0)
    host = HostFrontend(FrontendConfig.load(SHIPPED / "frontend.json"))
    micro = int8_predict(model, host.features_s8(audio, input_quant_of(model)))
    assert np.array_equal(p.argmax(axis=1), micro)
    # a teacher whose outputs are named in reverse: column i of its output is LABELS[-1-i]
    rev = Teacher(model, fe, tuple(reversed(LABELS))).probs(audio)
    assert np.allclose(rev, p[:, ::-1])


@pytest.mark.tf
def test_training_with_a_teacher_end_to_end(tmp_path: Path) -> None:
    """Soft targets and splices through the whole pipeline: the cache keeps a target per
    row (a distribution), splices are labelled by the teacher, and training runs on them."""
    from tinydeploy.train.kws import TrainConfig, train_kws_mix

    corpus = _corpus(tmp_path)
    teacher = Teacher((SHIPPED / "dscnn_int8.tflite").read_bytes(),
                      str(SHIPPED / "frontend.json"), LABELS, weight=0.5)
    mix = MixConfig(real_copies=2, scarce_target=4, unknown_real_max=2, silence_real=3,
                    splices=6)
    logs: list[str] = []
    res = train_kws_mix(None, corpus, tmp_path / "out", tmp_path / "cache",
                        TrainConfig(epochs=1, calibration_samples=10, batch=8), mix,
                        log=logs.append, teacher=teacher)
    cache = FeatureCache(tmp_path / "cache")
    assert cache.soft is not None and cache.soft.shape == (len(cache), len(LABELS))
    assert np.allclose(cache.soft.astype(np.float32).sum(axis=1), 1.0, atol=1e-2)
    spliced = cache.real == 2
    assert int(spliced.sum()) == 6
    assert np.array_equal(cache.y[spliced], cache.soft[spliced].argmax(axis=1))
    real = cache.real == 1        # a real clip's own label keeps at least half its target
    assert (cache.soft[real, cache.y[real]] >= 0.5 - 1e-3).all()
    assert any("6 spliced from two" in m and "soft targets" in m for m in logs), logs
    assert res.real is not None and res.model_path.exists()
    from tinydeploy.train.kws import mix_readme_text

    text = mix_readme_text(res, "cmd", None, TrainConfig(epochs=1), mix, corpus, teacher)
    assert "Distillation" in text and "at 50%" in text and "6 more clips" in text
    assert hashlib.sha256(teacher.model).hexdigest() in text


@pytest.mark.parametrize("extra, message", [
    (["--splices", "5"], "--splices 5 needs a teacher"),
    (["--splices", "-1", "--teacher", "t.tflite"], "a count of clips"),
    (["--teacher", "no-such.tflite"], "cannot read the teacher model"),
    (["--teacher", str(SHIPPED / "dscnn_int8.tflite"), "--teacher-labels", "yes no"],
     "are not this project's 12 labels"),
])
def test_cli_train_refuses_a_bad_teacher_in_one_line(tmp_path: Path, extra: list[str],
                                                     message: str) -> None:
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-m", "tinydeploy", "kws", "train", "-o",
                          str(tmp_path / "m"), *extra], capture_output=True, text=True,
                         timeout=120, cwd=tmp_path)
    assert out.returncode == 1 and "Traceback" not in out.stderr, out.stderr
    assert message in out.stderr
    assert not (tmp_path / "m").exists()


@pytest.mark.parametrize("mix", [MixConfig(real_limit=(("up", 1),), splices=60, silence_real=0,
                                           scarce_target=6),
                                 MixConfig(exclude_real=("up",), splices=60, silence_real=0)])
def test_a_limited_word_keeps_only_its_chosen_clips_everywhere(tmp_path: Path,
                                                               mix: MixConfig) -> None:
    corpus = _corpus(tmp_path)
    up = {i for i, c in enumerate(corpus.clips) if c.word == "up" and c.split is Split.TRAIN}
    assert len(up) == len(TRAIN_SPK)
    jobs = mix_jobs(None, corpus, mix)
    used = {j.ref for j in jobs if j.kind in ("real", "splice")} | {
        j.ref2 for j in jobs if j.kind == "splice"}
    kept = used & up
    assert len(kept) == mix.limits()["up"]
    real_up = [j for j in jobs if j.kind == "real" and j.label == LABELS.index("up")]
    assert len(real_up) == (6 if kept else 0)        # the one clip, repeated to the target
    yes = [j for j in jobs if j.kind == "real" and j.label == LABELS.index("yes")]
    assert len({j.ref for j in yes}) == len(TRAIN_SPK)              # other words untouched
    assert jobs == mix_jobs(None, corpus, mix)                      # the same seeded choice
    assert corpus.clip_list(clips=[c for _, c in real_training_clips(corpus, mix)]).count(
        "up/") == len(kept)


def _train_script():  # noqa: ANN202 - the examples/kws/train.py module
    import sys

    sys.path.insert(0, str(ROOT / "examples" / "kws"))
    import train

    return train


@pytest.mark.parametrize("limit, message", [
    ("upp=15", "no real clips of upp in the --speech-commands folders"),
    ("up=x", "expected WORD=N, e.g. up=15"),
])
def test_a_bad_real_limit_is_a_usage_error(tmp_path: Path, limit: str, message: str,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    folder = make_folder(tmp_path / "real", {"up": TRAIN_SPK})
    with pytest.raises(SystemExit) as ex:
        _train_script().main(["--speech-commands", str(folder), "--without", "synth",
                           "--real-limit", limit, "--out", str(tmp_path / "m")])
    assert ex.value.code == 2 and message in capsys.readouterr().err
    assert not (tmp_path / "m").exists()


@pytest.mark.parametrize("extra, message", [
    (["--other-extra", "words.txt"], "go together"),
    (["--other-extra-count", "5"], "go together"),
    (["--other-words", "words.txt", "--other-extra", "none.txt", "--other-extra-count", "5"],
     "--other-extra none.txt: no such word list"),
    (["--other-extra", "words.txt", "--other-extra-count", "5"], "give both"),
    (["--other-speech", "sp"], "go together"),
    (["--other-speech-count", "5"], "go together"),
    (["--other-speech", "sp", "--other-speech-count", "5"], "needs --speech-commands"),
    (["--unknown-word-target", "-3"], "are counts (0 or more)"),
])
def test_a_bad_other_word_option_is_a_usage_error(tmp_path: Path, extra: list[str],
                                                message: str,
                                                capsys: pytest.CaptureFixture[str],
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "words.txt").write_text("dog\nhouse\n")
    with pytest.raises(SystemExit) as ex:
        _train_script().main([*extra, "--out", str(tmp_path / "m")])
    assert ex.value.code == 2 and message in capsys.readouterr().err
    assert not (tmp_path / "m").exists()
