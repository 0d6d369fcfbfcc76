"""Keyword models on the micro-speech front end, deployed with the kws app on an emulated
Cortex-M4F (QEMU mps2-an386).

- A model the project builds itself with TFLM micro_speech's shape (int8 1 x 1960 input,
  RESHAPE to 49 x 40, DEPTHWISE_CONV_2D 10 x 8 stride 2 x 8, FULLY_CONNECTED 4, SOFTMAX) runs in
  CI: the device's detections on two streams (the second restarts the stream, so the front
  end's noise state must be reset) equal the host simulation's (the C front end and
  tflite-micro).
- TFLM's own ``micro_speech_quantized.tflite`` and test clips (tensorflow/tflite-micro,
  ``tensorflow/lite/micro/examples/micro_speech/``), when present: each clip, streamed as its
  own stream, is labelled as TFLM's micro_speech_test expects (yes, no, silence, silence), and
  as TensorFlow's op + tflite-micro label it.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from test_frontend_micro import micro_speech_dir, read_pcm

from tinydeploy.boards import get_board
from tinydeploy.flash.runner import Firmware
from tinydeploy.frontend.presets import resolve_frontend
from tinydeploy.kws.device import build_kws_firmware
from tinydeploy.kws.stream import DetectorConfig, simulate_stream, stream_to_device
from tinydeploy.link.connect import connect
from tinydeploy.model import ir
from tinydeploy.testing.builder import ModelBuilder

pytestmark = pytest.mark.target

# The scale at which TFLM's fixed int8 mapping (v * 256 / 666 - 128) is a quantization of the
# float features v / 25.6 its models were trained on.
INPUT_SCALE = 666.0 / 256.0 / 25.6
TFLM_EXPECTS = {"yes_1000ms": "yes", "no_1000ms": "no", "silence_1000ms": "silence",
                "noise_1000ms": "silence"}
LABELS = ["silence", "unknown", "yes", "no"]


def micro_speech_shaped_model(seed: int = 5) -> bytes:
    """micro_speech's architecture with weights that make channel energy matter: the first
    label follows quiet input, the others low, middle and high bands."""
    rng = np.random.default_rng(seed)
    b = ModelBuilder("micro-speech shaped")
    x = b.tensor("input", (1, 1960), scale=INPUT_SCALE, zero_point=-128)
    shape = b.tensor("shape", (4,), "int32", data=[1, 49, 40, 1])
    r = b.tensor("reshaped", (1, 49, 40, 1), scale=INPUT_SCALE, zero_point=-128)
    b.op("RESHAPE", [x, shape], [r], ir.ReshapeOptions((1, 49, 40, 1)))
    ws = rng.uniform(0.002, 0.01, 8)
    w = b.tensor("dw/w", (1, 10, 8, 8), scale=ws, axis=3,
                 data=rng.integers(-40, 100, (1, 10, 8, 8)).astype(np.int8))
    bias = b.tensor("dw/b", (8,), "int32", scale=ws * INPUT_SCALE,
                    data=rng.integers(-3000, 0, 8).astype(np.int32))
    d = b.tensor("dw", (1, 25, 20, 8), scale=0.08, zero_point=-128)
    b.op("DEPTHWISE_CONV_2D", [r, w, bias], [d],
         ir.DepthwiseConv2DOptions(ir.Padding.SAME, 2, 2, 8, ir.Activation.RELU), version=3)
    fw = np.zeros((4, 25, 20, 8), dtype=np.int8)
    fw[0] = -20                                         # "silence": against all energy
    for k, cols in ((1, slice(0, 7)), (2, slice(7, 14)), (3, slice(14, 20))):
        fw[k, :, cols, :] = rng.integers(5, 40, fw[k, :, cols, :].shape)
    f = b.tensor("fc/w", (4, 4000), scale=0.00004, data=fw.reshape(4, 4000))
    fb = b.tensor("fc/b", (4,), "int32", scale=0.00004 * 0.08,
                  data=np.asarray([60000, -20000, -20000, -20000], dtype=np.int32))
    fc = b.tensor("fc", (1, 4), scale=0.2, zero_point=0)
    b.op("FULLY_CONNECTED", [d, f, fb], [fc], ir.FullyConnectedOptions(), version=4)
    sm = b.tensor("softmax", (1, 4), scale=1 / 256, zero_point=-128)
    b.op("SOFTMAX", [fc], [sm], ir.SoftmaxOptions(1.0))
    return b.build(inputs=[x], outputs=[sm])


def _tones(seconds: float, seed: int) -> np.ndarray:
    """Bursts of low, middle and high tones with quiet gaps."""
    rng = np.random.default_rng(seed)
    n = int(seconds * 16000)
    t = np.arange(n) / 16000
    out = rng.normal(0, 30, n)
    for start in np.arange(0.1, seconds - 0.2, 0.4):
        f = rng.choice([300.0, 1500.0, 5000.0])
        m = (t >= start) & (t < start + 0.3)
        out[m] += 8000 * np.sin(2 * np.pi * f * t[m])
    return np.clip(out, -32768, 32767).astype(np.int16)


def _device_events(model: Path, choice, det: DetectorConfig, streams: list[np.ndarray],  # noqa: ANN001
                   out: Path) -> list[list[tuple[int, int, np.float32]]]:
    build_kws_firmware(model, get_board("mps2-an386"), out, det, choice)
    got = []
    with connect(Firmware.from_build_dir(out), timeout=600) as conn:
        assert conn.info.info.app == "kws"
        for audio in streams:
            res = stream_to_device(conn.session, audio)
            got.append([(d.label, d.time_ms, np.float32(d.score)) for d in res.detections])
    return got


def test_project_model_device_equals_simulation(tmp_path: Path) -> None:
    model = tmp_path / "micro_shaped.tflite"
    model.write_bytes(micro_speech_shaped_model())
    choice = resolve_frontend("micro-speech", model)
    det = DetectorConfig(avg_windows=2, threshold=0.45, suppress_ms=200, first_keyword=1,
                         infer_every=3)
    streams = [_tones(2.0, seed=1), _tones(1.6, seed=2)]
    want = [[(d.label, d.time_ms, np.float32(d.score))
             for d in simulate_stream(a, model.read_bytes(), choice, det)] for a in streams]
    got = _device_events(model, choice, det, streams, tmp_path / "fw")
    assert got == want
    assert sum(len(w) for w in want) >= 3                   # the tones are heard at all
    assert len({e[0] for w in want for e in w}) >= 2        # and told apart


def test_tflm_micro_speech_labels_tflm_test_clips(tmp_path: Path) -> None:
    d = micro_speech_dir()
    if d is None or not (d / "micro_speech_quantized.tflite").exists():
        pytest.skip("TFLM micro_speech model and clips not found: put tflite-micro's "
                    "tensorflow/lite/micro/examples/micro_speech/models/"
                    "micro_speech_quantized.tflite and testdata/*.wav in "
                    ".cache/public-models/micro_speech or set TD_MICRO_SPEECH_DIR")
    model = d / "micro_speech_quantized.tflite"
    choice = resolve_frontend("micro-speech", model)
    # TFLM's test takes the arg max of one window's output: every label may win, no smoothing
    det = DetectorConfig(avg_windows=1, threshold=0.0, first_keyword=0)
    names = list(TFLM_EXPECTS)
    clips = [read_pcm(d / f"{n}.wav") for n in names]
    got = _device_events(model, choice, det, clips, tmp_path / "fw")
    labels = [[LABELS[e[0]] for e in events] for events in got]
    assert labels == [[TFLM_EXPECTS[n]] for n in names]
    sim = [[(e.label, e.time_ms, np.float32(e.score))
            for e in simulate_stream(c, model.read_bytes(), choice, det)] for c in clips]
    assert got == sim


@pytest.mark.tf
def test_tflm_model_on_tensorflow_features_agrees() -> None:
    """The reference pipeline: TensorFlow's op, TFLM's int8 mapping, tflite-micro."""
    d = micro_speech_dir()
    if d is None or not (d / "micro_speech_quantized.tflite").exists():
        pytest.skip("TFLM micro_speech model and clips not found (see the test above)")
    from tflite_micro.python.tflite_micro import runtime

    from tinydeploy.frontend.micro import tf_features, to_int8

    it = runtime.Interpreter.from_bytes((d / "micro_speech_quantized.tflite").read_bytes())
    for name, want in TFLM_EXPECTS.items():
        x = to_int8(tf_features(read_pcm(d / f"{name}.wav")))
        it.set_input(x.reshape(1, 1960), 0)
        it.invoke()
        assert LABELS[int(np.argmax(it.get_output(0)))] == want, name
