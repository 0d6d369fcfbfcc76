"""The quantize stage without TensorFlow: calibration data checks, the op check, output-path
rules, INT8 pass-through, input quantization and the report. (TensorFlow conversions are in
test_quantize_tf.py.)"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from tinydeploy.cli import main
from tinydeploy.errors import InputDataError, ModelError, TinydeployError, UnsupportedError
from tinydeploy.model.ir import (
    DType,
    Graph,
    Operator,
    Quantization,
    Subgraph,
    Tensor,
)
from tinydeploy.model.loader import load_tflite
from tinydeploy.quantize import (
    LayerSQNR,
    QuantizeReport,
    SourceKind,
    TensorInfo,
    check_ops,
    find_problems,
    load_calibration,
    make_calibration,
    opcheck,
    quantize_model,
)
from tinydeploy.quantize.calibration import check_input_shape, check_labels
from tinydeploy.quantize.evaluate import _db, quantize_input
from tinydeploy.quantize.quantizer import check_output_path, identify_source

FIX = Path(__file__).parent / "fixtures"
# A stand-in for the kernel table, so these tests do not depend on which kernels exist today.
TABLE = frozenset({"CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "AVERAGE_POOL_2D",
                   "MAX_POOL_2D", "SOFTMAX", "RESHAPE", "ADD", "CONCATENATION", "MEAN"})


# --- calibration data ----------------------------------------------------------------------


def test_npz_with_labels_and_one_hot(tmp_path: Path) -> None:
    x = np.random.default_rng(0).normal(size=(6, 4, 3)).astype(np.float64)
    y = np.array([0, 2, 1, 2, 0, 1])
    np.savez(tmp_path / "c.npz", x=x, y=np.eye(3)[y])
    data = load_calibration(tmp_path / "c.npz")
    assert data.x.dtype == np.float32 and data.x.shape == (6, 4, 3)
    assert data.count == 6 and data.sample_shape == (4, 3)
    assert data.y is not None and data.y.tolist() == y.tolist()   # one-hot -> class ids
    np.save(tmp_path / "c.npy", x.astype(np.float32))
    assert load_calibration(tmp_path / "c.npy").y is None


@pytest.mark.parametrize("make, words", [
    (lambda p: np.savez(p / "d.npz", inputs=np.zeros((2, 3), np.float32)), ["'x'", "inputs"]),
    (lambda p: np.savez(p / "d.npz", x=np.zeros((0, 3), np.float32)), ["empty", "(0, 3)"]),
    (lambda p: np.savez(p / "d.npz", x=np.zeros((2, 3), np.int64)), ["int64", "float"]),
    (lambda p: np.savez(p / "d.npz", x=np.zeros((2, 3), np.float32), y=np.zeros(3)),
     ["3 labels", "2 samples"]),
    (lambda p: np.savez(p / "d.npz", x=np.full((2, 3), np.nan, np.float32)), ["NaN"]),
    (lambda p: np.savez(p / "d.npz", x=np.zeros((2, 3), np.float32), y=np.array([0.5, 1])),
     ["non-integer"]),
    (lambda p: (p / "d.npz").write_bytes(b"not a zip file at all"), ["not a readable"]),
])
def test_bad_calibration_files(tmp_path: Path, make, words: list[str]) -> None:
    make(tmp_path)
    with pytest.raises(InputDataError) as ei:
        load_calibration(tmp_path / "d.npz")
    assert "d.npz" in ei.value.message
    for w in words:
        assert w in ei.value.message


def test_calibration_missing_and_wrong_suffix(tmp_path: Path) -> None:
    with pytest.raises(InputDataError, match="no such calibration file"):
        load_calibration(tmp_path / "nope.npz")
    (tmp_path / "c.csv").write_text("1,2\n")
    with pytest.raises(InputDataError, match="unknown calibration format '.csv'"):
        load_calibration(tmp_path / "c.csv")


def test_shape_check_states_expected_and_got() -> None:
    data = make_calibration(np.zeros((5, 49, 10), np.float32), label="c.npz")
    check_input_shape(make_calibration(np.zeros((5, 49, 10, 1), np.float32)),
                      (1, 49, 10, 1), "in")
    check_input_shape(make_calibration(np.zeros((5, 7, 10, 1), np.float32)),
                      (-1, -1, 10, 1), "in")   # unknown dims accept anything
    with pytest.raises(InputDataError) as ei:
        check_input_shape(data, (1, 49, 10, 1), "serving_in")
    msg = ei.value.message
    assert "(5, 49, 10)" in msg and "(N, 49, 10, 1)" in msg and "serving_in" in msg


def test_label_range_is_checked() -> None:
    data = make_calibration(np.zeros((3, 2), np.float32), np.array([0, 4, 1]))
    check_labels(data, 5, "out")
    with pytest.raises(InputDataError, match="class id 4.*only 4 classes"):
        check_labels(data, 4, "out")


# --- the op check --------------------------------------------------------------------------


def _t(i: int, dtype: DType = DType.INT8, const: bool = False) -> Tensor:
    q = Quantization((0.1,), (0,)) if dtype is DType.INT8 else None
    data = np.zeros((4,), dtype.numpy) if const else None
    return Tensor(i, f"t{i}", (1, 4), dtype, q, data)


def _graph(ops: list[tuple[str, DType]]) -> Graph:
    """A chain t0 -op0-> t1 -op1-> t2 ...; each op's output has the given dtype."""
    tensors = [_t(0, ops[0][1] if ops else DType.INT8)]
    operators = []
    for k, (name, dtype) in enumerate(ops):
        tensors.append(_t(k + 1, dtype))
        operators.append(Operator(k, name, 1, (k,), (k + 1,)))
    sub = Subgraph("main", tuple(tensors), tuple(operators), (0,), (len(ops),))
    return Graph("0" * 64, (sub,))


def test_op_check_accepts_supported_int8_graph() -> None:
    g = _graph([("CONV_2D", DType.INT8), ("RESHAPE", DType.INT8), ("SOFTMAX", DType.INT8)])
    check_ops(g, TABLE)
    assert find_problems(g, TABLE) == []


@pytest.mark.parametrize("op, hint_word", [
    ("SHAPE", "batch_size=1"), ("STRIDED_SLICE", "Flatten"), ("PACK", "fixes the batch"),
    ("GELU", "ReLU"), ("TRANSPOSE", "Permute"), ("WHERE", "supported"),
])
def test_unsupported_op_names_op_index_and_suggestion(op: str, hint_word: str) -> None:
    g = _graph([("CONV_2D", DType.INT8), (op, DType.INT8), ("SOFTMAX", DType.INT8)])
    with pytest.raises(UnsupportedError) as ei:
        check_ops(g, TABLE, label="m.tflite")
    assert ei.value.message.startswith(f"m.tflite: op 1 ({op})")
    assert ei.value.hint is not None and hint_word in ei.value.hint


def test_float_op_is_not_fully_quantized() -> None:
    g = _graph([("CONV_2D", DType.INT8), ("FULLY_CONNECTED", DType.FLOAT32)])
    with pytest.raises(UnsupportedError) as ei:
        check_ops(g, TABLE)
    assert "op 1 (FULLY_CONNECTED)" in ei.value.message and "float" in ei.value.message
    assert "not fully quantized" in (ei.value.hint or "")


def test_all_problems_are_listed_and_counted() -> None:
    g = _graph([("SHAPE", DType.INT32), ("CONV_2D", DType.INT8), ("GELU", DType.INT8),
                ("ADD", DType.FLOAT32)])
    probs = find_problems(g, TABLE)
    assert [(p.op_index, p.op_type) for p in probs] == [(0, "SHAPE"), (2, "GELU"), (3, "ADD")]
    with pytest.raises(UnsupportedError, match=r"2 more problem op\(s\): ADD, GELU"):
        check_ops(g, TABLE)


def test_constant_float_tensors_are_not_float_compute() -> None:
    tensors = (_t(0), _t(1, DType.FLOAT32, const=True), _t(2))
    sub = Subgraph("main", tensors, (Operator(0, "ADD", 1, (0, 1), (2,)),), (0,), (2,))
    check_ops(Graph("0" * 64, (sub,)), TABLE)


def test_real_kernel_table_is_consulted() -> None:
    from tinydeploy.kernels import registry

    assert opcheck.supported_ops() == registry.SUPPORTED_OPS


# --- output path, source identification, pass-through ---------------------------------------


def test_output_path_rules(tmp_path: Path) -> None:
    with pytest.raises(TinydeployError, match="does not exist"):
        check_output_path(tmp_path / "missing" / "m.tflite", force=False)
    existing = tmp_path / "m.tflite"
    existing.write_bytes(b"old")
    with pytest.raises(TinydeployError, match="already exists") as ei:
        check_output_path(existing, force=False)
    assert "--force" in (ei.value.hint or "")
    assert check_output_path(existing, force=True) == existing
    with pytest.raises(TinydeployError, match="is a directory"):
        check_output_path(tmp_path, force=True)
    with pytest.raises(TinydeployError, match="source model itself"):
        check_output_path(existing, force=True, source=existing)


def test_identify_source(tmp_path: Path) -> None:
    assert identify_source(FIX / "mlp.tflite")[0] is SourceKind.INT8_TFLITE
    (tmp_path / "m.keras").write_bytes(b"x")
    assert identify_source(tmp_path / "m.keras")[0] is SourceKind.KERAS
    with pytest.raises(ModelError, match="no such file"):
        identify_source(tmp_path / "m.h5")
    (tmp_path / "m.onnx").write_bytes(b"x")
    assert identify_source(tmp_path / "m.onnx")[0] is SourceKind.ONNX
    (tmp_path / "m.pt").write_bytes(b"x")
    with pytest.raises(ModelError, match="unknown model format '.pt'"):
        identify_source(tmp_path / "m.pt")
    with pytest.raises(ModelError, match="not a SavedModel"):
        identify_source(tmp_path)
    (tmp_path / "junk.tflite").write_bytes(b"\x00" * 64)
    with pytest.raises(ModelError):
        identify_source(tmp_path / "junk.tflite")


def test_int8_tflite_passes_through_unchanged(tmp_path: Path) -> None:
    out = tmp_path / "out.tflite"
    rep = quantize_model(FIX / "residual.tflite", None, out, supported_ops=TABLE)
    assert out.read_bytes() == (FIX / "residual.tflite").read_bytes()
    assert rep.passthrough and rep.source_kind is SourceKind.INT8_TFLITE
    assert rep.ops == tuple(o.opcode for o in load_tflite(out).operators)
    assert rep.input.dtype == "int8" and rep.input.scale is not None
    assert [p.name for p in tmp_path.iterdir()] == ["out.tflite"]   # no temporary left


def test_int8_tflite_with_unsupported_op_writes_nothing(tmp_path: Path) -> None:
    out = tmp_path / "out.tflite"
    with pytest.raises(UnsupportedError, match=r"op 6 \(MEAN\)"):
        quantize_model(FIX / "residual.tflite", None, out, supported_ops=TABLE - {"MEAN"})
    assert list(tmp_path.iterdir()) == []


def test_labels_must_match_output_classes(tmp_path: Path) -> None:
    with pytest.raises(InputDataError, match="3 labels given but output .* has 4 classes"):
        quantize_model(FIX / "mlp.tflite", None, tmp_path / "o.tflite", supported_ops=TABLE,
                       labels=["a", "b", "c"])
    assert list(tmp_path.iterdir()) == []


def test_float_model_without_calibration_is_refused(tmp_path: Path) -> None:
    (tmp_path / "m.keras").write_bytes(b"whatever")
    with pytest.raises(InputDataError, match="needs calibration data"):
        quantize_model(tmp_path / "m.keras", None, tmp_path / "o.tflite")


# --- CLI (in-process, so the kernel table can be replaced) ------------------------------------


@pytest.fixture
def table(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(opcheck, "supported_ops", lambda: TABLE)


def test_cli_passthrough_json(tmp_path: Path, table: None,
                              capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "o.tflite"
    rc = main(["quantize", str(FIX / "mlp.tflite"), "-o", str(out), "--json",
               "--labels", "a,b,c,d"])
    cap = capsys.readouterr()
    assert rc == 0, cap.err
    doc = json.loads(cap.out)
    assert doc["passthrough"] is True and doc["source_kind"] == "int8_tflite"
    assert doc["ops"] == ["FULLY_CONNECTED"] * 3 + ["SOFTMAX"]
    assert doc["op_counts"] == {"FULLY_CONNECTED": 3, "SOFTMAX": 1}
    assert doc["size_bytes"] == out.stat().st_size


def test_cli_errors_exit_1_and_write_nothing(tmp_path: Path, table: None,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    src = str(FIX / "mlp.tflite")
    rc = main(["quantize", src, "-o", str(tmp_path / "nodir" / "o.tflite")])
    err = capsys.readouterr().err
    assert rc == 1 and "error:" in err and "does not exist" in err and "Traceback" not in err
    existing = tmp_path / "o.tflite"
    existing.write_bytes(b"keep me")
    rc = main(["quantize", src, "-o", str(existing)])
    err = capsys.readouterr().err
    assert rc == 1 and "already exists" in err and "--force" in err
    assert existing.read_bytes() == b"keep me"
    assert main(["quantize", src, "-o", str(existing), "--force"]) == 0
    assert existing.read_bytes() == (FIX / "mlp.tflite").read_bytes()
    (tmp_path / "bad.tflite").write_bytes(b"definitely not a flatbuffer" * 4)
    rc = main(["quantize", str(tmp_path / "bad.tflite"), "-o", str(tmp_path / "x.tflite")])
    err = capsys.readouterr().err
    assert rc == 1 and "bad.tflite" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.tflite", "o.tflite"]


def test_cli_labels_from_file(tmp_path: Path) -> None:
    from tinydeploy.commands.quantize import parse_labels

    f = tmp_path / "labels.txt"
    f.write_text("yes\nno\n\nup\n")
    assert parse_labels(str(f)) == ["yes", "no", "up"]
    assert parse_labels("a, b,c") == ["a", "b", "c"]
    with pytest.raises(InputDataError, match="empty class name"):
        parse_labels("a,,b")


# --- host-side input quantization and the report --------------------------------------------


def test_input_quantization_rounds_half_away_from_zero() -> None:
    t = Tensor(0, "in", (1, 6), DType.INT8, Quantization((0.5,), (3,)))
    x = np.array([[0.25, -0.25, 0.75, -0.75, 100.0, -100.0]], np.float32)
    # x/scale = 0.5, -0.5, 1.5, -1.5 -> 1, -1, 2, -2 (np.round would give 0, -0, 2, -2)
    assert quantize_input(x, t).tolist() == [[4, 2, 5, 1, 127, -128]]


def test_sqnr_decibels() -> None:
    assert _db(100.0, 1.0) == 20.0
    assert _db(5.0, 0.0) is None
    assert _db(0.0, 2.0) == -math.inf


def test_report_json_is_strict_json() -> None:
    ti = TensorInfo("in", (1, 4), "int8", 0.1, -3)
    rep = QuantizeReport(
        "m.keras", SourceKind.KERAS, "o.tflite", "ab" * 32, 1234, ti, ti, ("CONV_2D", "ADD"),
        10, 10, 0.9, 0.885,
        (LayerSQNR(0, "CONV_2D", "a", 31.5), LayerSQNR(1, "ADD", "b", None),
         LayerSQNR(2, "ADD", "c", -math.inf)))
    doc = json.loads(json.dumps(rep.to_dict(), allow_nan=False))
    assert doc["accuracy_drop_points"] == 1.5
    assert [(x["sqnr_db"], x["exact"]) for x in doc["layers"]] == [
        (31.5, False), (None, True), (None, False)]
    assert rep.worst_layer is not None and rep.worst_layer.tensor == "c"


def test_source_layers_from_fused_tensor_names() -> None:
    from tinydeploy.quantize.evaluate import source_layers

    names = [
        "functional_1/re_lu_1/Relu;functional_1/batch_normalization_1/batchnorm/add_1;"
        "functional_1/conv2d_1/convolution",
        "StatefulPartitionedCall/StatefulPartitionedCall/functional_1/dense/MatMul",
        "Identity",
    ]
    assert source_layers(names) == [("re_lu_1", "batch_normalization_1", "conv2d_1"),
                                    ("dense",), ()]
    # a custom model name shared by every op is a scope, not a layer
    custom = ["kws/conv1/Relu;kws/conv1/BiasAdd", "kws/fc/MatMul", "Identity"]
    assert source_layers(custom) == [("conv1",), ("fc",), ()]
