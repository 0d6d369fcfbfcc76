"""`tinydeploy quantize --activations int16`: TensorFlow's 16x8 mode end to end on a small
Keras CNN: int16 input/output, int64 bias, and the host kernels bit-exact with tflite-micro."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.tf


def test_keras_cnn_quantized_16x8_runs_bit_exact(tmp_path: Path) -> None:
    tf = pytest.importorskip("tensorflow", reason="TensorFlow (quantize extra) not installed")
    from tinydeploy.kernels.registry import select_kernels
    from tinydeploy.model.ir import DType
    from tinydeploy.model.loader import load_tflite
    from tinydeploy.oracle import run_oracle
    from tinydeploy.quantize.quantizer import quantize_model
    from tinydeploy.testing.harness import run_graph_host

    tf.keras.utils.set_random_seed(5)
    model = tf.keras.Sequential([
        tf.keras.Input((10, 8, 2)),
        tf.keras.layers.Conv2D(6, 3, strides=2, padding="same", activation="relu"),
        tf.keras.layers.Conv2D(4, 3, padding="same"),
        tf.keras.layers.Flatten(),
        tf.keras.layers.Dense(5),
    ])
    src = tmp_path / "cnn.keras"
    model.save(src)
    x = np.random.default_rng(1).normal(0, 1, (64, 10, 8, 2)).astype(np.float32)
    y = model.predict(x, verbose=0).argmax(axis=1)
    out = tmp_path / "cnn_16x8.tflite"
    report = quantize_model(src, (x, y), out, activations="int16", sqnr_samples=0)
    assert any("16x8" in n for n in report.notes)
    assert report.int8_accuracy is not None and report.int8_accuracy >= 0.9
    graph = load_tflite(out)
    assert graph.inputs[0].dtype is DType.INT16 and graph.outputs[0].dtype is DType.INT16
    assert any(t.dtype is DType.INT64 and t.is_constant for t in graph.tensors)
    symbols = {c.variant.symbol for c in select_kernels(graph).choices if not c.variant.alias}
    assert {"td_conv2d_s16_ref", "td_fully_connected_s16_ref"} <= symbols, symbols
    rng = np.random.default_rng(2)
    for _ in range(3):
        q = rng.integers(-32768, 32768, graph.inputs[0].shape).astype(np.int16)
        np.testing.assert_array_equal(run_graph_host(graph, [q])[0],
                                      run_oracle(out.read_bytes(), [q])[0])
