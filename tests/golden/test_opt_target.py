"""Target tier of the portable optimised kernels: compiled for the Cortex-M0 and run on QEMU
microbit (the micro:bit v1, 16 KB RAM), the core they exist for.

1. Golden: the host tier's cases (tests/golden/test_opt_host.py: convolutions of any kernel,
   stride, dilation and padding, depthwise with multipliers, odd depths and channel counts,
   one output channel, batches, zero points at the int8 ends, saturating and tiny output
   scales, no bias, large biases) run through ``td_conv2d_s8_opt`` / ``td_dwconv2d_s8_opt``,
   the pointwise ones also through the back-to-front twin ``td_conv2d_1x1_back_s8_opt``, in
   the same generated program as on the host, compared byte for byte with the oracle (the
   cases whose input and output fit the micro:bit's RAM beside the runtime: the DS-CNN's
   layers, 8,000 B in and out, run in the DS-CNN validation on the micro:bit instead,
   tests/test_plan_firmware.py).
2. Overlapping buffers: both pointwise orders and the depthwise kernel run with their output
   overlapping their input at the tightest lead and trail their declared access orders
   tolerate (1-byte and 16-byte grids) and at a random safe shift; every result must be the
   oracle's, and the unsafe shift 16 bytes inside the lead must change it (so the check can
   fail). The program and its checks are test_mve_target.py's, built for the Cortex-M0.

The ARM toolchain and QEMU are required (CI installs them): their absence fails the tier.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from test_dsp_host import Spec, build_model, host_selection, input_sets, mismatch
from test_mve_target import (  # noqa: F401 (_tools: the tier's toolchain and QEMU check)
    _tools,
    check_overlapped,
    overlap_cases,
    runtime_target,
    split_by_size,
)
from test_opt_host import CASES, M0_BOARD, OPT, TWIN_CASES, _twin

from benchmarks.bench_kernels import DeviceTarget
from tinydeploy.kernels.registry import select_kernels
from tinydeploy.model.ir import Activation
from tinydeploy.model.loader import load_tflite
from tinydeploy.oracle import run_oracle
from tinydeploy.testing.harness import HostCase
from tinydeploy.testing.target_harness import linker_script, run_target
from tinydeploy.toolchain import Core

pytestmark = pytest.mark.target

MACHINE = "microbit"
RAM_BUDGET = 9 * 1024   # inputs and outputs of one program (16 KB RAM, stack and runtime)

OVERLAP_SPECS = (
    Spec("m0_pw_dscnn_rows", "conv", (1, 5, 5, 64), 64, zp=(-2, 5), seed=31),
    Spec("m0_pw_grow_odd", "conv", (1, 5, 3, 7), 13, zp=(17, -9), seed=32),
    Spec("m0_pw_shrink_odd", "conv", (2, 3, 5, 13), 5, zp=(-128, 127), seed=33),
    Spec("m0_pw_stride2", "conv", (1, 7, 6, 9), 4, stride=(2, 2), zp=(3, 0), seed=34),
    Spec("m0_dw_dscnn_rows", "dw", (1, 6, 5, 32), 32, k=(3, 3), zp=(-128, 0),
         act=Activation.RELU, seed=35),
)


def test_opt_kernels_and_twin_match_oracle_on_cortex_m0(tmp_path: Path) -> None:
    flat = []
    for s in CASES:
        model = build_model(s)
        g = load_tflite(model)
        if g.inputs[0].nbytes + g.outputs[0].nbytes > RAM_BUDGET:
            continue
        sel = select_kernels(g, M0_BOARD)
        assert sel.choices[0].variant.symbol == OPT[s.kind], s.id
        runs = [("fwd", sel)] + ([("twin", _twin(sel, g))] if s in TWIN_CASES else [])
        for name, arr in input_sets(g, s.seed):
            flat += [((s, model, name, label, arr), HostCase(g, (arr,), host_selection(run)))
                     for label, run in runs]
    ran = {f[0][0].id for f in flat}
    assert len(ran) >= len(CASES) - 4 and len(ran & {s.id for s in TWIN_CASES}) >= len(
        TWIN_CASES) - 1, sorted({s.id for s in CASES} - ran)
    failures = []
    for chunk in split_by_size(flat, lambda f: f[1].graph.inputs[0].nbytes
                               + f[1].graph.outputs[0].nbytes, RAM_BUDGET):
        outs = run_target([c for _, c in chunk], machine=MACHINE)
        for ((s, model, name, label, arr), _), o in zip(chunk, outs, strict=True):
            want = run_oracle(model, [arr])[0]
            if not np.array_equal(o[0], want):
                failures.append(f"{s.id} {label} '{name}': {mismatch(o[0], want)}")
    assert not failures, "\n".join(failures)


def m0_target(work: Path) -> DeviceTarget:
    """The overlap program's device: the micro:bit's linker script for the runtime."""
    script = linker_script(MACHINE, work).read_text(encoding="utf-8")
    return runtime_target(work, MACHINE, Core.CORTEX_M0, script)


def test_portable_kernels_with_overlapping_buffers_on_cortex_m0(tmp_path: Path) -> None:
    rng = np.random.default_rng(21)
    cases = [c for s in OVERLAP_SPECS for c in overlap_cases(s, rng, M0_BOARD)]
    assert {c.call.symbol for c in cases} == {
        "td_conv2d_s8_opt", "td_conv2d_1x1_back_s8_opt", "td_dwconv2d_s8_opt"}
    check_overlapped(cases, tmp_path, ("m0_pw_dscnn_rows", "m0_dw_dscnn_rows"), m0_target,
                     96 * 1024)
