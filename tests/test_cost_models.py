"""The selector's per-op instruction estimates against the device: each op of a build, as
`bench` measures it on the emulated Cortex-M4 (QEMU ``-icount``), within +-15 % of the
estimate the selector compared kernels by (benchmarks/bench_costs.py).

Default run: the small test models (one build each). ``--sweep``: every test model in
``balanced`` and ``speed``, and the public models in ``$TINYDEPLOY_PUBLIC_MODELS`` (a folder
of ``.tflite`` files: MLPerf Tiny's four trained models and TFLM's person_detect, fetched
beforehand; skipped when the variable is unset).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from benchmarks.bench_costs import (
    SMALL_OP,
    SMALL_OP_SLACK,
    TEST_MODELS,
    TOLERANCE,
    OpCheck,
    check_costs,
)

FIX = Path(__file__).parent / "fixtures"
BOARD = "mps2-an386"


def _violations(checks: list[OpCheck], measured_total: int) -> list[str]:
    """The ops (and the total) whose estimate is off by more than `TOLERANCE`."""
    bad = [f"op {c.index} {c.op} {c.symbol}: estimated {c.estimated:,}, measured "
           f"{c.measured:,} ({c.error:+.1%})" for c in checks if not c.within(TOLERANCE)]
    # the sum of the estimates is what `plan` prints as the model's estimate
    est = sum(c.estimated for c in checks)
    if abs(est / measured_total - 1) > TOLERANCE:
        bad.append(f"total: estimated {est:,}, measured {measured_total:,}")
    return bad


def _assert_within(model: Path, optimize: str, work: Path) -> None:
    checks, r = check_costs(model, BOARD, optimize, work)
    assert checks, model.name
    bad = _violations(checks, r["instructions_per_inference"])
    assert not bad, f"{model.name} ({optimize}):\n" + "\n".join(bad)


@pytest.mark.target
@pytest.mark.parametrize("name", ["dscnn_small", "mlp", "residual"])
def test_estimates_match_the_device(name: str, tmp_path: Path) -> None:
    _assert_within(FIX / f"{name}.tflite", "balanced", tmp_path)


def test_a_wrong_estimate_is_caught() -> None:
    """The comparison is not vacuous: 20 % off fails, 10 % passes, either sign."""
    ok = [OpCheck(0, "CONV_2D", "k", 110_000, 100_000),
          OpCheck(1, "ADD", "a", 90_000, 100_000)]
    assert _violations(ok, 200_000) == []
    bad = _violations([OpCheck(0, "CONV_2D", "k", 120_000, 100_000),
                       OpCheck(1, "ADD", "a", 80_000, 100_000)], 200_000)
    assert len(bad) == 2 and "+20.0%" in bad[0] and "-20.0%" in bad[1]
    assert _violations(ok, 300_000)[-1].startswith("total")
    # a small op may be off by SMALL_OP_SLACK instructions, not more
    small = OpCheck(2, "SOFTMAX", "s", 1_000 + SMALL_OP_SLACK, 1_000)
    assert small.within(TOLERANCE)
    assert not OpCheck(2, "SOFTMAX", "s", 1_001 + SMALL_OP_SLACK, 1_000).within(TOLERANCE)
    assert not OpCheck(3, "CONV_2D", "k", 2 * SMALL_OP, SMALL_OP).within(TOLERANCE)


def _public() -> list[Path]:
    folder = os.environ.get("TINYDEPLOY_PUBLIC_MODELS")
    return sorted(Path(folder).glob("*.tflite")) if folder else []


@pytest.mark.slow
@pytest.mark.target
@pytest.mark.parametrize("optimize", ["balanced", "speed"])
@pytest.mark.parametrize("model", [*TEST_MODELS, *_public()], ids=lambda p: p.stem)
def test_estimates_match_the_device_sweep(model: Path, optimize: str, tmp_path: Path) -> None:
    _assert_within(model, optimize, tmp_path)
