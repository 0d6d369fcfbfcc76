"""Golden tier for the core ops: every case byte-for-byte equal to the tflite-micro oracle
on random inputs and on all -128 / all 127 inputs. ``--sweep`` adds a random sweep of
``$TD_SWEEP_CASES`` cases (default 400)."""

from __future__ import annotations

import os

import pytest
from cases_core import core_cases, sweep_cases
from framework import check_case

CASES = core_cases()


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_core_op_matches_oracle(case) -> None:  # type: ignore[no-untyped-def]
    check_case(case, CASES)


def test_default_run_covers_every_core_op() -> None:
    ops = {c.graph.operators[0].opcode for c in CASES}
    assert ops == {"CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "AVERAGE_POOL_2D",
                   "MAX_POOL_2D", "SOFTMAX", "RESHAPE", "SQUEEZE"}
    assert len(CASES) >= 150


SWEEP_CASES = int(os.environ.get("TD_SWEEP_CASES", "400"))
_SWEEP: list = []


def _sweep() -> list:
    if not _SWEEP:
        _SWEEP.extend(sweep_cases(SWEEP_CASES))
    return _SWEEP


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    # the sweep's cases exist only with --sweep (one skipped item otherwise, not hundreds)
    if "sweep_index" in metafunc.fixturenames:
        n = SWEEP_CASES if metafunc.config.getoption("--sweep") else 0
        metafunc.parametrize("sweep_index", range(n))


@pytest.mark.slow
def test_core_sweep_matches_oracle(sweep_index: int) -> None:
    k = sweep_index
    cases = _sweep()
    check_case(cases[k], cases)
