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


def _keras_16x8_head(tf: object, tmp_path: Path) -> tuple[Path, np.ndarray]:
    """A small Keras CNN whose 16x8 conversion uses the int16 kernels beyond the core ones:
    ZeroPadding2D (PAD), Conv2D with tanh (TANH) and sigmoid (LOGISTIC) activations, Permute
    (TRANSPOSE), Cropping2D (STRIDED_SLICE), Concatenate, Dense with softmax (int16
    SOFTMAX)."""
    k = tf.keras  # type: ignore[attr-defined]
    k.utils.set_random_seed(7)
    inp = k.Input((12, 9, 2))
    a = k.layers.ZeroPadding2D(((1, 0), (0, 2)))(inp)
    a = k.layers.Conv2D(6, 3, strides=2, activation="tanh")(a)
    b = k.layers.Permute((2, 1, 3))(a)
    b = k.layers.Conv2D(4, (2, 3), padding="same", activation="sigmoid")(b)
    c = k.layers.Cropping2D(((1, 0), (0, 1)))(b)
    d = k.layers.Cropping2D(((0, 1), (1, 0)))(b)
    e = k.layers.Concatenate()([c, d])
    o = k.layers.Dense(5, activation="softmax")(k.layers.Flatten()(e))
    model = k.Model(inp, o)
    src = tmp_path / "head.keras"
    model.save(src)
    x = np.random.default_rng(1).normal(0, 1, (64, 12, 9, 2)).astype(np.float32)
    return src, x


@pytest.fixture(scope="module")
def head16(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tf = pytest.importorskip("tensorflow", reason="TensorFlow (quantize extra) not installed")
    from tinydeploy.quantize.quantizer import quantize_model

    tmp = tmp_path_factory.mktemp("head16")
    src, x = _keras_16x8_head(tf, tmp)
    model = tf.keras.models.load_model(src)
    y = model.predict(x, verbose=0).argmax(axis=1)
    out = tmp / "head_16x8.tflite"
    quantize_model(src, (x, y), out, activations="int16", sqnr_samples=0)
    return out


def test_keras_16x8_head_uses_the_int16_kernels(head16: Path) -> None:
    from tinydeploy.kernels.registry import select_kernels
    from tinydeploy.model.loader import load_tflite

    symbols = {c.variant.symbol for c in select_kernels(load_tflite(head16)).choices
               if not c.variant.alias}
    assert {"td_pad_s16_ref", "td_tanh_s16_ref", "td_transpose_s16_ref", "td_logistic_s16_ref",
            "td_strided_slice_s16_ref", "td_concatenation_s16_ref",
            "td_softmax_s16_ref"} <= symbols, symbols


@pytest.mark.target
@pytest.mark.parametrize("board_id", ["mps2-an386", "microbit-v1"])
def test_keras_16x8_head_validates_bit_exact_on_m4_and_m0(head16: Path, board_id: str,
                                                         tmp_path: Path) -> None:
    """`quantize --activations int16` of the Keras model, built for the Cortex-M4F and the
    Cortex-M0 and validated against tflite-micro over the serial protocol."""
    from tinydeploy.testing.device import validate_on_board

    report = validate_on_board(head16, board_id, tmp_path / "fw", 4, seed=8)
    assert report.bit_exact_cases == report.cases == 4, report.first_mismatch
