"""The golden-test framework: single-op models against the tflite-micro oracle, byte for byte.

A test module declares its cases as data (`GoldenCase`: an id, the model bytes, the spec it
came from, and one or more named input sets) and calls `check_case` from a parametrized
test. The host results of all cases of one list are computed in a single sanitized program
(`tinydeploy.testing.harness.run_host`) on first use and cached, so hundreds of cases cost
one compile; if that program fails, each case is re-run alone so that the failure names the
case that caused it.

A mismatch reports the case id, its spec, the input set, the number of differing bytes, and
the first differing positions with actual (tinydeploy) and expected (oracle) values.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from tinydeploy.errors import TinydeployError
from tinydeploy.model.ir import DType, Graph
from tinydeploy.model.loader import load_tflite
from tinydeploy.oracle import run_oracle
from tinydeploy.testing.harness import HostCase, run_host

MAX_REPORTED = 8


@dataclass(frozen=True)
class GoldenCase:
    id: str
    model: bytes
    spec: Any = None
    input_sets: tuple[tuple[str, tuple[np.ndarray, ...]], ...] = field(default=(), repr=False)

    @property
    def graph(self) -> Graph:
        return load_tflite(self.model)


def _limits(dtype: DType) -> tuple[int, int]:
    info = np.iinfo(dtype.numpy)
    return int(info.min), int(info.max)


def standard_inputs(graph: Graph, seed: int) -> tuple[tuple[str, tuple[np.ndarray, ...]], ...]:
    """Random inputs (uniform over the dtype's range) and the two extremes (all min, all
    max) for every graph input."""
    rng = np.random.default_rng(seed)
    rand, lo, hi = [], [], []
    for t in graph.inputs:
        a, b = _limits(t.dtype)
        rand.append(rng.integers(a, b + 1, size=t.shape).astype(t.dtype.numpy))
        lo.append(np.full(t.shape, a, dtype=t.dtype.numpy))
        hi.append(np.full(t.shape, b, dtype=t.dtype.numpy))
    return (("random", tuple(rand)), ("all_min", tuple(lo)), ("all_max", tuple(hi)))


def make_case(case_id: str, model: bytes, spec: Any, seed: int) -> GoldenCase:
    return GoldenCase(case_id, model, spec, standard_inputs(load_tflite(model), seed))


_host_cache: dict[int, dict[str, list[list[np.ndarray]] | Exception]] = {}


def _host_results(cases: Sequence[GoldenCase]) -> dict[str, list[list[np.ndarray]] | Exception]:
    key = id(cases)
    if key in _host_cache:
        return _host_cache[key]
    flat: list[tuple[str, HostCase]] = []
    for c in cases:
        g = c.graph
        for _name, inputs in c.input_sets:
            flat.append((c.id, HostCase(g, inputs)))
    results: dict[str, list[list[np.ndarray]] | Exception] = {}
    try:
        outs = run_host([h for _, h in flat])
        for (cid, _), o in zip(flat, outs, strict=True):
            lst = results.setdefault(cid, [])
            assert isinstance(lst, list)
            lst.append(o)
    except TinydeployError:
        results = {}
        for c in cases:   # isolate the failing case(s)
            g = c.graph
            try:
                results[c.id] = run_host([HostCase(g, inp) for _, inp in c.input_sets])
            except TinydeployError as e:
                results[c.id] = e
    _host_cache[key] = results
    return results


def describe_mismatch(actual: np.ndarray, expected: np.ndarray) -> str:
    if actual.shape != expected.shape or actual.dtype != expected.dtype:
        return (f"shape/dtype differ: actual {actual.shape} {actual.dtype}, "
                f"expected {expected.shape} {expected.dtype}")
    diff = np.argwhere(actual != expected)
    lines = [f"{len(diff)} of {actual.size} values differ; first ones (position: actual / "
             "expected):"]
    for pos in diff[:MAX_REPORTED]:
        p = tuple(int(i) for i in pos)
        lines.append(f"  {p}: {actual[p]} / {expected[p]}")
    return "\n".join(lines)


def check_case(case: GoldenCase, cases: Sequence[GoldenCase]) -> None:
    """Assert the host kernels give the oracle's bytes for every input set of ``case``.

    ``cases`` is the module's whole list (the same object every call), batched on first use.
    """
    host = _host_results(cases)[case.id]
    if isinstance(host, Exception):
        raise AssertionError(f"case {case.id} ({case.spec}): host run failed: {host}")
    failures = []
    for (name, inputs), got in zip(case.input_sets, host, strict=True):
        expected = run_oracle(case.model, list(inputs))
        for k, (a, e) in enumerate(zip(got, expected, strict=True)):
            if not np.array_equal(a, e) or a.dtype != e.dtype:
                failures.append(f"input set '{name}', output {k}: {describe_mismatch(a, e)}")
    if failures:
        raise AssertionError(f"case {case.id}\n  spec: {case.spec}\n" + "\n".join(failures))
