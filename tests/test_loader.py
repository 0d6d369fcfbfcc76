"""The model loader: exact figures on known models, and only ModelError on bad bytes."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest

from tinydeploy.errors import ModelError
from tinydeploy.model.analysis import op_macs, params_bytes
from tinydeploy.model.ir import Activation, DType, Padding
from tinydeploy.model.loader import load_tflite

FIX = Path(__file__).parent / "fixtures"


def test_dscnn_structure_and_macs() -> None:
    g = load_tflite(FIX / "dscnn_kws.tflite")
    ops = [o.opcode for o in g.operators]
    assert ops == (["CONV_2D"] + ["DEPTHWISE_CONV_2D", "CONV_2D"] * 4
                   + ["AVERAGE_POOL_2D", "FULLY_CONNECTED", "SOFTMAX"])
    # MLPerf Tiny KWS DS-CNN: 25*5*64*10*4 + 4*(25*5*64*9 + 25*5*64*64) + 64*12
    assert sum(op_macs(g, o) for o in g.operators) == 2_656_768
    first = g.operators[0].options
    assert first.stride_h == 2 and first.stride_w == 2 and first.padding is Padding.SAME
    assert first.activation is Activation.RELU
    (inp,) = g.inputs
    assert inp.shape == (1, 49, 10, 1) and inp.dtype is DType.INT8
    w = g.tensor(g.operators[0].inputs[1])
    assert w.quant is not None and w.quant.per_channel and len(w.quant.scale) == 64
    assert w.quant.axis == 0 and w.data is not None and w.data.shape == (64, 10, 4, 1)
    # parameters: conv weights int8 + int32 biases + FC weights/bias, each buffer of the
    # file once (the converter gave the nine all-zero biases one buffer)
    per_buffer = {g.tensor(i).buffer: g.tensor(i).nbytes for o in g.operators
                  for i in o.inputs if i >= 0 and g.tensor(i).is_constant}
    per_tensor = sum(g.tensor(i).nbytes for o in g.operators for i in o.inputs
                     if i >= 0 and g.tensor(i).is_constant)
    assert params_bytes(g) == sum(per_buffer.values()) > 20_000
    assert per_tensor - params_bytes(g) == 8 * 256


def test_constant_data_matches_oracle_view() -> None:
    """Weights read by our reader equal those the TFLite schema object API reads."""
    schema = pytest.importorskip(
        "tflite_micro.tensorflow.lite.micro.python.schema_py_generated")
    data = (FIX / "mlp.tflite").read_bytes()
    m = schema.ModelT.InitFromObj(schema.Model.GetRootAsModel(data, 0))
    g = load_tflite(data)
    for i, t in enumerate(m.subgraphs[0].tensors):
        ours = g.tensor(i)
        assert list(ours.shape) == list(t.shape)
        buf = m.buffers[t.buffer].data
        if buf is not None and len(buf):
            assert ours.data is not None
            assert ours.data.tobytes() == bytes(np.asarray(buf, dtype=np.uint8))


@pytest.mark.parametrize("content,needle", [
    (b"", "empty"),
    (b"abc", "only 3 bytes"),
    (b"\x00" * 64, "TFL3"),
    (bytes(range(256)) * 4, "TFL3"),
])
def test_bad_bytes(tmp_path: Path, content: bytes, needle: str) -> None:
    p = tmp_path / "m.tflite"
    p.write_bytes(content)
    with pytest.raises(ModelError) as e:
        load_tflite(p)
    assert str(p) in e.value.message and needle in e.value.message


def test_truncated_model(tmp_path: Path) -> None:
    data = (FIX / "dscnn_kws.tflite").read_bytes()
    for cut in (8, 100, len(data) // 2, len(data) - 1):
        with pytest.raises(ModelError):
            load_tflite(data[:cut])


def test_missing_and_directory(tmp_path: Path) -> None:
    with pytest.raises(ModelError, match="no such file"):
        load_tflite(tmp_path / "nope.tflite")
    with pytest.raises(ModelError, match="directory"):
        load_tflite(tmp_path)


def test_fuzz_mutations_raise_only_model_error() -> None:
    """Mutated valid models either load or raise ModelError: never another exception."""
    rng = random.Random(1234)
    sources = [(FIX / n).read_bytes() for n in ("mlp.tflite", "residual.tflite")]
    loaded = failed = 0
    for _ in range(600):
        data = bytearray(rng.choice(sources))
        for _ in range(rng.randint(1, 8)):
            pos = rng.randrange(len(data))
            mode = rng.random()
            if mode < 0.6:
                data[pos] = rng.randrange(256)
            elif mode < 0.8:
                data[pos:pos + 4] = rng.randrange(1 << 32).to_bytes(4, "little")
            else:
                del data[pos:pos + rng.randint(1, 64)]
        try:
            load_tflite(bytes(data))
            loaded += 1
        except ModelError:
            failed += 1
    assert loaded + failed == 600
    assert failed > 50  # the mutations really do break files
