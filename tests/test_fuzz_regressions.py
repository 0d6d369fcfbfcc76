"""Replays the inputs the fuzzer saved (tests/fixtures/fuzz_regressions/) and its seeds.

Each must run through load, inspect, select, plan and render raising nothing but the
toolkit's own errors, within the fuzzer's 10 s limit. The 60-second fuzzing run itself is a
step of `.ci/run` (`make fuzz FUZZ_SECONDS=60`), not part of this test run.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE / "fuzz"))

from pipeline import check_one, cleanup  # noqa: E402
from run import TIMEOUT_S, seeds  # noqa: E402

REGRESSIONS = HERE / "fixtures" / "fuzz_regressions"
SAVED = sorted(p for p in REGRESSIONS.iterdir() if p.is_file() and p.suffix != ".md")


@pytest.fixture(scope="module", autouse=True)
def _cleanup() -> object:
    yield
    cleanup()


@pytest.mark.parametrize("path", SAVED, ids=[p.name[:24] for p in SAVED])
def test_saved_fuzz_input_is_handled(path: Path) -> None:
    t0 = time.monotonic()
    check_one(path.read_bytes())
    assert time.monotonic() - t0 < TIMEOUT_S


def test_fuzz_seeds_run_through_the_whole_path() -> None:
    """The seeds are valid models (a seed that does not load would seed nothing)."""
    from tinydeploy.model.loader import load_tflite

    s = seeds()
    assert len(s) >= 6
    for data in s.values():
        load_tflite(data)
        check_one(data)
