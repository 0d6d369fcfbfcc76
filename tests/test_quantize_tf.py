"""Quantizing real (tiny) Keras models with TensorFlow: structure of the INT8 output, accuracy
kept, every source format, and the user errors of `tinydeploy quantize`.

The models are trained for a few epochs on synthetic tasks that a small network learns
almost perfectly, so INT8 accuracy within 1 point of float is a meaningful requirement.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tinydeploy.cli import main
from tinydeploy.errors import InputDataError, ModelError, UnsupportedError
from tinydeploy.model.ir import DType, Graph
from tinydeploy.model.loader import load_tflite
from tinydeploy.quantize import SourceKind, opcheck, quantize_model

pytestmark = pytest.mark.tf
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

TABLE = frozenset({"CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "AVERAGE_POOL_2D",
                   "MAX_POOL_2D", "SOFTMAX", "RESHAPE", "ADD", "CONCATENATION", "MEAN"})
CLASSES = 4


@dataclass(frozen=True)
class Case:
    name: str
    path: Path
    x: np.ndarray
    y: np.ndarray
    keras_accuracy: float


def _image_task(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Noise plus a bright band whose row position is the class."""
    y = rng.integers(0, CLASSES, n)
    x = rng.normal(0.0, 0.5, (n, 16, 10, 1)).astype(np.float32)
    for c in range(CLASSES):
        x[y == c, 4 * c:4 * c + 4, :, 0] += 1.5
    return x, y


def _vector_task(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    y = rng.integers(0, CLASSES, n)
    centers = rng.normal(0.0, 2.0, (CLASSES, 20))
    return (centers[y] + rng.normal(0.0, 0.7, (n, 20))).astype(np.float32), y


def _dscnn(keras: Any) -> Any:
    L = keras.layers
    inp = keras.Input((16, 10, 1))
    h = L.Conv2D(8, (4, 3), strides=2, padding="same", use_bias=False)(inp)
    h = L.BatchNormalization()(h)
    h = L.ReLU()(h)
    h = L.DepthwiseConv2D(3, padding="same", use_bias=False)(h)
    h = L.BatchNormalization()(h)
    h = L.ReLU()(h)
    h = L.Conv2D(12, 1)(h)
    h = L.ReLU()(h)
    h = L.AveragePooling2D((2, 1))(h)
    h = L.Flatten()(h)          # dynamic-batch Flatten: must not leave SHAPE ops behind
    h = L.Dense(CLASSES)(h)
    return keras.Model(inp, L.Softmax()(h))


def _mlp(keras: Any) -> Any:
    return keras.Sequential([
        keras.Input((20,)),
        keras.layers.Dense(16, activation="relu"),
        keras.layers.Dense(16, activation="relu"),
        keras.layers.Dense(CLASSES, activation="softmax"),
    ])


def _branches(keras: Any) -> Any:
    L = keras.layers
    inp = keras.Input((16, 10, 1))
    a = L.Conv2D(6, 3, padding="same", activation="relu")(inp)
    b = L.Conv2D(6, 1, activation="relu")(inp)
    s = L.Add()([a, b])
    c = L.Concatenate()([s, a])
    h = L.MaxPooling2D(2)(c)
    h = L.Reshape((-1,))(h)
    return keras.Model(inp, L.Dense(CLASSES)(h))


@pytest.fixture(scope="module")
def cases(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Case]:
    import keras

    d = tmp_path_factory.mktemp("models")
    rng = np.random.default_rng(1)
    out = {}
    for name, build, task in (("dscnn", _dscnn, _image_task), ("mlp", _mlp, _vector_task),
                              ("branches", _branches, _image_task)):
        keras.utils.set_random_seed(0)
        x, y = task(rng, 320)
        model = build(keras)
        model.compile("adam", keras.losses.SparseCategoricalCrossentropy(
            from_logits=name == "branches"), metrics=["accuracy"])
        model.fit(x, y, epochs=8, batch_size=32, verbose=0)
        acc = float(np.mean(np.argmax(model.predict(x, verbose=0), axis=1) == y))
        path = d / f"{name}.keras"
        model.save(path)
        out[name] = Case(name, path, x, y, acc)
    return out


@pytest.fixture(scope="module")
def quantized(cases: dict[str, Case], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    d = tmp_path_factory.mktemp("int8")
    res = {}
    for name, c in cases.items():
        out = d / f"{name}_int8.tflite"
        rep = quantize_model(c.path, (c.x, c.y), out, supported_ops=TABLE)
        res[name] = (rep, out, load_tflite(out))
    return res


def _float_tensors(g: Graph) -> list[str]:
    return [t.name for t in g.tensors if t.dtype is DType.FLOAT32 and not t.is_constant]


def _tflm_accuracy(model: Path, g: Graph, x: np.ndarray, y: np.ndarray) -> float:
    """Independent INT8 accuracy: quantize inputs here and run tflite-micro directly."""
    from tflite_micro.python.tflite_micro import runtime

    it = runtime.Interpreter.from_bytes(model.read_bytes(), arena_size=1 << 20)
    tin = g.inputs[0]
    v = x / tin.scale
    q = np.clip(np.sign(v) * np.floor(np.abs(v) + 0.5) + tin.zero_point, -128, 127)
    hits = 0
    for i in range(len(x)):
        it.set_input(q[i:i + 1].astype(np.int8).reshape(tin.shape), 0)
        it.invoke()
        hits += int(np.argmax(np.array(it.get_output(0)).reshape(-1)) == y[i])
    return hits / len(x)


@pytest.mark.parametrize("name", ["dscnn", "mlp", "branches"])
def test_int8_structure(name: str, quantized: dict[str, Any]) -> None:
    rep, out, g = quantized[name]
    assert g.inputs[0].dtype is DType.INT8 and g.outputs[0].dtype is DType.INT8
    assert g.inputs[0].shape[0] == 1
    assert _float_tensors(g) == []
    assert not {"SHAPE", "STRIDED_SLICE", "PACK", "QUANTIZE", "DEQUANTIZE"} & set(rep.ops)
    for op in g.operators:
        if op.opcode in ("CONV_2D", "DEPTHWISE_CONV_2D"):
            w = g.tensor(op.inputs[1])
            out_channels = w.shape[0] if op.opcode == "CONV_2D" else w.shape[3]
            assert w.dtype is DType.INT8 and w.quant is not None
            assert len(w.quant.scale) == out_channels > 1, f"op {op.index}: per-tensor weights"
    assert rep.ops == tuple(op.opcode for op in g.operators)
    assert rep.size_bytes == out.stat().st_size
    assert rep.calibration_samples == 320 and rep.evaluated_samples == 320


def test_expected_ops(quantized: dict[str, Any]) -> None:
    assert {"CONV_2D", "DEPTHWISE_CONV_2D", "AVERAGE_POOL_2D", "RESHAPE",
            "FULLY_CONNECTED", "SOFTMAX"} <= set(quantized["dscnn"][0].ops)
    assert {"ADD", "CONCATENATION"} <= set(quantized["branches"][0].ops)


@pytest.mark.parametrize("name", ["dscnn", "mlp", "branches"])
def test_int8_accuracy_within_one_point(name: str, cases: dict[str, Case],
                                        quantized: dict[str, Any]) -> None:
    rep, out, g = quantized[name]
    c = cases[name]
    assert c.keras_accuracy >= 0.9, "the synthetic task was not learnt; the test is void"
    assert rep.float_accuracy == pytest.approx(c.keras_accuracy, abs=0.01)
    assert rep.int8_accuracy == _tflm_accuracy(out, g, c.x, c.y)
    assert abs(rep.float_accuracy - rep.int8_accuracy) <= 0.01


def test_per_layer_sqnr(quantized: dict[str, Any]) -> None:
    rep, _, g = quantized["dscnn"]
    assert [x.op_index for x in rep.layers] == [op.index for op in g.operators]
    for layer in rep.layers:
        assert layer.sqnr_db is None or 15.0 < layer.sqnr_db < 80.0, layer
    keras_names = [n for layer in rep.layers for n in layer.layers]
    for want in ("conv2d", "depthwise_conv2d", "average_pooling2d", "dense"):
        assert any(n.startswith(want) for n in keras_names), (want, keras_names)
    classes = rep.classes
    assert [c.class_id for c in classes] == list(range(CLASSES))
    assert sum(c.samples for c in classes) == 320


def test_float_tflite_source(cases: dict[str, Case], tmp_path: Path) -> None:
    """A float .tflite with a fixed batch is calibrated and quantized like a Keras model."""
    import keras
    import tensorflow as tf

    c = cases["dscnn"]
    model = keras.models.load_model(c.path)
    inp = keras.Input(batch_shape=(1, 16, 10, 1))
    fixed = keras.Model(inp, model(inp))
    src = tmp_path / "float.tflite"
    src.write_bytes(tf.lite.TFLiteConverter.from_keras_model(fixed).convert())
    assert load_tflite(src).inputs[0].dtype is DType.FLOAT32
    rep = quantize_model(src, (c.x, c.y), tmp_path / "q.tflite", supported_ops=TABLE)
    g = load_tflite(tmp_path / "q.tflite")
    assert rep.source_kind is SourceKind.FLOAT_TFLITE
    assert [x.op_index for x in rep.layers] == [op.index for op in g.operators]
    assert g.inputs[0].dtype is DType.INT8 and _float_tensors(g) == []
    assert rep.float_accuracy is not None and rep.int8_accuracy is not None
    assert abs(rep.float_accuracy - rep.int8_accuracy) <= 0.01


def test_float_tflite_with_resource_variables_is_refused(cases: dict[str, Case],
                                                         tmp_path: Path) -> None:
    import keras
    import tensorflow as tf

    c = cases["mlp"]
    model = keras.models.load_model(c.path)
    fn = tf.function(lambda x: model(x, training=False))
    conc = fn.get_concrete_function(tf.TensorSpec((1, 20), tf.float32))
    src = tmp_path / "vars.tflite"
    src.write_bytes(tf.lite.TFLiteConverter.from_concrete_functions([conc], model).convert())
    with pytest.raises(UnsupportedError, match="resource variables") as ei:
        quantize_model(src, c.x, tmp_path / "q.tflite", supported_ops=TABLE)
    assert "VAR_HANDLE" in ei.value.message and "frozen" in (ei.value.hint or "")
    assert not (tmp_path / "q.tflite").exists()


def test_dynamic_batch_float_tflite_is_refused_with_fix(cases: dict[str, Case],
                                                        tmp_path: Path) -> None:
    import keras
    import tensorflow as tf

    c = cases["dscnn"]
    model = keras.models.load_model(c.path)     # batch None: Flatten computes shapes
    src = tmp_path / "dyn.tflite"
    src.write_bytes(tf.lite.TFLiteConverter.from_keras_model(model).convert())
    with pytest.raises(UnsupportedError) as ei:
        quantize_model(src, c.x, tmp_path / "q.tflite", supported_ops=TABLE)
    assert "SHAPE" in ei.value.message or "STRIDED_SLICE" in ei.value.message
    assert "batch" in (ei.value.hint or "") and "Flatten" in (ei.value.hint or "")
    assert not (tmp_path / "q.tflite").exists()


def test_saved_model_and_h5_sources(cases: dict[str, Case], tmp_path: Path) -> None:
    import keras

    c = cases["mlp"]
    model = keras.models.load_model(c.path)
    model.export(str(tmp_path / "sm"), verbose=False)
    model.save(tmp_path / "mlp.h5")
    for src, kind in ((tmp_path / "sm", SourceKind.SAVED_MODEL),
                      (tmp_path / "mlp.h5", SourceKind.KERAS)):
        out = tmp_path / f"{src.name}.tflite"
        rep = quantize_model(src, (c.x, c.y), out, supported_ops=TABLE)
        assert rep.source_kind is kind
        g = load_tflite(out)
        assert g.inputs[0].dtype is DType.INT8 and _float_tensors(g) == []
        assert abs(rep.float_accuracy - rep.int8_accuracy) <= 0.01   # type: ignore[operator]


def test_unsupported_op_after_conversion(tmp_path: Path) -> None:
    import keras

    model = keras.Sequential([keras.Input((20,)), keras.layers.Dense(8, activation="gelu"),
                              keras.layers.Dense(CLASSES)])
    model.save(tmp_path / "gelu.keras")
    x = np.random.default_rng(0).normal(size=(16, 20)).astype(np.float32)
    with pytest.raises(UnsupportedError) as ei:
        quantize_model(tmp_path / "gelu.keras", x, tmp_path / "o.tflite", supported_ops=TABLE)
    assert "GELU" in ei.value.message and "op 1" in ei.value.message
    assert "ReLU" in (ei.value.hint or "")
    assert not (tmp_path / "o.tflite").exists()


# --- the command line ----------------------------------------------------------------------


@pytest.fixture
def table(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(opcheck, "supported_ops", lambda: TABLE)


def test_cli_json_and_force(cases: dict[str, Case], tmp_path: Path, table: None,
                            capfd: pytest.CaptureFixture[str]) -> None:
    c = cases["mlp"]
    np.savez(tmp_path / "cal.npz", x=c.x, y=c.y)
    out = tmp_path / "o.tflite"
    args = ["quantize", str(c.path), "--calibration", str(tmp_path / "cal.npz"), "-o", str(out),
            "--json", "--labels", "a,b,c,d", "--samples", "100"]
    assert main(args) == 0
    cap = capfd.readouterr()
    doc = json.loads(cap.out)    # stdout holds exactly one JSON document
    assert "calibrating" not in cap.err and "━" not in cap.err   # no progress under --json
    assert doc["notes"] == [] and len(doc["layers"]) == len(doc["ops"])
    assert doc["source_kind"] == "keras" and doc["calibration_samples"] == 100
    assert doc["input"]["dtype"] == doc["output_tensor"]["dtype"] == "int8"
    assert [k["label"] for k in doc["classes"]] == ["a", "b", "c", "d"]
    first = out.read_bytes()
    assert main(args) == 1
    assert "already exists" in capfd.readouterr().err
    assert main([*args, "--force"]) == 0
    capfd.readouterr()
    assert out.read_bytes() == first               # same inputs, same bytes


def _cli_error(args: list[str], capfd: pytest.CaptureFixture[str]) -> str:
    rc = main(args)
    err = capfd.readouterr().err
    assert rc == 1, err
    assert "error:" in err and "Traceback" not in err
    return err


def test_cli_bad_inputs(cases: dict[str, Case], tmp_path: Path, table: None,
                        capfd: pytest.CaptureFixture[str]) -> None:
    c = cases["dscnn"]
    out = tmp_path / "o.tflite"
    q = ["quantize", str(c.path), "-o", str(out), "--calibration"]

    np.save(tmp_path / "wrong_shape.npy", c.x[:, :, :, 0])
    err = _cli_error([*q, str(tmp_path / "wrong_shape.npy")], capfd)
    assert "(320, 16, 10)" in err and "(N, 16, 10, 1)" in err

    np.save(tmp_path / "ints.npy", (c.x * 10).astype(np.int32))
    err = _cli_error([*q, str(tmp_path / "ints.npy")], capfd)
    assert "int32" in err and "float" in err

    np.save(tmp_path / "empty.npy", np.zeros((0, 16, 10, 1), np.float32))
    assert "empty" in _cli_error([*q, str(tmp_path / "empty.npy")], capfd)

    np.save(tmp_path / "ok.npy", c.x[:20])
    (tmp_path / "junk.keras").write_bytes(b"this is not a zip archive")
    err = _cli_error(["quantize", str(tmp_path / "junk.keras"), "-o", str(out),
                      "--calibration", str(tmp_path / "ok.npy")], capfd)
    assert "junk.keras" in err and "Keras" in err

    err = _cli_error([*q, str(tmp_path / "ok.npy"), "-o", str(tmp_path / "no" / "o.tflite")],
                     capfd)
    assert "does not exist" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "empty.npy", "ints.npy", "junk.keras", "ok.npy", "wrong_shape.npy"]


def test_api_errors_are_domain_errors(cases: dict[str, Case], tmp_path: Path) -> None:
    c = cases["mlp"]
    with pytest.raises(InputDataError, match="class id 3.*only 3 classes|labels"):
        quantize_model(c.path, (c.x, c.y), tmp_path / "o.tflite", supported_ops=TABLE,
                       labels=["a", "b", "c"])
    with pytest.raises(ModelError):
        quantize_model(tmp_path, c.x, tmp_path / "o.tflite")
    assert list(tmp_path.iterdir()) == []


def test_cli_human_output_and_progress(cases: dict[str, Case], tmp_path: Path, table: None,
                                       capfd: pytest.CaptureFixture[str]) -> None:
    c = cases["mlp"]
    np.savez(tmp_path / "cal.npz", x=c.x, y=c.y)
    rc = main(["quantize", str(c.path), "-c", str(tmp_path / "cal.npz"),
               "-o", str(tmp_path / "o.tflite"), "--labels", "w,x,y,z"])
    cap = capfd.readouterr()
    assert rc == 0, cap.err
    assert "calibrating" in cap.err and "int8 accuracy" in cap.err      # progress on stderr
    assert "per-layer SQNR" in cap.out and "lowest" in cap.out
    assert "int8 (tflite-micro)" in cap.out and "FULLY_CONNECTED×3" in cap.out
