"""In-place execution, checked on the real C kernels (host harness, sanitizers).

Each variant that declares an access order (`tinydeploy.kernels.access`) is run with its
output overlapping its input at the tightest lead and trail its order tolerates (on a 1-byte
grid, so no alignment slack hides an error), at the planner's 16-byte grid and at one more
safe shift drawn at random; every result
must equal the tflite-micro oracle byte for byte. One unsafe shift (16 bytes less lead than
declared) must change the result, which shows the check can fail. Inputs are random.

The MVE variants declare orders too but run only on the Cortex-M55; their overlaps are
covered by the target tier's DS-CNN validation on mps3-an547 (the plan overlaps every
depthwise and pointwise layer). The back-to-front pointwise kernel (the forward one's twin,
put in by the planner) and the reference one's run here too, with separate and with
overlapping buffers; so do the portable kernels of the Cortex-M0 (``opt``, the micro:bit's
selection) and their back-to-front pointwise twin.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from test_dsp_host import DSP_BOARD, Spec, arm_headers_digest, build_model, host_selection

from tinydeploy.boards import get_board
from tinydeploy.kernels.access import overlap_violation, tolerated_shifts
from tinydeploy.kernels.registry import Selection, select_kernels, variant_by_symbol
from tinydeploy.model.ir import Activation, Graph, Padding
from tinydeploy.model.loader import load_tflite
from tinydeploy.oracle import run_oracle
from tinydeploy.testing.harness import HostCase, cache_dir, run_host, run_overlapped

SPECS: tuple[Spec, ...] = (
    Spec("dw_dscnn", "dw", (1, 25, 5, 64), 64, k=(3, 3), zp=(-128, 0), act=Activation.RELU,
         seed=1),
    Spec("dw_c5_stride2", "dw", (1, 7, 6, 5), 5, k=(3, 3), stride=(2, 2), zp=(3, -4), seed=2),
    Spec("dw_c7_valid_dil", "dw", (2, 8, 7, 7), 7, k=(3, 3), dilation=(2, 1),
         padding=Padding.VALID, zp=(127, 0), seed=3),
    Spec("pw_dscnn", "conv", (1, 25, 5, 64), 64, zp=(-2, 5), seed=4),
    Spec("pw_grow", "conv", (1, 5, 3, 6), 13, zp=(17, -9), seed=5),
    Spec("pw_shrink_odd", "conv", (1, 3, 5, 13), 6, zp=(-128, 127), seed=6),
    Spec("pw_stride2", "conv", (1, 7, 6, 9), 4, stride=(2, 2), zp=(3, 0), seed=7),
    # the one-channel kernel: pairs split at the border rows, an odd channel, and a kernel
    # taller than its gather buffer (windows read again for every pair of channels)
    Spec("c1_dscnn0", "conv", (1, 21, 10, 1), 9, k=(10, 4), stride=(2, 2), zp=(-2, -128),
         act=Activation.RELU, seed=10),
    Spec("c1_tall", "conv", (1, 30, 5, 1), 4, k=(14, 4), stride=(1, 2), zp=(17, 3), seed=11),
    # pointwise deeper than the 1x1 kernel's stack buffer: the general kernel's 1x1 path
    Spec("pw_deep_general", "conv", (1, 3, 5, 70), 66, zp=(-5, 8), seed=12),
)
REF_ONLY: tuple[Spec, ...] = (
    Spec("dw_5x5_mult2", "dw", (1, 6, 6, 3), 6, k=(5, 5), zp=(-7, 2), seed=8),
    Spec("cv_3x3_grow", "conv", (1, 6, 5, 4), 8, k=(3, 3), zp=(9, -3), seed=9),
)


@pytest.fixture(scope="module", autouse=True)
def harness_cache() -> Iterator[Path]:
    import os

    old = os.environ.get("TD_HARNESS_CACHE")
    path = cache_dir() / f"arm-{arm_headers_digest()}"
    path.mkdir(parents=True, exist_ok=True)
    os.environ["TD_HARNESS_CACHE"] = str(path)
    yield path
    if old is None:
        del os.environ["TD_HARNESS_CACHE"]
    else:
        os.environ["TD_HARNESS_CACHE"] = old


M0_BOARD = get_board("microbit-v1")
BOARDS = {"dsp": DSP_BOARD, "twin": DSP_BOARD, "opt": M0_BOARD, "opttwin": M0_BOARD}


def _cases() -> list[tuple[Spec, str]]:
    return ([(s, b) for s in SPECS for b in ("ref", "dsp", "opt")]
            + [(s, t) for s in SPECS if s.kind == "conv" and s.k == (1, 1)
               and s.in_shape[3] <= 64 for t in ("twin", "reftwin")]
            + [(s, "opttwin") for s in SPECS if s.kind == "conv" and s.k == (1, 1)]
            + [(s, b) for s in REF_ONLY for b in ("ref", "opt")])


def _selection(g: Graph, impl: str) -> Selection:
    """The board's selection; "twin" / "reftwin" / "opttwin": the selected dsp / reference /
    portable variant's twin put in its place (the back-to-front pointwise kernels), as the
    planner does."""
    sel = select_kernels(g, BOARDS.get(impl))
    if impl in ("twin", "reftwin", "opttwin"):
        c = sel.choices[0]
        (name,) = c.variant.twins
        twin = variant_by_symbol(c.variant.op, name)
        sel = Selection((replace(c, variant=twin, call=twin.prepare(g, g.operators[0])),))
    return host_selection(sel)


@pytest.mark.parametrize("spec,impl", _cases(), ids=[f"{s.id}-{b}" for s, b in _cases()])
def test_overlapping_buffers_match_oracle(spec: Spec, impl: str) -> None:
    model = build_model(spec)
    g = load_tflite(model)
    sel = _selection(g, impl)
    choice = sel.choices[0]
    want = {"twin": "dsp", "reftwin": "ref", "opttwin": "opt"}.get(impl, impl)
    assert choice.variant.impl == want, choice.variant.symbol
    assert choice.variant.access is not None and choice.call is not None
    order = choice.variant.access(choice.call)
    x = np.random.default_rng(spec.seed + 77).integers(-128, 128, g.inputs[0].shape)
    x = x.astype(np.int8)
    expected = run_oracle(model, [x])[0]
    if impl in ("twin", "reftwin", "opttwin"):   # and with separate buffers, through the harness
        (sep,) = run_host([HostCase(g, (x,), sel)])[0]
        assert np.array_equal(sep, expected), f"{spec.id} {choice.variant.symbol}"
    lead, trail = tolerated_shifts(order, 1)
    lead16, trail16 = tolerated_shifts(order, 16)
    assert overlap_violation(order, lead + 1) is not None or lead == 0
    shifts = {lead, lead16}
    if trail < order.in_bytes:
        assert trail == 0 or overlap_violation(order, trail - 1) is not None
        shifts |= {trail, trail16}
    # and one more safe overlap, drawn at random on the planner's grid (for the back-to-front
    # kernel: a trail, the overlap the planner gives it in the DS-CNN)
    grid = range(-(order.out_bytes // 16) * 16 + 16, order.in_bytes, 16)
    safe = [s for s in grid if overlap_violation(order, s) is None]
    if safe:
        shifts.add(int(np.random.default_rng(spec.seed).choice(safe)))
    for shift in sorted(shifts):
        got = run_overlapped(g, [x], sel, shift)
        diff = np.argwhere(got != expected)
        assert diff.size == 0, (f"{spec.id} {choice.variant.symbol}, output {shift:+d} bytes "
                                f"from the input: {len(diff)} values differ, first at "
                                f"{tuple(int(i) for i in diff[0])}")


def test_unsafe_overlap_changes_the_result() -> None:
    """16 bytes less lead than the depthwise kernel declares overwrites inputs still to be
    read: the real kernel then computes something else (so the check above can fail)."""
    spec = SPECS[0]
    model = build_model(spec)
    g = load_tflite(model)
    sel = host_selection(select_kernels(g, None))
    order = sel.choices[0].variant.access(sel.choices[0].call)
    lead, _ = tolerated_shifts(order, 16)
    x = np.random.default_rng(5).integers(-128, 128, g.inputs[0].shape).astype(np.int8)
    expected = run_oracle(model, [x])[0]
    assert overlap_violation(order, lead + 16) is not None
    assert not np.array_equal(run_overlapped(g, [x], sel, lead + 16), expected)
