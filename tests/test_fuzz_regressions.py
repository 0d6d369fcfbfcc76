"""Replays the inputs the fuzzer saved (tests/fixtures/fuzz_regressions/) and its seeds.

Each must run through load, inspect, select, plan and render raising nothing but the
toolkit's own errors, within the fuzzer's 10 s limit. The 60-second fuzzing run itself is a
step of `.ci/run` (`make fuzz FUZZ_SECONDS=60`), not part of this test run; that step first
runs this file with ``--mutations 2000`` (2,000 randomly damaged models, about half a minute).
"""

from __future__ import annotations

import contextlib
import io
import random
import sys
import time
import traceback
from pathlib import Path

import numpy as np
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


def mutate(data: bytes, rng: random.Random) -> bytes:
    """``data`` with 1 to 8 bytes replaced by random ones, at random places: a damaged model
    whose flatbuffer mostly still parses, so that the damage reaches the stages after the
    loader (scales, shapes, options, constant data)."""
    out = bytearray(data)
    for _ in range(rng.randint(1, 8)):
        out[rng.randrange(len(out))] = rng.randrange(256)
    return bytes(out)


def test_randomly_mutated_models_raise_only_domain_errors(request: pytest.FixtureRequest
                                                         ) -> None:
    """``--mutations`` (300; 2,000 in the fuzz run) randomly damaged copies of the seeds
    through load, inspect (every variant's `accepts`, for any core), select, plan and
    report: each returns or raises a TinydeployError, never anything a user would see as a
    traceback. The first escaping exception fails the test with its seed, mutation number
    and traceback."""
    rng = random.Random(20261204)
    s = seeds()
    names = sorted(s)
    for i in range(int(request.config.getoption("--mutations"))):
        name = names[i % len(names)]
        data = mutate(s[name], rng)
        try:
            check_one(data, render=False)
        except Exception as err:  # noqa: BLE001 - any exception but a domain error is the bug
            pytest.fail(f"mutation {i} of {name}: {type(err).__name__}: {err}\n"
                        + "".join(traceback.format_exception(err)))


def test_damaged_scales_name_the_filter_channel_and_value(tmp_path: Path) -> None:
    """A convolution whose effective scale is 2^30 or more (a damaged filter scale) is
    refused by `inspect` with the filter, the channel and the value, exit status 0 and no
    traceback; `plan` exits 1 with the same reason."""
    from tinydeploy.cli import main
    from tinydeploy.model.loader import load_tflite

    data = seeds()["kws_dscnn_int8.tflite"]
    graph = load_tflite(data)
    conv = next(op for op in graph.operators if op.type_name == "CONV_2D")
    filt = graph.tensor(conv.inputs[1])
    assert filt.quant is not None
    old = np.float32(filt.quant.scale[0]).tobytes()
    assert data.count(old) >= 1
    new = np.float32(filt.quant.scale[0] * 2.0 ** 60).tobytes()
    model = tmp_path / "damaged.tflite"
    model.write_bytes(data.replace(old, new, 1))
    err = io.StringIO()
    out = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
        rc = main(["inspect", str(model), "--json"])
    assert rc == 0, err.getvalue()
    assert "Traceback" not in err.getvalue()
    assert f"filter '{filt.name}' channel 0" in out.getvalue()
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        rc = main(["plan", str(model), "--board", "mps2-an386"])
    assert rc == 1
    assert "Traceback" not in err.getvalue() and "outside the kernels' [-31, 30]" in \
        err.getvalue()
