"""Golden tests of the ops added for issue 13 against the tflite-micro oracle (host tier),
plus the checks that refuse what TFLM would compute differently."""

from __future__ import annotations

import pytest

from tinydeploy.errors import UnsupportedError
from tinydeploy.kernels.registry import select_kernels
from tinydeploy.model.loader import load_tflite

try:
    from cases_ops import (
        In,
        OpCase,
        Out,
        binary_cases,
        layout_cases,
        reduce_resize_cases,
        unary_cases,
    )
    from golden_ops import arm_compile_errors, check
except ImportError:  # pragma: no cover - when tests/golden is a package
    from .cases_ops import (
        In,
        OpCase,
        Out,
        binary_cases,
        layout_cases,
        reduce_resize_cases,
        unary_cases,
    )
    from .golden_ops import arm_compile_errors, check


def test_binary_ops_match_tflite_micro() -> None:
    cases = binary_cases()
    assert {c.op for c in cases} == {"SUB", "MAXIMUM", "MINIMUM", "SQUARED_DIFFERENCE",
                                     "PRELU"}
    check([c.build() for c in cases])


def test_maximum_with_mixed_quantization_is_refused() -> None:
    c = OpCase("MAXIMUM", (In((4,), (0.1, 0)), In((4,), (0.2, 0))), (Out((4,), (0.1, 0)),))
    with pytest.raises(UnsupportedError, match="share one quantization"):
        select_kernels(load_tflite(c.build().model))


def test_squared_difference_above_4d_is_refused() -> None:
    s = (1, 2, 1, 2, 3)
    c = OpCase("SQUARED_DIFFERENCE", (In(s, (0.1, 0)), In(s, (0.1, 0))),
               (Out(s, (0.1, 0)),))
    with pytest.raises(UnsupportedError, match="up to 4-D"):
        select_kernels(load_tflite(c.build().model))


def test_table_ops_match_tflite_micro() -> None:
    check([c.build() for c in unary_cases()])


NEW_SOURCES = [
    "kernels/ref/td_sub_s8_ref.c", "kernels/ref/td_maximum_s8_ref.c",
    "kernels/ref/td_minimum_s8_ref.c", "kernels/ref/td_squared_difference_s8_ref.c",
    "kernels/ref/td_prelu_s8_ref.c", "kernels/ref/td_transpose_s8_ref.c",
    "kernels/ref/td_split_s8_ref.c", "kernels/ref/td_reduce_max_s8_ref.c",
    "kernels/ref/td_resize_nearest_s8_ref.c", "kernels/ref/td_resize_bilinear_s8_ref.c",
]


@pytest.mark.target
def test_new_op_kernels_build_for_cortex_m_without_warnings() -> None:
    errors = arm_compile_errors(NEW_SOURCES)
    assert not errors, "\n".join(errors)


def test_layout_ops_match_tflite_micro() -> None:
    check([c.build() for c in layout_cases()])


def test_split_with_a_data_dependent_axis_is_refused() -> None:
    from tinydeploy.model.builder import ModelBuilder
    from tinydeploy.model.ir import SplitOptions

    b = ModelBuilder()
    axis = b.tensor("axis", (1,), "int32")
    x = b.tensor("x", (4, 6), "int8", scale=0.1, zero_point=0)
    y0 = b.tensor("y0", (4, 3), "int8", scale=0.1, zero_point=0)
    y1 = b.tensor("y1", (4, 3), "int8", scale=0.1, zero_point=0)
    b.op("SPLIT", [axis, x], [y0, y1], SplitOptions(2))
    with pytest.raises(UnsupportedError, match="depend on data"):
        select_kernels(load_tflite(b.build([axis, x], [y0, y1])))


def test_reduce_and_resize_ops_match_tflite_micro() -> None:
    check([c.build() for c in reduce_resize_cases()])


def test_resize_with_a_data_dependent_size_is_refused() -> None:
    from tinydeploy.model.builder import ModelBuilder

    b = ModelBuilder()
    x = b.tensor("x", (1, 2, 2, 1), "int8", scale=0.1, zero_point=0)
    size = b.tensor("size", (2,), "int32")
    y = b.tensor("y", (1, 4, 4, 1), "int8", scale=0.1, zero_point=0)
    b.op("RESIZE_BILINEAR", [x, size], [y])
    with pytest.raises(UnsupportedError, match="depend on data"):
        select_kernels(load_tflite(b.build([x, size], [y])))
