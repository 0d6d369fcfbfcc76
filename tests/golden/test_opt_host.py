"""Golden tier of the portable optimised kernels (tinydeploy/kernels/portable.py), on the host.

The CONV_2D and DEPTHWISE_CONV_2D cases of the dsp tier (odd channels and pixel counts, any
kernel, 1 input channel, depth multipliers > 1, dilation, SAME/VALID, stride > kernel, zero
points at the int8 ends, extreme multipliers and shifts, huge biases) are selected for the
Cortex-M0 micro:bit (no DSP extension), where the ``opt`` variant must be chosen, compiled on
the host with sanitizers and compared byte for byte with the tflite-micro oracle. Plus one
case per form of the host's decisions: the input offset folded (windows inside the image)
or not, the rounding form of the requantization or the general one. Every pointwise case
runs a second time with the back-to-front twin ``td_conv2d_1x1_back_s8_opt`` in the forward
kernel's place (as the planner puts it in), with separate buffers; its overlapping buffers
are tests/golden/test_inplace_host.py's.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from test_dsp_host import (  # noqa: F401 (harness_cache is a fixture)
    SPECS,
    Spec,
    build_model,
    harness_cache,
    host_selection,
    input_sets,
    mismatch,
)

from tinydeploy.boards import get_board
from tinydeploy.kernels.registry import Selection, select_kernels, variant_by_symbol
from tinydeploy.model.ir import Graph, Padding
from tinydeploy.model.loader import load_tflite
from tinydeploy.oracle import run_oracle
from tinydeploy.testing.harness import CFLAGS, KERNEL_INCLUDE, HostCase, run_host

M0_BOARD = get_board("microbit-v1")
OPT = {"conv": "td_conv2d_s8_opt", "dw": "td_dwconv2d_s8_opt"}
TWIN = variant_by_symbol("CONV_2D", "td_conv2d_1x1_back_s8_opt")

EXTRA = (
    Spec("opt_dw_mult3_c4", "dw", (1, 6, 5, 4), 12, k=(3, 2), stride=(2, 1), zp=(9, -3)),
    Spec("opt_dw_mult2_valid", "dw", (2, 5, 5, 3), 6, k=(3, 3), padding=Padding.VALID,
         zp=(-128, 0)),
    Spec("opt_pw_folded", "conv", (1, 4, 4, 9), 5, zp=(77, -5)),
    # pointwise edges for the pairs of output channels: shifts >= 0 (tiny output scale), a
    # saturating output scale, one output channel, odd depths, batches with a stride
    Spec("opt_pw_shift_pos", "conv", (1, 3, 4, 7), 5, zp=(5, -5), out_scale=0.00001),
    Spec("opt_pw_saturating", "conv", (1, 4, 3, 33), 3, zp=(-128, 0), out_scale=0.004),
    Spec("opt_pw_oc1_odd", "conv", (2, 3, 5, 5), 1, zp=(-1, 3)),
    Spec("opt_pw_batch2_stride", "conv", (2, 5, 7, 3), 9, stride=(2, 3), zp=(-128, 127),
         bias=False),
)
CASES = tuple(s for s in SPECS if s.kind in OPT) + EXTRA


def _twin(sel: Selection, g: Graph) -> Selection:
    """``sel`` with the back-to-front twin in the pointwise kernel's place."""
    c = sel.choices[0]
    assert c.variant.twins == (TWIN.symbol,), c.variant
    return Selection((replace(c, variant=TWIN, call=TWIN.prepare(g, g.operators[0])),))


def _twinned(s: Spec) -> bool:
    g = load_tflite(build_model(s))
    return TWIN.accepts(g, g.operators[0]) is None


TWIN_CASES = tuple(s for s in CASES if s.kind == "conv" and _twinned(s))


@pytest.fixture(scope="module")
def outputs(harness_cache: Path  # noqa: F811 (the dsp tier's fixture)
            ) -> Iterator[dict[str, list[tuple[str, np.ndarray, np.ndarray]]]]:
    """Per case id (twin runs: id + "-twin") the (input set, output, oracle) triples."""
    flat = []
    for s in CASES:
        model = build_model(s)
        g = load_tflite(model)
        sel = select_kernels(g, M0_BOARD)
        assert sel.choices[0].variant.symbol == OPT[s.kind], (s.id, sel.choices[0].variant)
        runs = [(s.id, sel)] + ([(s.id + "-twin", _twin(sel, g))] if s in TWIN_CASES else [])
        for name, arr in input_sets(g, s.seed):
            flat += [(key, model, name, arr, HostCase(g, (arr,), host_selection(run)))
                     for key, run in runs]
    outs = run_host([f[4] for f in flat])
    res: dict[str, list[tuple[str, np.ndarray, np.ndarray]]] = {}
    for (key, model, name, arr, _), o in zip(flat, outs, strict=True):
        res.setdefault(key, []).append((name, o[0], run_oracle(model, [arr])[0]))
    yield res


def _check(key: str, spec: Spec, outputs: dict) -> None:  # type: ignore[type-arg]
    failures = [f"input set '{name}': {mismatch(got, want)}"
                for name, got, want in outputs[key] if not np.array_equal(got, want)]
    assert not failures, f"{key} ({spec})\n" + "\n".join(failures)


@pytest.mark.parametrize("spec", CASES, ids=[s.id for s in CASES])
def test_opt_kernel_matches_oracle(spec: Spec, outputs: dict) -> None:  # type: ignore[type-arg]
    _check(spec.id, spec, outputs)


@pytest.mark.parametrize("spec", TWIN_CASES, ids=[s.id for s in TWIN_CASES])
def test_opt_back_twin_matches_oracle(spec: Spec, outputs: dict  # type: ignore[type-arg]
                                      ) -> None:
    _check(spec.id + "-twin", spec, outputs)


def test_opt_decisions_cover_both_forms() -> None:
    """The cases exercise folded and unfolded input offsets and both requantization forms."""
    folded = form = 0
    for s in CASES:
        call = select_kernels(load_tflite(build_model(s)), M0_BOARD).choices[0].call
        assert call is not None
        folded |= 1 << int(call.param("input_offset") == 0)
        form |= 1 << int(call.param("requant_form"))
    assert folded == 3 and form == 3


HIGH_MUL_CHECK = r"""
#include <stdio.h>
#include "td_opt_dot.h"

static uint32_t state = 0x2545F491u;

static uint32_t next(void)   /* a 32-bit LCG, its high bits folded into the low ones */
{
    state = state * 1664525u + 1013904223u;
    return state ^ (state >> 16);
}

static int32_t wide(int32_t acc, int32_t m)   /* td_smmulr2 in 64 bits */
{
    const int64_t a = (int32_t)((uint32_t)acc << 1);
    return (int32_t)((a * m + ((int64_t)1 << 31)) >> 32);
}

int main(void)
{
    static const int32_t accs[] = { 0, 1, -1, 2, -2, 0x7FFF, 0x8000, -0x8000, 0xFFFF, 0x10000,
                                    -0x10000, 0x3FFFFFFF, -0x40000000, 0x7FFFFFFF,
                                    -0x7FFFFFFF - 1, 0x12345678, -0x12345678 };
    static const int32_t ms[] = { 0, 1, 0x7FFF, 0x8000, 0xFFFF, 0x10000, 0x40000000,
                                  0x40000001, 0x5A827999, 0x7FFFFFFE, 0x7FFFFFFF };
    unsigned long n = 0, bad = 0;
    for (unsigned i = 0; i < sizeof accs / sizeof accs[0]; ++i) {
        for (unsigned j = 0; j < sizeof ms / sizeof ms[0]; ++j, ++n) {
            bad += td_opt_smmulr2(accs[i], ms[j]) != wide(accs[i], ms[j]);
        }
    }
    for (unsigned long k = 0; k < 2000000ul; ++k, ++n) {
        const int32_t acc = (int32_t)next() >> (next() % 32u);
        const int32_t m = (int32_t)(next() >> (1u + next() % 31u));
        bad += td_opt_smmulr2(acc, m) != wide(acc, m);
    }
    printf("%lu %lu\n", n, bad);
    return 0;
}
"""


def test_opt_high_multiply_equals_the_64_bit_one(tmp_path: Path) -> None:
    """td_opt_smmulr2 (the rounding form's high multiply from 16-bit halves, for the M0)
    equals the 64-bit (2 acc m + 2^31) >> 32 for corner operands (int32 ends, half-word
    boundaries, the multipliers' range ends) and 2,000,000 random ones, under UBSan (no
    product overflows its type)."""
    cc = shutil.which("gcc") or shutil.which("cc")
    assert cc is not None, "the host tier needs a C compiler (apt-get install gcc)"
    src = tmp_path / "check.c"
    src.write_text(HIGH_MUL_CHECK, encoding="utf-8")
    exe = tmp_path / "check"
    build = subprocess.run([cc, *CFLAGS, "-I", str(KERNEL_INCLUDE), "-I",
                            str(KERNEL_INCLUDE / "opt"), str(src), "-o", str(exe)],
                           capture_output=True, text=True, timeout=120)
    assert build.returncode == 0, build.stderr[-3000:]
    run = subprocess.run([str(exe)], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0 and not run.stderr, run.stderr[-3000:]
    n, bad = (int(v) for v in run.stdout.split())
    assert n > 2_000_000 and bad == 0, run.stdout
