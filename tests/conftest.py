"""Shared pytest options. ``--sweep`` enables the larger randomized sweeps (tests marked
``slow``); ``--soak`` makes the soak tests (tests/test_soak.py) run at full length; the
default run stays within a few minutes on two cores."""

from __future__ import annotations

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--sweep", action="store_true", default=False,
                     help="run the larger randomized sweeps (tests marked slow)")
    parser.addoption("--soak", action="store_true", default=False,
                     help="run the soak tests at full length: 10,000 inferences on QEMU and "
                          "an hour of audio through kws stream (tests/test_soak.py)")
    parser.addoption("--mutations", type=int, default=300,
                     help="randomly damaged models in tests/test_fuzz_regressions.py "
                          "(default 300; the fuzz run, make fuzz, checks 2,000)")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("--sweep"):
        return
    skip = pytest.mark.skip(reason="larger sweep: run with --sweep")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)
