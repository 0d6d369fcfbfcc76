"""Golden tests: int8 activation ops (lookup tables computed on the host) vs tflite-micro."""

from __future__ import annotations

import numpy as np
import pytest

from tinydeploy.errors import ToolchainError, UnsupportedError
from tinydeploy.kernels import activations
from tinydeploy.kernels.registry import select_kernels
from tinydeploy.model.loader import load_tflite
from tinydeploy.oracle import run_oracle
from tinydeploy.testing.builder import ModelBuilder

try:
    from cases_activations import ActCase, default_cases, sweep_cases
    from golden_ops import arm_compile_errors, check
except ImportError:  # pragma: no cover - when tests/golden is a package
    from .cases_activations import ActCase, default_cases, sweep_cases
    from .golden_ops import arm_compile_errors, check


def test_activation_kernels_match_tflite_micro() -> None:
    cases = default_cases()
    assert len(cases) >= 40
    check([c.build() for c in cases])


@pytest.mark.slow
def test_activation_sweep() -> None:
    check([c.build() for c in sweep_cases()])


@pytest.mark.parametrize("case", [
    ActCase("LOGISTIC", (256,), 0.07, -20), ActCase("TANH", (256,), 0.013, 90),
    ActCase("HARD_SWISH", (256,), 0.04, -7, 0.02, -100),
    ActCase("LEAKY_RELU", (256,), 0.1, 3, 0.07, -9, -0.3),
], ids=lambda c: c.op)
def test_lut_is_the_oracle_on_all_256_inputs(case: ActCase) -> None:
    """The Python tables alone (no C) equal the interpreter's output for every int8 input."""
    built = case.build()
    x = built.inputs[0]
    expected = run_oracle(built.model, [x])[0]
    call = select_kernels(load_tflite(built.model)).choices[0].call
    assert call is not None and call.symbol == activations.LUT_SYMBOL
    lut = call.const("lut").values
    np.testing.assert_array_equal(lut[x.astype(np.int32) + 128], expected)


def test_lut_kernel_is_declared_inplace() -> None:
    g = load_tflite(ActCase("TANH", (4,), 0.1, 0).build().model)
    assert select_kernels(g).choices[0].variant.inplace


def _logistic_model(out_zp: int) -> bytes:
    b = ModelBuilder()
    x = b.tensor("x", (8,), "int8", scale=0.1, zero_point=0)
    y = b.tensor("y", (8,), "int8", scale=1 / 256, zero_point=out_zp)
    b.op("LOGISTIC", [x], [y])
    return b.build([x], [y])


def test_logistic_with_other_output_zero_point_is_rejected_like_tflm() -> None:
    model = _logistic_model(0)
    with pytest.raises(ToolchainError):
        run_oracle(model, [np.zeros(8, np.int8)])   # TFLM refuses it at Prepare too
    with pytest.raises(UnsupportedError, match="zero point is 0"):
        select_kernels(load_tflite(model))


def test_hard_swish_with_too_small_output_scale_is_rejected() -> None:
    b = ModelBuilder()
    x = b.tensor("x", (8,), "int8", scale=1.0, zero_point=0)
    y = b.tensor("y", (8,), "int8", scale=0.001, zero_point=0)
    b.op("HARD_SWISH", [x], [y])
    with pytest.raises(UnsupportedError, match="HARD_SWISH"):
        select_kernels(load_tflite(b.build([x], [y])))


def test_float_activation_is_rejected_with_reason() -> None:
    b = ModelBuilder()
    x = b.tensor("x", (8,), "float32")
    y = b.tensor("y", (8,), "float32")
    b.op("RELU", [x], [y])
    with pytest.raises(UnsupportedError, match="FLOAT32, not INT8"):
        select_kernels(load_tflite(b.build([x], [y])))


@pytest.mark.target
def test_activations_kernels_build_for_cortex_m_without_warnings() -> None:
    errors = arm_compile_errors(
        ["kernels/ref/td_lut_s8_ref.c"])
    assert not errors, "\n".join(errors)
