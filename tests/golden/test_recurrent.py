"""Golden tests: int8 SVDF and UNIDIRECTIONAL_SEQUENCE_LSTM vs tflite-micro, over one
invocation and several (variable tensors persist between invocations)."""

from __future__ import annotations

import os
import subprocess
import tempfile
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from tinydeploy.codegen import cemit
from tinydeploy.errors import UnsupportedError
from tinydeploy.kernels.recurrent import SIGMOID_TABLE_Q16, variable_reset_value
from tinydeploy.kernels.registry import select_kernels
from tinydeploy.model.loader import load_tflite
from tinydeploy.testing import harness
from tinydeploy.testing.builder import ModelBuilder
from tinydeploy.testing.probes import probe_sigmoid_table

try:
    from cases_recurrent import (
        LstmCase,
        SvdfCase,
        default_cases,
        lstm16_cases,
        lstm_cases,
        sweep_cases,
    )
    from golden_ops import arm_compile_errors, check, compare
except ImportError:  # pragma: no cover - when tests/golden is a package
    from .cases_recurrent import (
        LstmCase,
        SvdfCase,
        default_cases,
        lstm16_cases,
        lstm_cases,
        sweep_cases,
    )
    from .golden_ops import arm_compile_errors, check, compare

STEPS = 12


def test_svdf_first_invocation_matches_tflite_micro() -> None:
    check([c.build() for c in default_cases()])


def _oracle_steps(model: bytes, frames: list[np.ndarray]) -> list[np.ndarray]:
    from tflite_micro.python.tflite_micro import runtime

    it = runtime.Interpreter.from_bytes(model)
    outs = []
    for f in frames:
        it.set_input(f, 0)
        it.invoke()
        outs.append(np.array(it.get_output(0), copy=True))
    return outs


def _host_steps(model: bytes, frames: list[np.ndarray], work: Path) -> list[np.ndarray]:
    """Run the selected kernel `len(frames)` times with persistent variable tensors, as the
    firmware does: each starts at TFLM's reset value and is never touched between calls."""
    g = load_tflite(model)
    choice = select_kernels(g).choices[0]
    call = choice.call
    assert call is not None
    op = g.operators[0]
    x, y = g.tensor(op.inputs[0]), g.tensor(op.outputs[0])
    feed = np.stack(frames).astype(x.dtype.numpy).reshape(-1)
    xc, yc = x.dtype.c_type, y.dtype.c_type
    src = [
        "#include <stdio.h>\n#include <string.h>\n#include \"td_kernels.h\"\n",
        cemit.emit_consts(call, "op0", static=True),
        cemit.emit_params(call, "op0", static=True),
        f"static const {xc} frames[{feed.size}] = {{\n{cemit.format_values(feed, xc)}"
        "\n};\n",
        f"static {xc} in0[{x.size}];\nstatic {yc} out0[{y.size}];\n",
        f"static uint8_t scratch[{max(16, call.scratch_bytes)}];\n",
    ]
    resets, args = [], {"in0": "in0", "out0": "out0", "scratch": "scratch"}
    for a in call.args:
        if a.startswith("in") and a != "in0":
            t = g.tensor(op.inputs[int(a[2:])])
            assert t.is_variable, f"{a} is not a variable tensor"
            src.append(f"static {t.dtype.c_type} var_{a}[{t.size}];\n")
            resets.append(f"    for (int i = 0; i < {t.size}; ++i) var_{a}[i] = "
                          f"{variable_reset_value(t)};\n")
            args[a] = f"(const {t.dtype.c_type} *)var_{a}"
    src += ["int main(void)\n{\n", *resets,
            f"    for (int t = 0; t < {len(frames)}; ++t) {{\n",
            f"        memcpy(in0, frames + t * {x.size}, sizeof in0);\n",
            "        memset(scratch, 0xA5, sizeof scratch);\n",
            "        " + cemit.emit_call(call, "op0", args) + "\n",
            "        fwrite(out0, 1, sizeof out0, stdout);\n    }\n    return 0;\n}\n"]
    main_c = work / "main.c"
    main_c.write_text("".join(src))
    objs = [str(harness.compile_kernel(s)) for s in choice.variant.sources
            if s.endswith(".c")]
    exe = work / "steps"
    cc = os.environ.get("CC", "gcc")
    subprocess.run([cc, "-std=c99", "-O0", "-g", *harness.SANITIZE, "-I",
                    str(harness.KERNEL_INCLUDE), str(main_c), *objs, "-o", str(exe)],
                   check=True, capture_output=True)
    out = subprocess.run([str(exe)], check=True, capture_output=True).stdout
    assert len(out) == len(frames) * y.nbytes
    return [np.frombuffer(out[t * y.nbytes:(t + 1) * y.nbytes], y.dtype.numpy).reshape(y.shape)
            for t in range(len(frames))]


def _check_steps(name: str, model: bytes, frames: list[np.ndarray]) -> list[np.ndarray]:
    expected = _oracle_steps(model, frames)
    with tempfile.TemporaryDirectory() as d:
        actual = _host_steps(model, frames, Path(d))
    problems = []
    for t, (e, a) in enumerate(zip(expected, actual, strict=True)):
        problems += compare(f"{name} invocation {t}", [e], [a])
    assert not problems, "\n".join(problems)
    return expected


@pytest.mark.parametrize("case", default_cases(), ids=lambda c: c.name)
def test_svdf_state_persists_across_invocations(case: SvdfCase) -> None:
    expected = _check_steps(case.name, case.model(), case.inputs(STEPS))
    # the later steps depend on the memory: they are not all saturated
    late = np.concatenate([e.reshape(-1) for e in expected[case.memory:]])
    assert np.mean((late > -128) & (late < 127)) > 0.3


def test_svdf_state_input_is_not_constant_and_is_passed_to_the_kernel() -> None:
    g = load_tflite(SvdfCase(1, 4, 2, 1, 3).model())
    call = select_kernels(g).choices[0].call
    assert call is not None and call.args == ("in0", "in4", "out0", "scratch")
    assert g.tensor(g.operators[0].inputs[4]).is_variable


def test_svdf_without_bias_is_rejected() -> None:
    b = ModelBuilder()
    x = b.tensor("x", (1, 4), "int8", scale=0.1, zero_point=0)
    wf = b.tensor("wf", (2, 4), "int8", scale=0.1, data=np.ones(8))
    wt = b.tensor("wt", (2, 3), "int16", scale=0.1, data=np.ones(6))
    st = b.tensor("st", (1, 6), "int16", scale=0.1, is_variable=True)
    y = b.tensor("y", (1, 2), "int8", scale=0.1, zero_point=0)
    from tinydeploy.model.ir import SVDFOptions
    b.op("SVDF", [x, wf, wt, -1, st], [y], SVDFOptions(1))
    with pytest.raises(UnsupportedError, match="bias is missing"):
        select_kernels(load_tflite(b.build([x], [y])))


def test_lstm_matches_tflite_micro() -> None:
    check([c.build() for c in lstm_cases()])


@pytest.mark.parametrize("case", lstm_cases()[:4], ids=lambda c: c.name)
def test_lstm_states_persist_across_invocations(case: LstmCase) -> None:
    expected = _check_steps(case.name, case.model(), case.inputs(4))
    assert not all(np.array_equal(expected[0], e) for e in expected[1:])


def test_16x8_lstm_matches_tflite_micro_over_invocations() -> None:
    """16x8 LSTM (int16 input/hidden/output, int64 bias): the first invocation of every
    case in one program, then four invocations in a row of two of them (states carry)."""
    cases = lstm16_cases()
    check([c.build() for c in cases], "td_lstm_s16_ref".__eq__)
    for case in cases[:2]:
        expected = _check_steps(case.name, case.model(), case.inputs(4))
        assert not all(np.array_equal(expected[0], e) for e in expected[1:])


@pytest.mark.slow
def test_recurrent_sweep() -> None:
    check([c.build() for c in sweep_cases()])


@pytest.mark.slow
@pytest.mark.parametrize("case", sweep_cases()[:10], ids=lambda c: c.name)
def test_recurrent_sweep_over_invocations(case: SvdfCase | LstmCase) -> None:
    _check_steps(case.name, case.model(), case.inputs(5))


def test_sigmoid_table_is_the_interpreters() -> None:
    assert probe_sigmoid_table() == SIGMOID_TABLE_Q16


def test_lstm_with_peephole_is_rejected() -> None:
    g = load_tflite(LstmCase(1, 2, 3, 4).model())
    op = g.operators[0]
    ins = list(op.inputs)
    ins[9] = ins[1]  # a cell-to-input (peephole) tensor
    bad = replace(g, subgraphs=(replace(g.main, operators=(replace(op, inputs=tuple(ins)),)),))
    with pytest.raises(UnsupportedError, match="peephole"):
        select_kernels(bad)


@pytest.mark.target
def test_svdf_kernels_build_for_cortex_m_without_warnings() -> None:
    errors = arm_compile_errors(
        ["kernels/ref/td_svdf_s8_s16_ref.c", "kernels/ref/td_svdf_s8_s8_ref.c",
         "kernels/ref/td_lstm_s8_ref.c", "kernels/ref/td_lstm_s16_ref.c"])
    assert not errors, "\n".join(errors)
