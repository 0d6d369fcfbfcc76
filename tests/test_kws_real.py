"""Real recordings in the Speech Commands layout: the dataset's split rule, gathering clips
from several folders (test-split speakers left out), augmentation, the on-disk feature
cache, and the mixed real + synthetic training pipeline end to end on a tiny folder."""

from __future__ import annotations

import hashlib
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from tinydeploy.frontend.config import FrontendConfig
from tinydeploy.kws.wav import write_wav
from tinydeploy.train.augment import (
    NONE,
    AugmentConfig,
    augment_clip,
    room_impulse,
    spec_augment,
    word_extent,
)
from tinydeploy.train.data import (
    CLIP,
    LABELS,
    RealCorpus,
    Split,
    SynthConfig,
    generate_synthetic,
    scan_speech_commands,
    split_noise,
    which_set,
)

# Percentages by TF's rule, (sha1(speaker) mod 2**27) * 100 / (2**27 - 1), worked out once
# for these speakers: 439c84f4 1.232, 6a27a9bf 1.410 (< 10: validation), 563aa4e6 13.094,
# 97f4c236 14.779, cfbedff9 15.228 (< 20: test), 51055bda 88.655, 2f813234 44.488,
# 988e2f9a 99.926 (training).
SPLITS = {"439c84f4": Split.VALIDATION, "6a27a9bf": Split.VALIDATION,
          "563aa4e6": Split.TEST, "97f4c236": Split.TEST, "cfbedff9": Split.TEST,
          "51055bda": Split.TRAIN, "2f813234": Split.TRAIN, "988e2f9a": Split.TRAIN}


@pytest.mark.parametrize("speaker", sorted(SPLITS))
def test_split_rule_matches_the_dataset(speaker: str) -> None:
    assert which_set(f"yes/{speaker}_nohash_0.wav") is SPLITS[speaker]
    assert which_set(f"{speaker}_nohash_7.wav") is SPLITS[speaker]   # speaker only


def test_split_rule_percentages() -> None:
    # the same rule stated independently; ~10 % / 10 % / 80 % over many names
    names = [hashlib.md5(str(i).encode()).hexdigest()[:8] for i in range(3000)]
    got = np.bincount([int(which_set(f"{n}_nohash_0.wav")) for n in names], minlength=3)
    assert abs(got[Split.VALIDATION] / 3000 - 0.1) < 0.02
    assert abs(got[Split.TEST] / 3000 - 0.1) < 0.02


def _tone(seed: int, f: float) -> np.ndarray:
    rng = np.random.default_rng(seed)
    t = np.arange(CLIP) / 16000
    env = np.exp(-((t - 0.5) / 0.15) ** 2)
    return (6000 * env * np.sin(2 * np.pi * f * t) + rng.normal(0, 100, CLIP)).astype(np.int16)


def make_folder(root: Path, words: dict[str, tuple[str, ...]], noise: bool = True) -> Path:
    for i, (w, speakers) in enumerate(sorted(words.items())):
        (root / w).mkdir(parents=True)
        for j, spk in enumerate(speakers):
            # seeded by the word: the same word in two folders is the same clip, other
            # words are other audio (the scan also deduplicates by content)
            seed = int(hashlib.md5(w.encode()).hexdigest()[:6], 16) + j
            write_wav(root / w / f"{spk}_nohash_0.wav", _tone(seed, 200 + 90 * i))
    if noise:
        (root / "_background_noise_").mkdir()
        rng = np.random.default_rng(0)
        write_wav(root / "_background_noise_" / "hum.wav",
                  (rng.normal(0, 500, 5 * CLIP)).astype(np.int16))
    return root


TRAIN_SPK = ("51055bda", "2f813234", "988e2f9a")
VAL_SPK = ("439c84f4",)
TEST_SPK = ("563aa4e6",)


def test_scan_leaves_out_test_speakers_and_duplicates(tmp_path: Path) -> None:
    a = make_folder(tmp_path / "a", {"yes": TRAIN_SPK + VAL_SPK + TEST_SPK,
                                     "bed": TRAIN_SPK[:1]})
    b = make_folder(tmp_path / "b", {"yes": TRAIN_SPK[:1], "up": TRAIN_SPK + TEST_SPK},
                    noise=False)
    c = scan_speech_commands([a, b])
    assert isinstance(c, RealCorpus)
    assert not any(cl.speaker in TEST_SPK for cl in c.clips)
    assert c.excluded == {"yes": 1, "up": 1} and c.duplicates == 1
    assert c.counts()["yes"] == {"train": 3, "validation": 1, "test_excluded": 1}
    assert {LABELS[cl.label] for cl in c.clips if cl.word == "bed"} == {"_unknown_"}
    assert [p.name for p in c.noise] == ["hum.wav"]
    assert len(c.file_list_sha256()) == 64
    noise = np.arange(100)
    assert split_noise(noise, Split.TRAIN).size == 80
    assert split_noise(noise, Split.VALIDATION).tolist() == list(range(80, 100))
    assert split_noise(noise, Split.TEST).size == 0


def test_scan_rejects_an_empty_folder(tmp_path: Path) -> None:
    from tinydeploy.errors import InputDataError

    make_folder(tmp_path / "x", {"yes": TEST_SPK})
    with pytest.raises(InputDataError, match="outside the test split"):
        scan_speech_commands([tmp_path / "x"])


def test_augmentation_is_seeded_and_switchable() -> None:
    clip = _tone(1, 440)
    cfg = AugmentConfig()
    a = augment_clip(clip, np.random.default_rng(5), cfg, [np.ones(3 * CLIP)])
    b = augment_clip(clip, np.random.default_rng(5), cfg, [np.ones(3 * CLIP)])
    assert a.dtype == np.int16 and a.shape == (CLIP,) and np.array_equal(a, b)
    assert np.array_equal(augment_clip(clip, np.random.default_rng(5), NONE), clip)
    h = room_impulse(np.random.default_rng(0), 0.5)
    assert h.size == 8000 and abs(np.sum(h ** 2) - 1) < 1e-9
    # energy decays: the last 100 ms hold far less than the first 100 ms
    assert np.sum(h[-1600:] ** 2) < 0.05 * np.sum(h[:1600] ** 2)
    x = np.ones((8, 49, 10), np.float32)
    m = spec_augment(x, np.random.default_rng(0), AugmentConfig(p_specaug=1.0))
    assert (m == 0).any() and np.array_equal(x, np.ones_like(x))
    assert np.array_equal(spec_augment(x, np.random.default_rng(0), NONE), x)
    with pytest.raises(ValueError, match="unknown augmentation"):
        cfg.without("echo")


def test_a_shift_that_keeps_the_word_never_cuts_it() -> None:
    """A 300 ms word near the start: a plain +-400 ms shift cuts it off in some copies; with
    ``shift_keeps_word`` every copy holds the whole word (its energy), and the shifts still
    spread over the room the clip has (100 ms before the word; after it 600 ms, of which the
    bound of 400 ms allows all)."""
    clip = np.zeros(CLIP, np.int16)
    clip[1600:6400] = 6000 * np.sin(2 * np.pi * 440 * np.arange(4800) / 16000)  # 100-400 ms
    assert word_extent(clip) == (1600, 6400)
    assert word_extent(np.zeros(CLIP)) == (0, CLIP)
    energy = float(np.sum(clip.astype(np.float64) ** 2))
    plain = replace(NONE, shift_ms=400)
    whole = replace(plain, shift_keeps_word=True)
    rng = np.random.default_rng(3)
    lost_plain = [energy - np.sum(augment_clip(clip, rng, plain).astype(np.float64) ** 2)
                  for _ in range(200)]
    starts = []
    for _ in range(200):
        y = augment_clip(clip, rng, whole)
        assert np.sum(y.astype(np.float64) ** 2) == energy
        starts.append(word_extent(y)[0])
    assert max(lost_plain) > 0.5 * energy
    assert min(starts) < 800 and max(starts) > 1600 + 5000 and max(starts) <= 1600 + 6400


def test_feature_cache_streams_what_it_holds(tmp_path: Path) -> None:
    from tinydeploy.train.kws import FeatureCache

    rng = np.random.default_rng(0)
    feats = rng.normal(3, 5, (37, 49, 10)).astype(np.float32)
    labels = rng.integers(0, 12, 37)
    chunks = ((feats[i:i + 10], labels[i:i + 10], np.zeros(len(labels[i:i + 10])), None)
              for i in range(0, 37, 10))
    cache = FeatureCache.write(tmp_path / "c", chunks, 37, (49, 10))
    mean, std = cache.mean_std(chunk=8)
    f16 = feats.astype(np.float16).astype(np.float64)
    assert np.allclose(mean, f16.mean(axis=(0, 1))) and np.allclose(std, f16.std(axis=(0, 1)))
    x_all, y_all = cache.load(mean, std)
    expect = ((feats.astype(np.float16).astype(np.float32) - mean.astype(np.float32))
              / std.astype(np.float32))
    assert np.array_equal(x_all, expect) and np.array_equal(y_all, labels)
    seen_x, seen_y = [], []
    for xb, yb in cache.batches(8, epoch=2, seed=1, mean=mean, std=std):
        seen_x.append(xb)
        seen_y.append(yb)
    order = cache.order(2, 1)
    assert sorted(order.tolist()) == list(range(37))
    assert np.array_equal(np.concatenate(seen_x), x_all[order])
    assert np.array_equal(np.concatenate(seen_y), y_all[order])


SPEAKERS = ("en+m3", "en-us+f2", "en-gb-x-rp+m1", "en-029+f4", "en-us-nyc+m7", "en+croak",
            "en-gb-scotland+f1", "en-us+whisper", "en+m2", "en-us+f1")


@pytest.mark.tf
def test_mixed_training_end_to_end(tmp_path: Path) -> None:
    from tinydeploy.model.loader import load_tflite
    from tinydeploy.train.kws import MixConfig, TrainConfig, mix_readme_text, train_kws_mix

    words = {w: TRAIN_SPK + VAL_SPK + TEST_SPK for w in ("yes", "up", "bed")}
    root = make_folder(tmp_path / "real", words)
    corpus = scan_speech_commands([root])
    synth = generate_synthetic(SynthConfig(per_class=5, seed=3, workers=1), SPEAKERS)
    mix = MixConfig(real_copies=2, scarce_target=4, unknown_real_max=2, silence_real=3)
    logs: list[str] = []
    res = train_kws_mix(synth, corpus, tmp_path / "out", tmp_path / "cache",
                        TrainConfig(epochs=1, calibration_samples=10, batch=32), mix,
                        log=logs.append)
    # real: yes and up, 3 training speakers, 2 copies each; bed: 2 of 3; 3 noise slices
    assert res.train_counts["yes"]["real"] == 6 and res.train_counts["up"]["real"] == 6
    assert res.train_counts["_unknown_"]["real"] == 2
    assert res.train_counts["_silence_"]["real"] == 3
    n_synth_train = int((synth.split == int(Split.TRAIN)).sum())
    assert sum(v["synthetic"] for v in res.train_counts.values()) == n_synth_train
    assert any("17 from real recordings" in m for m in logs), logs
    assert res.real is not None
    assert res.real.counts["yes"] == 1 and res.real.counts["up"] == 1     # validation only
    assert sum(res.real.counts.values()) == 3 + 0      # 3 clips, silence rounds to 0
    assert 0.0 <= res.real.int8_overall <= 1.0
    g = load_tflite(res.model_path)
    assert g.inputs[0].shape == (1, 49, 10, 1) and g.outputs[0].shape == (1, len(LABELS))
    assert FrontendConfig.load(tmp_path / "out" / "frontend.json") == res.frontend
    text = mix_readme_text(res, "cmd", None, TrainConfig(epochs=1), mix, corpus)
    assert res.sha256 in text and corpus.file_list_sha256() in text
    assert "yes 1" in text                      # test-split clips excluded, per word
    # the cache is reused for the same inputs
    logs.clear()
    train_kws_mix(synth, corpus, tmp_path / "out2", tmp_path / "cache",
                  TrainConfig(epochs=1, calibration_samples=10, batch=32), mix,
                  log=logs.append)
    assert any("(cached" in m for m in logs)


def test_cli_train_bad_input_is_one_line(tmp_path: Path) -> None:
    import subprocess
    import sys

    make_folder(tmp_path / "only-test", {"yes": TEST_SPK})
    out = subprocess.run([sys.executable, "-m", "tinydeploy", "kws", "train",
                          "--speech-commands", str(tmp_path / "only-test"), "-o",
                          str(tmp_path / "m")], capture_output=True, text=True, timeout=120)
    assert out.returncode == 1 and "Traceback" not in out.stderr
    assert "outside the test split" in out.stderr
    out = subprocess.run([sys.executable, "-m", "tinydeploy", "kws", "train",
                          "--speech-commands", str(tmp_path / "nowhere"), "-o",
                          str(tmp_path / "m")], capture_output=True, text=True, timeout=120)
    assert out.returncode == 1 and "nowhere: not a directory" in out.stderr
