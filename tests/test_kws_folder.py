"""`kws score --data FOLDER`: a folder of labelled WAV clips scored clip by clip (simulated and
on the emulated Cortex-M4), with any front-end preset; MLPerf Tiny's reference model when it
is in the cache."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tinydeploy.kws.folder import FolderScore, collect_folder
from tinydeploy.kws.wav import write_wav

ROOT = Path(__file__).resolve().parent.parent
MODEL = ROOT / "models" / "kws" / "dscnn_int8.tflite"      # the project's own 49 x 10 model
LABELS = (ROOT / "models" / "kws" / "labels.txt").read_text().split()
REF_MODEL = Path(os.environ.get("TINYDEPLOY_KWS_REF_MODEL",
                                ROOT / ".cache" / "public-models" / "kws" /
                                "kws_ref_model.tflite"))
REF_LABELS = ["down", "go", "left", "no", "off", "on", "right", "stop", "up", "yes",
              "silence", "unknown"]
HAVE_QEMU = shutil.which("qemu-system-arm") is not None and \
    shutil.which("arm-none-eabi-gcc") is not None


def _tdp(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tinydeploy", *args], capture_output=True,
                          text=True, timeout=600)


def _clip(rng: np.random.Generator, f0: float, n: int = 16000) -> np.ndarray:
    t = np.arange(n) / 16000.0
    env = np.exp(-((t - 0.5) / 0.2) ** 2)
    x = sum(np.sin(2 * np.pi * f0 * h * t) / h for h in range(1, 12)) * env * 8000
    return (x + rng.normal(0, 50, n)).clip(-32768, 32767).astype(np.int16)


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """yes/ (3), no/ (2), _silence_/ (1), marvin/ (2, a word no model knows), and
    _background_noise_/ (1 long file)."""
    root = tmp_path_factory.mktemp("clips")
    rng = np.random.default_rng(4)
    layout = {"yes": 3, "no": 2, "_silence_": 1, "marvin": 2}
    for word, n in layout.items():
        (root / word).mkdir()
        for i in range(n):
            x = _clip(rng, 120 + 40 * i, 12000 + 3000 * i) if word != "_silence_" else \
                np.zeros(16000, np.int16)
            write_wav(root / word / f"c{i}.wav", x)
    (root / "_background_noise_").mkdir()
    write_wav(root / "_background_noise_" / "noise.wav", rng.normal(0, 300, 48000)
              .astype(np.int16))
    return root


def test_collect_maps_folders_to_labels(folder: Path) -> None:
    lf = collect_folder(folder, LABELS)
    assert len(lf.files) == 8
    assert lf.as_unknown == {"marvin": 2}
    assert lf.skipped == {"_background_noise_": 1}
    names = [LABELS[i] for i in lf.labels]
    assert names.count("_unknown_") == 2 and names.count("_silence_") == 1
    # no "unknown" label: the unknown word is skipped instead, and reported
    lf2 = collect_folder(folder, ["yes", "no", "Silence"])
    assert lf2.skipped == {"_background_noise_": 1, "marvin": 2} and len(lf2.files) == 6


def test_score_confusion_sums() -> None:
    s = FolderScore(("a", "b", "c"), np.array([0, 0, 1, 2, 2]), np.array([0, 1, 1, 2, 0]))
    m = s.confusion()
    assert m.sum() == s.n == 5 and list(m.sum(axis=1)) == [2, 1, 2]
    assert np.trace(m) / s.n == pytest.approx(s.top1) == 0.6
    assert s.per_class() == {"a": {"n": 2, "top1": 0.5}, "b": {"n": 1, "top1": 1.0},
                             "c": {"n": 2, "top1": 0.5}}


@pytest.mark.parametrize("frontend", ["models/kws/frontend.json", "mlperf-kws"])
def test_score_folder_simulated_json(folder: Path, frontend: str) -> None:
    r = _tdp("kws", "score", "--data", str(folder), "--model", str(MODEL), "--frontend",
             str(ROOT / frontend) if frontend.endswith(".json") else frontend,
             "--simulate", "--json")
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["n"] == 8 and 0.0 <= d["top1"] <= 1.0
    m = np.asarray(d["confusion"]["matrix"])
    assert d["confusion"]["labels"] == LABELS and m.shape == (12, 12)
    assert m.sum() == 8 and np.trace(m) / 8 == pytest.approx(d["top1"])
    assert sum(c["n"] for c in d["per_class"].values()) == 8
    assert d["as_unknown"] == {"marvin": 2} and d["skipped"] == {"_background_noise_": 1}
    assert "marvin" in r.stderr                       # reported


def test_score_folder_bad_input(folder: Path, tmp_path: Path) -> None:
    r = _tdp("kws", "score", "--data", str(tmp_path), "--model", str(MODEL), "--simulate")
    assert r.returncode == 1 and "no WAV clips" in r.stderr and "Traceback" not in r.stderr
    bad = tmp_path / "five.txt"
    bad.write_text("a\nb\nc\nd\ne\n")
    r = _tdp("kws", "score", "--data", str(folder), "--model", str(MODEL), "--simulate",
             "--labels", str(bad))
    assert r.returncode == 1 and "5 labels but" in r.stderr and "12 outputs" in r.stderr


@pytest.mark.skipif(not HAVE_QEMU, reason="needs qemu-system-arm and arm-none-eabi-gcc "
                                          "(scripts/setup.sh installs both)")
def test_device_outputs_equal_simulation(tmp_path: Path) -> None:
    """The mlperf-kws kws app on the emulated M4: each clip's model output bytes equal the
    host simulation's (C front end with the window fix-up, tflite-micro)."""
    from tinydeploy.boards import get_board
    from tinydeploy.flash.runner import Firmware
    from tinydeploy.frontend.presets import resolve_frontend
    from tinydeploy.kws.device import build_kws_firmware
    from tinydeploy.kws.folder import device_predictions, host_predictions
    from tinydeploy.kws.stream import DetectorConfig
    from tinydeploy.link.connect import connect

    rng = np.random.default_rng(9)
    late = np.concatenate([_clip(rng, 150)[:6000] // 20, _clip(rng, 200)[6000:]])
    clips = np.stack([_clip(rng, 140), late.astype(np.int16), np.zeros(16000, np.int16)])
    choice = resolve_frontend("mlperf-kws")
    build_kws_firmware(MODEL, get_board("mps2-an386"), tmp_path / "fw", DetectorConfig(),
                       choice)
    with connect(Firmware.from_build_dir(tmp_path / "fw")) as conn:
        _, dev = device_predictions(conn.session, clips)
    _, sim = host_predictions(clips, MODEL.read_bytes(), choice)
    assert np.array_equal(dev, sim)


@pytest.mark.tf
@pytest.mark.skipif(not REF_MODEL.exists(),
                    reason=f"MLPerf Tiny's kws_ref_model.tflite is not at {REF_MODEL} (fetch "
                           "it from github.com/mlcommons/tiny, benchmark/training/"
                           "keyword_spotting/trained_models/, or set "
                           "TINYDEPLOY_KWS_REF_MODEL); the same pipeline runs above on the "
                           "project's own 49 x 10 model")
def test_mlperf_reference_model_matches_tf_pipeline(folder: Path, tmp_path: Path) -> None:
    labels = tmp_path / "labels.txt"
    labels.write_text("\n".join(REF_LABELS) + "\n")
    r = _tdp("kws", "score", "--data", str(folder), "--model", str(REF_MODEL), "--frontend",
             "mlperf-kws", "--labels", str(labels), "--simulate", "--reference", "--json")
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["n"] == 8 and d["agreement"] >= 7 / 8
