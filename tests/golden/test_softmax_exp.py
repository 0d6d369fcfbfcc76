"""Golden tier of `td_softmax_s8_exp_ref` (int8 softmax with the exp computed on the device):
every SOFTMAX case of the core golden tier plus edge cases (differences cut by diff_min, a
scale so small that only the maximum counts, a multiplier at its largest left shift, rows of
one value, 3-D inputs, rows of 1,000), each with the standard input sets (random, all -128,
all 127), forced to this variant and compared byte for byte with the tflite-micro oracle on
the host (sanitizers) and on the emulated Cortex-M4 (QEMU mps2-an386, -O2).

The ARM toolchain and QEMU are required for the target test (CI installs them).
"""

from __future__ import annotations

import shutil
from dataclasses import replace

import numpy as np
import pytest
from cases_core import SoftmaxSpec, build_softmax, softmax_specs
from framework import GoldenCase, describe_mismatch, make_case

from tinydeploy.kernels.registry import KernelChoice, Selection, variant_by_symbol
from tinydeploy.oracle import run_oracle
from tinydeploy.testing.harness import HostCase, run_host

SYMBOL = "td_softmax_s8_exp_ref"

EXTRA = (SoftmaxSpec((1, 12), 0.9, in_zp=5),          # diff_min cuts most differences
         SoftmaxSpec((2, 7), 100.0),                   # beta * scale huge: only the max
         SoftmaxSpec((1, 12), 1e-6, beta=1.0),         # tiny scale: largest left shift
         SoftmaxSpec((3, 5, 4), 0.07, in_zp=-128, beta=3.0),
         SoftmaxSpec((1, 1000), 0.011, in_zp=17))


def _cases() -> list[GoldenCase]:
    cases = []
    for i, s in enumerate(softmax_specs() + list(EXTRA)):
        case = make_case("exp_" + s.id, build_softmax(s), s, seed=70_000 + i)
        if s.shape[-1] >= 512:   # TFLM aborts on >= 512 equal maxima: random input only
            case = replace(case, input_sets=case.input_sets[:1])
        cases.append(case)
    return cases


CASES = _cases()


def sweep_cases(n: int, seed: int = 5) -> list[GoldenCase]:
    """``n`` random softmax cases (rows 1-3, depth 1-79, scale 1e-4..30, any zero point, beta
    0.1..5) that the variant accepts."""
    rng = np.random.default_rng(seed)
    variant = variant_by_symbol("SOFTMAX", SYMBOL)
    cases = []
    for i in range(n):
        s = SoftmaxSpec((int(rng.integers(1, 4)), int(rng.integers(1, 80))),
                        float(10 ** rng.uniform(-4, 1.5)), in_zp=int(rng.integers(-128, 128)),
                        beta=float(10 ** rng.uniform(-1, 0.7)))
        c = make_case(f"exp_sweep{i}_" + s.id, build_softmax(s), s, seed=90_000 + i)
        if variant.accepts(c.graph, c.graph.operators[0]) is None:
            cases.append(c)
    return cases


def _host_cases(cases: list[GoldenCase] | None = None) -> list[tuple[str, str, HostCase]]:
    """(case id, input set name, host case with the exp variant forced) for every input set."""
    variant = variant_by_symbol("SOFTMAX", SYMBOL)
    out = []
    for c in CASES if cases is None else cases:
        g = c.graph
        op = g.operators[0]
        assert variant.accepts(g, op) is None, (c.id, variant.accepts(g, op))
        v = replace(variant, sources=tuple(s for s in variant.sources if s.endswith(".c")))
        sel = Selection((KernelChoice(0, v, variant.prepare(g, op)),))
        out.extend((c.id, name, HostCase(g, inputs, sel)) for name, inputs in c.input_sets)
    return out


def _compare(results: list[list[np.ndarray]], flat: list[tuple[str, str, HostCase]],
             cases: list[GoldenCase] | None = None) -> None:
    models = {c.id: c.model for c in (CASES if cases is None else cases)}
    failures = []
    for (cid, name, hc), got in zip(flat, results, strict=True):
        want = run_oracle(models[cid], list(hc.inputs))[0]
        if not np.array_equal(got[0], want) or got[0].dtype != want.dtype:
            failures.append(f"{cid} input set '{name}': {describe_mismatch(got[0], want)}")
    assert not failures, "\n".join(failures)


def test_exp_softmax_matches_oracle_on_the_host() -> None:
    flat = _host_cases()
    assert len(flat) >= 60
    _compare(run_host([h for _, _, h in flat]), flat)


@pytest.mark.slow
def test_exp_softmax_random_sweep_matches_oracle() -> None:
    """--sweep: 300 random cases x 3 input sets on the host."""
    cases = sweep_cases(300)
    flat = _host_cases(cases)
    _compare(run_host([h for _, _, h in flat]), flat, cases)


def test_edge_cases_reach_the_kernel_paths() -> None:
    """The declared edges exist: some case drops differences below diff_min, and one uses
    the largest left shift the scaling allows."""
    variant = variant_by_symbol("SOFTMAX", SYMBOL)
    params = [dict(variant.prepare(c.graph, c.graph.operators[0]).params) for c in CASES]
    assert any(int(p["diff_min"]) > -255 for p in params)
    assert max(int(p["left_shift"]) for p in params) >= 20
    assert all(int(p["multiplier"]) >= 1 << 30 for p in params)


@pytest.mark.target
def test_exp_softmax_matches_oracle_on_the_emulated_m4() -> None:
    for tool in ("arm-none-eabi-gcc", "qemu-system-arm"):
        if shutil.which(tool) is None:
            pytest.fail(f"the target tier needs {tool} (apt-get install gcc-arm-none-eabi "
                        "libnewlib-arm-none-eabi qemu-system-arm)")
    from tinydeploy.testing.target_harness import run_target

    flat = _host_cases()
    _compare(run_target([h for _, _, h in flat], machine="mps2-an386"), flat)


@pytest.mark.parametrize("depth,mode,symbol", [
    (12, "balanced", SYMBOL), (12, "size", SYMBOL), (12, "speed", "td_softmax_s8_ref"),
    (1000, "balanced", "td_softmax_s8_ref"), (1000, "size", SYMBOL)])
def test_selection_weighs_the_exp_table(depth: int, mode: str, symbol: str) -> None:
    """balanced keeps the 1,024 B table only where it saves >= 8 instructions per byte (1,000
    classes), not for 12 classes; speed always takes it, size never."""
    from tinydeploy.boards import get_board
    from tinydeploy.model.loader import load_tflite
    from tinydeploy.plan.choose import BALANCED_INSTRUCTIONS_PER_BYTE, choose_kernels

    g = load_tflite(build_softmax(SoftmaxSpec((1, depth), 0.1)))
    choice = choose_kernels(g, get_board("mps2-an386"), mode)
    assert choice.selection.choices[0].variant.symbol == symbol
    costs = {c.symbol: c for c, _ in choice.layers[0].alternatives}
    table, exp = costs["td_softmax_s8_ref"], costs[SYMBOL]
    assert exp.const_bytes == 0 and table.const_bytes == 1024
    saved = exp.instructions - table.instructions
    assert (saved >= BALANCED_INSTRUCTIONS_PER_BYTE * 1024) == (depth == 1000)
