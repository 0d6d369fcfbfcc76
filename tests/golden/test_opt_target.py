"""Target tier of the portable optimised kernels: compiled for the Cortex-M0 and run on QEMU
microbit (the micro:bit v1, 16 KB RAM), the core they exist for.

1. Golden: the host tier's pointwise cases (tests/golden/test_opt_host.py: odd depths and
   channel counts, one output channel, strides, batches, zero points at the int8 ends,
   saturating and tiny output scales, no bias, large biases) run through the forward kernel
   ``td_conv2d_s8_opt`` and through its back-to-front twin ``td_conv2d_1x1_back_s8_opt`` in
   the same generated program as on the host, compared byte for byte with the oracle (the
   cases whose input and output fit the micro:bit's RAM beside the runtime: the full DS-CNN
   layer, 8,000 B in and out, runs in the DS-CNN validation on the micro:bit instead,
   tests/test_plan_firmware.py).
2. Overlapping buffers: both pointwise orders and the depthwise kernel run with their output
   overlapping their input at the tightest lead and trail their declared access orders
   tolerate (1-byte and 16-byte grids) and at a random safe shift; every result must be the
   oracle's, and the unsafe shift 16 bytes inside the lead must change it (so the check can
   fail). The program is test_mve_target.py's overlap program, built for the Cortex-M0.

The ARM toolchain and QEMU are required (CI installs them): their absence fails the tier.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from test_dsp_host import Spec, build_model, host_selection, input_sets, mismatch
from test_mve_target import OverlapCase, overlap_chunks, render_overlap_program
from test_opt_host import M0_BOARD, TWIN_CASES, _twin

from tinydeploy.kernels.access import overlap_violation, tolerated_shifts
from tinydeploy.kernels.registry import select_kernels, variant_by_symbol
from tinydeploy.model.ir import Activation
from tinydeploy.model.loader import load_tflite
from tinydeploy.oracle import run_oracle
from tinydeploy.resources import firmware_dir
from tinydeploy.testing.harness import HostCase
from tinydeploy.testing.target_harness import TEST_RT, linker_script, run_target
from tinydeploy.toolchain import Core, cflags, ldflags

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


@pytest.fixture(scope="module", autouse=True)
def _tools() -> None:
    for tool in ("arm-none-eabi-gcc", "qemu-system-arm"):
        if shutil.which(tool) is None:
            pytest.fail(f"the portable target tier needs {tool} (apt-get install "
                        "gcc-arm-none-eabi libnewlib-arm-none-eabi qemu-system-arm)")


def _chunks(cases: list[tuple[tuple, HostCase]]  # type: ignore[type-arg]
            ) -> list[list[tuple[tuple, HostCase]]]:  # type: ignore[type-arg]
    """``cases`` split into programs whose inputs and outputs take under RAM_BUDGET."""
    out: list[list[tuple[tuple, HostCase]]] = [[]]  # type: ignore[type-arg]
    used = 0
    for item in cases:
        g = item[1].graph
        n = g.inputs[0].nbytes + g.outputs[0].nbytes
        if out[-1] and used + n > RAM_BUDGET:
            out.append([])
            used = 0
        out[-1].append(item)
        used += n
    return out


def test_pointwise_orders_match_oracle_on_cortex_m0(tmp_path: Path) -> None:
    flat = []
    for s in TWIN_CASES:
        model = build_model(s)
        g = load_tflite(model)
        if g.inputs[0].nbytes + g.outputs[0].nbytes > RAM_BUDGET:
            continue
        sel = select_kernels(g, M0_BOARD)
        assert sel.choices[0].variant.symbol == "td_conv2d_s8_opt", s.id
        for name, arr in input_sets(g, s.seed):
            for label, run in (("fwd", sel), ("twin", _twin(sel, g))):
                flat.append(((s, model, name, label, arr), HostCase(g, (arr,),
                                                                    host_selection(run))))
    assert len({f[0][0].id for f in flat}) >= len(TWIN_CASES) - 1
    failures = []
    for chunk in _chunks(flat):
        outs = run_target([c for _, c in chunk], machine=MACHINE)
        for ((s, model, name, label, arr), _), o in zip(chunk, outs, strict=True):
            want = run_oracle(model, [arr])[0]
            if not np.array_equal(o[0], want):
                failures.append(f"{s.id} {label} '{name}': {mismatch(o[0], want)}")
    assert not failures, "\n".join(failures)


def _overlap_cases(spec: Spec, rng: np.random.Generator) -> list[OverlapCase]:
    """The selected portable kernel and its twins at the shifts of the module docstring."""
    graph = load_tflite(build_model(spec))
    op = graph.operators[0]
    chosen = select_kernels(graph, M0_BOARD).choices[0].variant
    assert chosen.impl == "opt", chosen.symbol
    kernels = [chosen] + [t for t in (variant_by_symbol(chosen.op, n) for n in chosen.twins)
                          if t.accepts(graph, op) is None]
    inp = rng.integers(-128, 128, size=graph.tensor(op.inputs[0]).size).astype(np.int8)
    n_out = graph.tensor(op.outputs[0]).nbytes
    out: list[OverlapCase] = []
    for v in kernels:
        assert v.access is not None, v.symbol
        call = v.prepare(graph, op)
        order = v.access(call)
        lead, trail = tolerated_shifts(order, 1)
        shifts = {lead, *tolerated_shifts(order, 16)}
        if trail < inp.size:
            shifts.add(trail)
        pool = [s for s in range(lead - 48, min(trail + 48, inp.size))
                if -n_out < s and overlap_violation(order, s) is None]
        if pool:
            shifts.add(int(rng.choice(pool)))
        if -n_out < lead + 16 < inp.size:
            shifts.add(lead + 16)
        srcs = tuple(x for x in v.sources if x.endswith(".c"))
        out += [OverlapCase(spec, call, srcs, inp, n_out, sh,
                            overlap_violation(order, sh) is None) for sh in sorted(shifts)]
    return out


def _run_overlapped(cases: list[OverlapCase], work: Path) -> list[np.ndarray]:
    main_c = work / "overlap.c"
    main_c.write_text(render_overlap_program(cases), encoding="utf-8")
    sources = sorted({s for c in cases for s in c.sources})
    elf = work / "overlap.elf"
    cmd = ["arm-none-eabi-gcc", *cflags(Core.CORTEX_M0, "-O2", stack_analysis=False),
           "-I", str(firmware_dir() / "kernels"), "-I", str(TEST_RT), str(main_c),
           str(TEST_RT / "td_dsp_test_rt.c"), *(str(firmware_dir() / s) for s in sources),
           *ldflags(Core.CORTEX_M0, str(linker_script(MACHINE, work))), "-o", str(elf)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    proc = subprocess.run(["qemu-system-arm", "-M", MACHINE, "-nographic", "-monitor", "none",
                           "-serial", "null", "-semihosting-config", "enable=on,target=native",
                           "-kernel", str(elf)], capture_output=True, text=True, timeout=300)
    lines = (proc.stdout + proc.stderr).splitlines()
    assert proc.returncode == 0 and "end" in lines, "\n".join(lines[-20:])
    outs = [np.frombuffer(bytes.fromhex(lines[i + 1].strip()), dtype=np.int8)
            for i, ln in enumerate(lines) if ln.startswith("ov ")]
    assert len(outs) == len(cases), f"{len(outs)} of {len(cases)} cases reported"
    return outs


def test_portable_kernels_with_overlapping_buffers_on_cortex_m0(tmp_path: Path) -> None:
    rng = np.random.default_rng(21)
    cases = [c for s in OVERLAP_SPECS for c in _overlap_cases(s, rng)]
    assert {c.call.symbol for c in cases} == {
        "td_conv2d_s8_opt", "td_conv2d_1x1_back_s8_opt", "td_dwconv2d_s8_opt"}
    outs = []
    for i, chunk in enumerate(overlap_chunks(cases, 96 * 1024)):
        work = tmp_path / f"p{i}"
        work.mkdir()
        outs += _run_overlapped(chunk, work)
    failures, unsafe_changed = [], set()
    expected: dict[str, np.ndarray] = {}
    for c, got in zip(cases, outs, strict=True):
        if c.spec.id not in expected:
            model = build_model(c.spec)
            g = load_tflite(model)
            expected[c.spec.id] = run_oracle(model, [c.input.reshape(g.inputs[0].shape)]
                                             )[0].reshape(-1)
        same = np.array_equal(got, expected[c.spec.id])
        if c.safe and not same:
            failures.append(f"{c.spec.id} {c.call.symbol} shift {c.shift:+d}: "
                            f"{mismatch(got, expected[c.spec.id])}")
        if not c.safe and not same:
            unsafe_changed.add((c.spec.id, c.call.symbol))
    assert not failures, "\n".join(failures)
    for sid in ("m0_pw_dscnn_rows", "m0_dw_dscnn_rows"):
        for sym in {c.call.symbol for c in cases if c.spec.id == sid and not c.safe}:
            assert (sid, sym) in unsafe_changed, f"{sid} {sym}: the unsafe shift went unseen"

