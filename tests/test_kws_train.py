"""The training pipeline on a tiny synthetic set: a full-INT8 DS-CNN with the right ops and
shapes, its files, and reproducibility of the features it trains on (TensorFlow needed)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tinydeploy.frontend.config import FrontendConfig
from tinydeploy.model.loader import load_tflite
from tinydeploy.train.data import LABELS, Dataset, Split, SynthConfig, generate_synthetic
from tinydeploy.train.kws import TrainConfig, make_features, readme_text, train_kws

pytestmark = pytest.mark.tf

SPEAKERS = ("en+m3", "en-us+f2", "en-gb-x-rp+m1", "en-029+f4", "en-us-nyc+m7", "en+croak",
            "en-gb-scotland+f1", "en-us+whisper", "en+m2", "en-us+f1")


@pytest.fixture(scope="module")
def tiny() -> Dataset:
    return generate_synthetic(SynthConfig(per_class=10, seed=3, workers=2), SPEAKERS)


def test_features_are_normalised_on_the_training_split(tiny: Dataset) -> None:
    cfg, feats = make_features(tiny)
    train = feats[tiny.split == int(Split.TRAIN)].astype(np.float64)
    assert feats.shape == (len(tiny), 49, 10)
    assert np.abs(train.mean(axis=(0, 1))).max() < 1e-3
    assert np.abs(train.std(axis=(0, 1)) - 1).max() < 1e-3
    assert FrontendConfig.from_json(cfg.to_json()) == cfg


def test_train_writes_an_int8_dscnn(tiny: Dataset, tmp_path: Path) -> None:
    res = train_kws(tiny, tmp_path, TrainConfig(epochs=1, calibration_samples=20),
                    log=lambda m: None)
    g = load_tflite(res.model_path)
    ops = [op.opcode for op in g.operators]
    assert ops.count("DEPTHWISE_CONV_2D") == 4 and ops.count("CONV_2D") == 5
    assert not {"SHAPE", "STRIDED_SLICE", "PACK", "DELEGATE"} & set(ops)
    (inp,), (out,) = g.inputs, g.outputs
    assert inp.shape == (1, 49, 10, 1) and out.shape == (1, len(LABELS))
    assert inp.dtype.name.lower() == "int8" and out.dtype.name.lower() == "int8"
    assert (tmp_path / "labels.txt").read_text().split() == list(LABELS)
    assert FrontendConfig.load(tmp_path / "frontend.json") == res.frontend
    for split in ("validation", "test"):
        assert 0.0 <= res.int8_accuracy[split] <= 1.0
    text = readme_text(res, "cmd", SynthConfig(per_class=10), TrainConfig(epochs=1))
    assert res.sha256 in text and "| test (unseen speakers) |" in text
