"""`tinydeploy quantize --frontend kws`: calibrate a keyword model on a folder of WAV files,
through the same C front end the device runs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tinydeploy.kws.wav import write_wav

pytestmark = pytest.mark.tf


def _tdp(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tinydeploy", *args], capture_output=True,
                          text=True, timeout=600)


@pytest.fixture(scope="module")
def keras_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    import os

    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import tensorflow as tf

    tf.keras.utils.set_random_seed(5)
    L = tf.keras.layers
    inp = L.Input((49, 10, 1), batch_size=1)
    x = L.Conv2D(4, 3, activation="relu")(inp)
    x = L.GlobalAveragePooling2D()(x)
    out = L.Dense(2, activation="softmax")(x)
    path = tmp_path_factory.mktemp("m") / "kws_tiny.keras"
    tf.keras.Model(inp, out).save(path)
    return path


def _wavs(root: Path) -> Path:
    rng = np.random.default_rng(3)
    t = np.arange(16000) / 16000
    for word, f0 in (("yes", 440.0), ("no", 1200.0)):
        (root / word).mkdir(parents=True)
        for k in range(4):
            tone = 8000 * np.sin(2 * np.pi * (f0 + 50 * k) * t) + rng.normal(0, 300, t.size)
            write_wav(root / word / f"{k}.wav", tone.astype(np.int16))
    return root


@pytest.mark.parametrize("frontend", ["kws", "mlperf-kws"])
def test_wav_folder_calibration(keras_model: Path, tmp_path: Path, frontend: str) -> None:
    data = _wavs(tmp_path / "wavs")
    out = tmp_path / "q.tflite"
    r = _tdp("quantize", str(keras_model), "--calibration", str(data), "--frontend", frontend,
             "--labels", "yes,no", "-o", str(out), "--json", "--sqnr-samples", "0")
    assert r.returncode == 0, r.stderr
    rep = json.loads(r.stdout)
    assert rep["calibration_samples"] == 8
    assert rep["evaluated_samples"] == 8 and rep["int8_accuracy"] is not None
    assert rep["input"]["dtype"] == "int8" and rep["input"]["shape"] == [1, 49, 10, 1]
    assert out.exists() and out.read_bytes()[4:8] == b"TFL3"


def test_wav_folder_errors(keras_model: Path, tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    r = _tdp("quantize", str(keras_model), "--calibration", str(empty), "--frontend", "kws",
             "-o", str(tmp_path / "a.tflite"))
    assert r.returncode == 1 and "no .wav files" in r.stderr and "Traceback" not in r.stderr
    data = _wavs(tmp_path / "wavs")
    r = _tdp("quantize", str(keras_model), "--calibration", str(data), "--frontend", "kws",
             "--labels", "yes,maybe", "-o", str(tmp_path / "b.tflite"))
    assert r.returncode == 1 and "'no' is not one of the labels" in r.stderr
    assert not (tmp_path / "a.tflite").exists() and not (tmp_path / "b.tflite").exists()
