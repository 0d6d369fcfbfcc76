"""Golden tests: int8 ADD, MUL (broadcasting), QUANTIZE, DEQUANTIZE vs tflite-micro."""

from __future__ import annotations

import numpy as np
import pytest

from tinydeploy.errors import UnsupportedError
from tinydeploy.kernels.elementwise import broadcast_strides
from tinydeploy.kernels.registry import select_kernels
from tinydeploy.model.ir import Activation
from tinydeploy.model.loader import load_tflite
from tinydeploy.testing.builder import ModelBuilder

try:
    from cases_elementwise import (
        BinaryCase,
        default_binary_cases,
        default_convert_cases,
        sweep_cases,
    )
    from golden_ops import arm_compile_errors, check
except ImportError:  # pragma: no cover - when tests/golden is a package
    from .cases_elementwise import (
        BinaryCase,
        default_binary_cases,
        default_convert_cases,
        sweep_cases,
    )
    from .golden_ops import arm_compile_errors, check


def test_add_mul_match_tflite_micro() -> None:
    check([c.build() for c in default_binary_cases()])


def test_quantize_dequantize_match_tflite_micro() -> None:
    check([c.build() for c in default_convert_cases()])


@pytest.mark.slow
def test_add_mul_sweep() -> None:
    check([c.build() for c in sweep_cases()])


@pytest.mark.parametrize("s0,s1", [((2, 3, 4), (4,)), ((2, 1, 4), (1, 3, 1)),
                                   ((1, 2, 1, 3, 1, 5), (2, 1, 4, 1, 6, 1)), ((5,), (1,))])
def test_broadcast_strides_address_the_numpy_broadcast(s0: tuple[int, ...],
                                                       s1: tuple[int, ...]) -> None:
    """Walking (dims, strides) as the C kernel does visits exactly numpy's broadcast pairs."""
    out = np.broadcast_shapes(s0, s1)
    a = np.arange(int(np.prod(s0))).reshape(s0)
    b = np.arange(int(np.prod(s1))).reshape(s1)
    dims, st0, st1 = broadcast_strides(s0, s1, out)
    idx = np.indices(dims).reshape(len(dims), -1).T
    got_a = (idx * np.array(st0)).sum(axis=1)
    got_b = (idx * np.array(st1)).sum(axis=1)
    ea, eb = np.broadcast_arrays(a, b)
    np.testing.assert_array_equal(got_a, ea.reshape(-1))
    np.testing.assert_array_equal(got_b, eb.reshape(-1))
    assert len(dims) == 6 and int(np.prod(dims)) == int(np.prod(out))


def test_binary_ops_run_in_place_and_constant_operand_moves_to_params() -> None:
    c = BinaryCase("ADD", (4,), (4,), (0.1, 0), (0.1, 0), (0.2, 0), const=0)
    choice = select_kernels(load_tflite(c.build().model)).choices[0]
    assert choice.variant.inplace
    assert choice.call is not None
    assert choice.call.param("in1_const") == "@in1_data"
    assert choice.call.args == ("in1", "in1", "out0")


def test_add_with_output_scale_tflm_cannot_represent_is_rejected() -> None:
    c = BinaryCase("ADD", (4,), (4,), (1.0, 0), (1.0, 0), (1e-6, 0))
    with pytest.raises(UnsupportedError, match="output scale"):
        select_kernels(load_tflite(c.build().model))


def test_add_of_incompatible_shapes_is_rejected() -> None:
    b = ModelBuilder()
    x = b.tensor("x", (2, 3), "int8", scale=0.1, zero_point=0)
    y = b.tensor("y", (2, 4), "int8", scale=0.1, zero_point=0)
    z = b.tensor("z", (2, 4), "int8", scale=0.1, zero_point=0)
    b.op("ADD", [x, y], [z])
    with pytest.raises(UnsupportedError, match="do not broadcast"):
        select_kernels(load_tflite(b.build([x, y], [z])))


def test_tanh_fused_activation_is_rejected() -> None:
    c = BinaryCase("MUL", (4,), (4,), (0.1, 0), (0.1, 0), (0.2, 0), Activation.TANH)
    with pytest.raises(UnsupportedError, match="TANH"):
        select_kernels(load_tflite(c.build().model))


@pytest.mark.target
def test_elementwise_kernels_build_for_cortex_m_without_warnings() -> None:
    errors = arm_compile_errors(
        ["kernels/ref/td_add_s8_ref.c", "kernels/ref/td_mul_s8_ref.c",
         "kernels/ref/td_quantize_f32_ref.c", "kernels/ref/td_dequantize_s8_ref.c"])
    assert not errors, "\n".join(errors)
