"""ONNX import: models built with onnx.helper the way torch.onnx.export writes them (NCHW,
opset 13, Conv + BatchNormalization + Relu + MaxPool, a depthwise Conv via ``group``, a
residual Add, GlobalAveragePool, Flatten, Gemm), converted by onnx2tf, quantized, and one of
them built for the emulated Cortex-M4 and validated bit-exact against tflite-micro.

These tests need the ``onnx`` extra (onnx, onnx2tf and what they import), which
scripts/setup.sh installs: its absence fails them, it is not a skip.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from tinydeploy.errors import ModelError, UnsupportedError
from tinydeploy.quantize.calibration import CalibrationData

onnx = pytest.importorskip("onnx", reason="the onnx extra is not installed: "
                           "pip install 'tinydeploy[onnx]' (scripts/setup.sh does)")


def _cnn(path: Path, opset: int = 13, seed: int = 0, side: int = 12) -> Path:
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(seed)

    def init(name: str, arr: np.ndarray) -> object:
        return numpy_helper.from_array(arr.astype(np.float32), name)

    inits = [init("w1", rng.normal(0, 0.3, (8, 3, 3, 3))), init("b1", rng.normal(0, 0.1, 8)),
             init("g", rng.uniform(0.5, 1.5, 8)), init("be", rng.normal(0, 0.1, 8)),
             init("m", rng.normal(0, 0.1, 8)), init("v", rng.uniform(0.5, 1.5, 8)),
             init("wd", rng.normal(0, 0.3, (8, 1, 3, 3))), init("wf", rng.normal(0, 0.3, (4, 8))),
             init("bf", rng.normal(0, 0.1, 4))]
    nodes = [helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
             helper.make_node("BatchNormalization", ["c1", "g", "be", "m", "v"], ["bn"]),
             helper.make_node("Relu", ["bn"], ["r1"]),
             helper.make_node("MaxPool", ["r1"], ["p1"], kernel_shape=[2, 2], strides=[2, 2]),
             helper.make_node("Conv", ["p1", "wd"], ["dw"], pads=[1, 1, 1, 1], group=8),
             helper.make_node("Add", ["dw", "p1"], ["res"]),
             helper.make_node("Relu", ["res"], ["r2"]),
             helper.make_node("GlobalAveragePool", ["r2"], ["gap"]),
             helper.make_node("Flatten", ["gap"], ["fl"]),
             helper.make_node("Gemm", ["fl", "wf", "bf"], ["y"], transB=1)]
    graph = helper.make_graph(
        nodes, "cnn", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, side, side])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 4])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    onnx.checker.check_model(model)
    onnx.save(model, str(path))
    return path


def _teacher_labels(path: Path, x_nchw: np.ndarray) -> np.ndarray:
    """The float ONNX model's own decisions (onnxruntime), so the report's accuracy is the
    int8 model's agreement with the float model."""
    ort = pytest.importorskip("onnxruntime", reason="onnxruntime (onnx extra) not installed")
    sess = ort.InferenceSession(str(path))
    return np.concatenate([sess.run(None, {"x": x_nchw[i:i + 1]})[0]
                           for i in range(len(x_nchw))]).argmax(axis=1)


def test_calibration_layout_is_detected_and_said(tmp_path: Path) -> None:
    from tinydeploy.quantize.onnximport import calibration_layout, read_onnx_input

    inp = read_onnx_input(_cnn(tmp_path / "m.onnx", side=10))
    assert inp.shape == (1, 3, 10, 10) and inp.nhwc_shape == (1, 10, 10, 3)
    x = np.arange(2 * 3 * 10 * 10, dtype=np.float32).reshape(2, 3, 10, 10)
    got, note = calibration_layout(CalibrationData("c.npz", x), inp)
    assert "NCHW" in note and got.x.shape == (2, 10, 10, 3)
    np.testing.assert_array_equal(got.x[1, 4, 7], x[1, :, 4, 7])
    same, note = calibration_layout(CalibrationData("c.npz", got.x), inp)
    assert "NHWC" in note and same.x is got.x
    with pytest.raises(ModelError, match=r"\[3, 10, 9\]"):
        calibration_layout(CalibrationData("c.npz", x[..., :9]), inp)


def test_old_opset_is_refused_with_the_numbers(tmp_path: Path) -> None:
    from tinydeploy.quantize.onnximport import read_onnx_input

    with pytest.raises(UnsupportedError, match="opset 11"):
        read_onnx_input(_cnn(tmp_path / "old.onnx", opset=11))


def test_garbage_onnx_is_a_model_error(tmp_path: Path) -> None:
    from tinydeploy.quantize.onnximport import read_onnx_input

    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"\x08\x07garbage" * 5)
    with pytest.raises(ModelError, match="not a valid ONNX model"):
        read_onnx_input(bad)


@pytest.mark.target
@pytest.mark.tf
def test_onnx_cnn_quantized_built_and_bit_exact_on_cortex_m4(tmp_path: Path) -> None:
    # find_spec, not importorskip: importing onnx2tf here would switch this process's tf.keras
    # to the legacy Keras (see tinydeploy.quantize.onnximport.convert_onnx)
    if importlib.util.find_spec("onnx2tf") is None:
        pytest.skip("onnx2tf (onnx extra) not installed: pip install --no-deps "
                    "onnx2tf==1.29.24 (scripts/setup.sh does)")
    from tinydeploy.model.loader import load_tflite
    from tinydeploy.quantize.quantizer import quantize_model
    from tinydeploy.testing.device import validate_on_board

    src = _cnn(tmp_path / "cnn.onnx")
    x = np.random.default_rng(3).uniform(0, 1, (48, 3, 12, 12)).astype(np.float32)
    y = _teacher_labels(src, x)
    out = tmp_path / "cnn_int8.tflite"
    report = quantize_model(src, (x, y), out, sqnr_samples=0)
    assert any("detected as NCHW" in n for n in report.notes), report.notes
    assert any("(NHWC) in the quantized model" in n for n in report.notes)
    assert report.float_accuracy == 1.0
    assert report.int8_accuracy is not None and report.int8_accuracy >= 0.85, report.int8_accuracy
    graph = load_tflite(out)
    ops = {op.opcode for op in graph.operators}
    assert {"CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "ADD"} <= ops, ops
    assert graph.inputs[0].shape == (1, 12, 12, 3)
    v = validate_on_board(out, "mps2-an386", tmp_path / "fw", 4, seed=2)
    assert v.bit_exact_cases == v.cases == 4, v.first_mismatch
