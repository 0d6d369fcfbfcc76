"""What `tinydeploy kws` tells its user: a result even with no detection, detections
attributed to the file they came from, per-clip scores, build folders per model."""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tinydeploy.commands.kws import _kws_output, attribute
from tinydeploy.kws.wav import write_wav
from tinydeploy.resources import models_dir

MODEL = models_dir() / "kws" / "dscnn_int8.tflite"


def test_stream_with_no_detection_says_so(tmp_path: Path) -> None:
    w = tmp_path / "silence_1000ms.wav"
    write_wav(w, np.zeros(16000, np.int16))
    out = subprocess.run([sys.executable, "-m", "tinydeploy", "kws", "stream", str(w),
                          "--simulate"], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "0 detections in 1.0 s of audio" in out.stdout, out.stdout


def test_a_late_detection_is_attributed_to_the_file_that_held_the_word() -> None:
    """yes_1000ms.wav then silence_1000ms.wav: the detection fires 130 ms into the second
    file, but the window it judged was mostly the first file's."""
    names = ["yes_1000ms.wav", "silence_1000ms.wav"]
    offsets = [0, 16000, 32000]
    assert attribute(1130, offsets, names) == "yes_1000ms.wav +1130 ms"
    assert attribute(1700, offsets, names) == "silence_1000ms.wav +700 ms"
    assert attribute(400, offsets, names) == "yes_1000ms.wav +400 ms"


def test_kws_builds_are_named_after_the_model() -> None:
    a = argparse.Namespace(model=Path("models/a/kws_ref_model.tflite"), emulate=False)
    b = argparse.Namespace(model=Path("models/kws/dscnn_int8.tflite"), emulate=True)
    assert _kws_output(a, "nucleo-f401re") == Path("build/kws_ref_model-nucleo-f401re-kws")
    assert _kws_output(b, "nucleo-f401re") == Path(
        "build/dscnn_int8-nucleo-f401re-emulated-kws")


def test_score_json_has_one_entry_per_clip(tmp_path: Path) -> None:
    labels = (MODEL.parent / "labels.txt").read_text().split()
    for word in ("yes", "no"):
        (tmp_path / word).mkdir()
        write_wav(tmp_path / word / "a.wav", np.zeros(16000, np.int16))
    out = subprocess.run([sys.executable, "-m", "tinydeploy", "kws", "score", "--data",
                          str(tmp_path), "--simulate", "--json"],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    clips = doc["clips"]
    assert len(clips) == doc["n"] == 2
    assert {Path(c["file"]).parent.name for c in clips} == {"yes", "no"}
    for c in clips:
        assert c["label"] == Path(c["file"]).parent.name
        assert c["predicted"] in labels and 0.0 <= c["score"] <= 1.0


@pytest.mark.tf
def test_score_reference_keeps_tensorflow_quiet(tmp_path: Path) -> None:
    """`--reference` with the mlperf-kws front end runs TensorFlow's ops (tf.signal): its
    figures join the JSON, and
    TensorFlow's C++ and absl start-up lines (oneDNN notices, `I0000`/`E0000` lines) stay
    off the command's output."""
    for word in ("yes", "no"):
        (tmp_path / word).mkdir()
        write_wav(tmp_path / word / "a.wav", np.zeros(16000, np.int16))
    env = {k: v for k, v in os.environ.items()
           if k not in ("TF_CPP_MIN_LOG_LEVEL", "ABSL_MIN_LOG_LEVEL")}
    out = subprocess.run([sys.executable, "-m", "tinydeploy", "kws", "score", "--data",
                          str(tmp_path), "--simulate", "--reference", "--frontend", "mlperf-kws",
                          "--json"],
                         capture_output=True, text=True, timeout=600, env=env)
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert 0.0 <= doc["reference_top1"] <= 1.0 and 0.0 <= doc["agreement"] <= 1.0
    noise = [ln for ln in out.stderr.splitlines()
             if re.match(r"[IWEF]\d{4} ", ln) or "oneDNN" in ln or "cpu_feature_guard" in ln
             or "absl::InitializeLog" in ln]
    assert not noise, noise


def test_a_models_detector_json_sets_the_defaults(tmp_path: Path) -> None:
    """The detector a model was tuned with travels with it: detector.json beside the model
    replaces the defaults it names, the command line overrides it, and a damaged file is a
    clear error."""
    from tinydeploy.errors import InputDataError
    from tinydeploy.kws.device import render_kws_header
    from tinydeploy.kws.stream import DetectorConfig, model_detector

    for shipped in (MODEL, models_dir() / "kws-stream" / "dscnn_stream_int8.tflite"):
        doc = json.loads((shipped.parent / "detector.json").read_text())
        d = model_detector(shipped)
        assert (d.threshold, d.avg_windows, d.suppress_ms, d.infer_every) == tuple(
            doc[k] for k in ("threshold", "avg_windows", "suppress_ms", "infer_every"))
        names = (shipped.parent / "labels.txt").read_text().split()
        per = doc.get("class_thresholds", {})
        assert d.class_thresholds == (tuple(per.get(n, d.threshold) for n in names)
                                      if per else ())
    m = tmp_path / "m.tflite"
    m.write_bytes(MODEL.read_bytes())
    (tmp_path / "labels.txt").write_text((MODEL.parent / "labels.txt").read_text())
    (tmp_path / "frontend.json").write_text((MODEL.parent / "frontend.json").read_text())
    for bad, why in (('{"threshold": 2}', "threshold must be in (0, 1]"),
                     ('{"avg_windows": 1.5}', "avg_windows must be a whole number"),
                     ('{"window": 3}', "expected an object with some of"),
                     ("[1]", "expected an object"), ("{", "not a JSON detector file")):
        (tmp_path / "detector.json").write_text(bad)
        with pytest.raises(InputDataError, match=re.escape(why)):
            model_detector(m)
    (tmp_path / "detector.json").unlink()
    assert model_detector(m) == DetectorConfig()          # no file: the defaults
    (tmp_path / "detector.json").write_text(
        '{"threshold": 0.9, "class_thresholds": {"off": 0.7, "go": 0.8}}')
    d = model_detector(m)
    names = (MODEL.parent / "labels.txt").read_text().split()
    assert d.class_thresholds == tuple({"off": 0.7, "go": 0.8}.get(n, 0.9) for n in names)
    assert 'TD_KWS_CLASS_THRESHOLDS {' in render_kws_header(d)
    assert "CLASS_THRESHOLDS" not in render_kws_header(DetectorConfig())
    for bad, why in (('{"class_thresholds": {"dog": 0.5}}', "does not have: dog"),
                     ('{"class_thresholds": {"on": 1.5}}', "thresholds in (0, 1]"),
                     ('{"class_thresholds": [0.5]}', "must map label names")):
        (tmp_path / "detector.json").write_text(bad)
        with pytest.raises(InputDataError, match=re.escape(why)):
            model_detector(m)
    (tmp_path / "detector.json").write_text('{"infer_every": 3, "threshold": 0.9}')
    audio = tmp_path / "s.wav"
    write_wav(audio, np.zeros(16000, np.int16))
    run = [sys.executable, "-m", "tinydeploy", "kws", "stream", str(audio), "--simulate",
           "--model", str(m)]
    out = subprocess.run(run, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "an inference every 3 frames" in out.stdout
    out = subprocess.run(run + ["--infer-every", "5"], capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0 and "an inference every 5 frames" in out.stdout, out.stderr
    (tmp_path / "detector.json").write_text('{"threshold": "high"}')
    out = subprocess.run(run, capture_output=True, text=True, timeout=300)
    assert out.returncode == 1 and "threshold must be a number" in out.stderr
    assert "Traceback" not in out.stderr
