"""Every test model's generated code and kernels under AddressSanitizer and UBSan.

Each model is built for the ``host`` board with ``-fsanitize=address,undefined`` (and no
recovery: the first finding aborts the firmware) and runs, over its serial port, on extreme
and random inputs: all minimum (-128), all maximum (127), alternating minimum/maximum, and
random. Every output must equal the tflite-micro reference, the firmware must still be
running afterwards and its stderr must hold no sanitizer report. The same build also has the
debug guards on (``--guards``, tinydeploy/codegen/guards.py): no op of any test model writes
outside its outputs, scratch and state. The default run covers the
two op models (every supported op among them); ``--sweep`` adds every fixture model and the
KWS model.

The same models also run under MemorySanitizer (clang; `tinydeploy.testing.msan`): no
uninitialised byte reaches a result or a branch. A planted uninitialised read must be
reported first, so a toolchain that silently does not instrument fails instead of passing.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from opmodels import OP_MODELS

from tinydeploy.boards import get_board
from tinydeploy.build.firmware import build_firmware
from tinydeploy.flash.runner import Firmware
from tinydeploy.link.connect import connect
from tinydeploy.link.validate import random_inputs, validate_cases
from tinydeploy.model.ir import Graph
from tinydeploy.model.loader import load_tflite
from tinydeploy.testing.msan import REPORT as MSAN_REPORT
from tinydeploy.testing.msan import build_msan, msan_unavailable

ROOT = Path(__file__).resolve().parent.parent
FIX = ROOT / "tests" / "fixtures"
MODELS = {**{n: None for n in sorted(OP_MODELS)},
          "mlp": FIX / "mlp.tflite", "residual": FIX / "residual.tflite",
          "dscnn_small": FIX / "dscnn_small.tflite", "dscnn_kws": FIX / "dscnn_kws.tflite",
          "kws": ROOT / "models" / "kws" / "dscnn_int8.tflite"}
DEFAULT = set(OP_MODELS)
REPORTS = ("AddressSanitizer", "runtime error", "LeakSanitizer", "UndefinedBehaviorSanitizer")


def extreme_inputs(graph, seed: int = 3) -> list[list[np.ndarray]]:  # type: ignore[no-untyped-def]
    """All minimum, all maximum, alternating minimum/maximum, then two random cases."""
    lo_hi = random_inputs(graph, 4, seed=seed)       # [min, max, random, random]
    alternating = []
    for t in graph.inputs:
        if np.issubdtype(t.dtype.numpy, np.integer):
            info = np.iinfo(t.dtype.numpy)
            a = np.where(np.arange(int(np.prod(t.shape))) % 2 == 0, info.min, info.max)
            alternating.append(a.astype(t.dtype.numpy).reshape(t.shape))
        else:
            a = np.where(np.arange(int(np.prod(t.shape))) % 2 == 0, -1e3, 1e3)
            alternating.append(a.astype(t.dtype.numpy).reshape(t.shape))
    return [lo_hi[0], lo_hi[1], alternating, lo_hi[2], lo_hi[3]]


def _run_on_extreme_inputs(name: str, out: Path, build: Callable[[bytes, Graph], None]
                           ) -> tuple[Any, int, bool, str]:
    """Build test model ``name`` for the host into ``out`` with ``build``, validate it on
    its extreme inputs: (report, number of cases, whether the firmware still runs, its log)."""
    path = MODELS[name]
    model = OP_MODELS[name]() if path is None else path.read_bytes()
    graph = load_tflite(model)
    build(model, graph)
    fw = Firmware.from_build_dir(out)
    cases = extreme_inputs(graph)
    with connect(fw, timeout=300) as conn:
        report = validate_cases(conn.session.run, model, cases)
        assert conn.device is not None
        return report, len(cases), conn.device.poll() is None, conn.device.log


@pytest.mark.target
@pytest.mark.parametrize("name", [pytest.param(n, marks=() if n in DEFAULT else
                                               (pytest.mark.slow,)) for n in MODELS])
def test_model_under_asan_and_ubsan_on_extreme_inputs(name: str, tmp_path: Path) -> None:
    out = tmp_path / "fw"
    report, n_cases, alive, log = _run_on_extreme_inputs(
        name, out, lambda model, graph: build_firmware(
            model, get_board("host"), "validate", out, graph=graph, sanitize=True,
            guards=True))
    findings = [line for line in log.splitlines() if any(r in line for r in REPORTS)]
    assert not findings, "\n".join(findings[:20])
    assert alive, f"the sanitized firmware exited:\n{log[-3000:]}"
    m = report.first_mismatch
    assert report.bit_exact_cases == report.cases == n_cases, (
        f"{name}: case {m.case} output {m.output} position {list(m.position)}: device "
        f"{m.actual}, reference {m.expected}" if m else name)


@pytest.fixture(scope="module")
def msan() -> None:
    why = msan_unavailable()
    if why is not None:
        pytest.skip(f"MemorySanitizer cannot run here: {why}")


@pytest.mark.target
@pytest.mark.parametrize("name", [pytest.param(n, marks=() if n in DEFAULT else
                                               (pytest.mark.slow,)) for n in MODELS])
def test_model_under_msan_on_extreme_inputs(name: str, tmp_path: Path, msan: None) -> None:
    out = tmp_path / "fw"

    def build(model: bytes, graph: Graph) -> None:
        build_firmware(model, get_board("host"), "validate", out, graph=graph)
        build_msan(out)

    report, n_cases, alive, log = _run_on_extreme_inputs(name, out, build)
    findings = [line for line in log.splitlines() if MSAN_REPORT in line or "WARNING" in line]
    assert not findings, log[-4000:]
    assert alive, f"the MSan firmware exited:\n{log[-3000:]}"
    assert report.bit_exact_cases == report.cases == n_cases, name
