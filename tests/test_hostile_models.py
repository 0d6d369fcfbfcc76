"""Hand-made hostile models: each is refused with a clear error naming the numbers, quickly.

Sizes that overflow 32 bits, negative and huge shapes, buffer and tensor indices out of range,
ops out of order (a cycle), a tensor nobody writes, an op reading its own output, an op with
too few inputs, a tensor written twice, 10,000 ops and a 100 MB constant. ``inspect`` and
``plan`` exit 1 with one ``error:`` line (no traceback) within a few seconds.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tinydeploy.cli import main
from tinydeploy.model import ir
from tinydeploy.testing.builder import ModelBuilder, _schema

SECONDS = 15.0   # generous for a loaded two-core machine; each takes about 1-3 s idle


def _chain(n: int, shape: tuple[int, ...] = (1, 8), extra: int = 0) -> bytes:
    b = ModelBuilder("relu chain")
    t = [b.tensor(f"t{i}", shape, scale=0.1, zero_point=0) for i in range(n + 1 + extra)]
    for i in range(n):
        b.op("RELU", [t[i]], [t[i + 1]])
    return b.build([t[0]], [t[n]])


def _fc(k: int = 8, m: int = 4) -> bytes:
    b = ModelBuilder("fc")
    x = b.tensor("x", (1, k), scale=0.1, zero_point=0)
    w = b.tensor("w", (m, k), scale=0.01, data=np.ones(m * k, np.int8))
    y = b.tensor("y", (1, m), scale=0.2, zero_point=0)
    b.op("FULLY_CONNECTED", [x, w, -1], [y], ir.FullyConnectedOptions())
    return b.build([x], [y])


def _patch(model: bytes, fn: Callable[[Any], None]) -> bytes:
    import flatbuffers

    m = _schema().ModelT.InitFromPackedBuf(bytearray(model), 0)
    fn(m.subgraphs[0])
    fb = flatbuffers.Builder(1024)
    fb.Finish(m.Pack(fb), file_identifier=b"TFL3")
    return bytes(fb.Output())


def _set(obj: Any, **kv: Any) -> None:
    for k, v in kv.items():
        setattr(obj, k, v)


# name -> (model maker, fragments the error message must contain)
CASES: dict[str, tuple[Callable[[], bytes], tuple[str, ...]]] = {
    "overflow-32-bits": (lambda: _chain(1, (65536, 65536, 2)),
                         ("8,589,934,592 elements", "2,147,483,647")),
    "negative-shape": (lambda: _patch(_chain(1), lambda sg: _set(sg.tensors[0], shape=[-7, 8])),
                       ("negative dimension", "(-7, 8)")),
    "huge-dimension": (lambda: _patch(_chain(1),
                                      lambda sg: _set(sg.tensors[1], shape=[2**31 - 1])),
                       ("implausible shape", "2147483647")),
    "buffer-out-of-range": (lambda: _patch(_fc(), lambda sg: _set(sg.tensors[1], buffer=999)),
                            ("buffer index 999", "2 buffers")),
    "tensor-out-of-range": (lambda: _patch(_chain(2),
                                           lambda sg: _set(sg.operators[1], inputs=[77])),
                            ("tensor index 77", "3 tensors")),
    "cycle": (lambda: _patch(_chain(2), lambda sg: _set(sg.operators[0], inputs=[2])),
              ("operator 0 (RELU)", "tensor 2", "later operator 1")),
    "never-written": (lambda: _patch(_chain(2, extra=1),
                                     lambda sg: _set(sg.operators[1], inputs=[3])),
                      ("operator 1 (RELU)", "tensor 3", "never written")),
    "reads-own-output": (lambda: _patch(_chain(1), lambda sg: _set(sg.operators[0], inputs=[1])),
                         ("operator 0 (RELU)", "reads its own output", "tensor 1")),
    "written-twice": (lambda: _patch(_chain(3),
                                     lambda sg: _set(sg.operators[2], inputs=[1], outputs=[2])),
                      ("operator 2", "tensor 2", "already written by operator 1")),
    "too-few-inputs": (lambda: _patch(_fc(), lambda sg: _set(sg.operators[0], inputs=[0])),
                       ("FULLY_CONNECTED", "1 input(s)", "2 to 3")),
    "required-input-absent": (lambda: _patch(_fc(),
                                             lambda sg: _set(sg.operators[0], inputs=[0, -1])),
                              ("FULLY_CONNECTED", "required input 1 is absent")),
    "10000-ops": (lambda: _chain(10_000), ("10,000 operators", "at most 1,024")),
    "100MB-constant": (lambda: _fc(10_000, 10_000), ("100,000,000 B", "4,194,304 B of flash")),
}


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("hostile")
    out = {}
    for name, (make, _) in CASES.items():
        out[name] = d / f"{name}.tflite"
        out[name].write_bytes(make())
    return out


@pytest.mark.parametrize("name", list(CASES))
def test_hostile_model_is_refused_clearly_and_quickly(
        name: str, models: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    commands = [["plan", str(models[name]), "--board", "mps2-an386"]]
    if name != "100MB-constant":       # a valid model, too large for any board: plan refuses
        commands.insert(0, ["inspect", str(models[name])])
    for argv in commands:
        t0 = time.monotonic()
        rc = main(argv)
        took = time.monotonic() - t0
        err = capsys.readouterr().err
        assert rc == 1, (argv[0], err)
        # the error first (plan may say which app it builds before it)
        lines = err.splitlines()
        lead = [ln for ln in lines if not ln.startswith("error: ")][:1]
        assert "Traceback" not in err, err
        assert any(ln.startswith("error: ") for ln in lines), err
        assert err.startswith("error: ") or lead[0].startswith("app: "), err
        for frag in CASES[name][1]:
            assert frag in err, (argv[0], frag, err)
        assert took < SECONDS, f"{argv[0]} took {took:.1f} s"
