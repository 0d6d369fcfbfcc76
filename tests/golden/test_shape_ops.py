"""Golden tests: int8 PAD/PADV2, CONCATENATION, STRIDED_SLICE and MEAN vs tflite-micro."""

from __future__ import annotations

import numpy as np
import pytest

from tinydeploy.errors import ToolchainError, UnsupportedError
from tinydeploy.kernels.registry import select_kernels
from tinydeploy.kernels.shape_ops import mean_multiplier, strided_slice_plan
from tinydeploy.model.ir import ConcatenationOptions, StridedSliceOptions
from tinydeploy.model.loader import load_tflite
from tinydeploy.oracle import run_oracle
from tinydeploy.testing.builder import ModelBuilder

try:
    from cases_shape_ops import ConcatCase, MeanCase, SliceCase, default_cases, sweep_cases
    from golden_ops import arm_compile_errors, check
except ImportError:  # pragma: no cover - when tests/golden is a package
    from .cases_shape_ops import ConcatCase, MeanCase, SliceCase, default_cases, sweep_cases
    from .golden_ops import arm_compile_errors, check


def test_shape_ops_match_tflite_micro() -> None:
    check([c.build() for c in default_cases()])


@pytest.mark.slow
def test_slice_and_mean_sweep() -> None:
    # empty slices (which TFLM cannot allocate) and shrunk axes with negative strides (which
    # TFLM leaves unwritten) are rejected by tinydeploy: see the tests below
    cases = [c for c in sweep_cases()
             if not isinstance(c, SliceCase) or 0 not in strided_slice_plan(
                 c.shape, list(c.begin), list(c.end), list(c.strides), c.begin_mask,
                 c.end_mask, c.shrink_mask)[1]]
    assert len(cases) > 80
    check([c.build() for c in cases])


@pytest.mark.parametrize("shape,begin,end,strides", [
    ((10,), (8,), (-100,), (-3,)), ((6, 7), (-1, 6), (-7, -8), (-1, -2)),
    ((3, 4, 5), (0, 1, 1), (3, 4, 5), (2, 2, 3)), ((5,), (1,), (4,), (1,)),
])
def test_slice_plan_agrees_with_python_slicing(shape: tuple[int, ...], begin: tuple[int, ...],
                                               end: tuple[int, ...],
                                               strides: tuple[int, ...]) -> None:
    """Independent check of the host index logic: Python's own slice semantics agree with
    TFLM's for in-range begin/end without masks."""
    x = np.arange(int(np.prod(shape))).reshape(shape)
    sl = tuple(slice(b if b >= -n else None, e if e >= -n else None, s)
               for b, e, s, n in zip(begin, end, strides, shape, strict=True))
    expected = x[sl].reshape(-1)
    start, counts, steps, out_shape = strided_slice_plan(shape, list(begin), list(end),
                                                         list(strides), 0, 0, 0)
    idx = np.indices(counts).reshape(len(counts), -1).T
    got = x.reshape(-1)[start + (idx * np.array(steps)).sum(axis=1)]
    assert out_shape == list(x[sl].shape)
    np.testing.assert_array_equal(got, expected)


def test_mean_multiplier_folds_the_count_in() -> None:
    m, s = mean_multiplier(0.1, 0.1, 49)
    assert abs(m * 2.0 ** (s - 31) - 1 / 49) < 1e-6


def test_concatenation_with_different_quantization_is_rejected_like_tflm() -> None:
    b = ModelBuilder()
    x0 = b.tensor("x0", (2, 3), "int8", scale=0.1, zero_point=0)
    x1 = b.tensor("x1", (2, 3), "int8", scale=0.2, zero_point=0)
    y = b.tensor("y", (2, 6), "int8", scale=0.1, zero_point=0)
    b.op("CONCATENATION", [x0, x1], [y], ConcatenationOptions(1))
    model = b.build([x0, x1], [y])
    with pytest.raises(ToolchainError):
        run_oracle(model, [np.zeros((2, 3), np.int8)] * 2)   # TFLM refuses it at Prepare
    with pytest.raises(UnsupportedError, match="identical quantization"):
        select_kernels(load_tflite(model))


def test_strided_slice_ellipsis_mask_is_rejected() -> None:
    b = ModelBuilder()
    x = b.tensor("x", (4, 4), "int8", scale=0.1, zero_point=0)
    idx = [b.tensor(n, (2,), "int32", data=np.array([0, 0], np.int32)) for n in "bes"]
    y = b.tensor("y", (4, 4), "int8", scale=0.1, zero_point=0)
    b.op("STRIDED_SLICE", [x, *idx], [y], StridedSliceOptions(0, 0, 1, 0, 0))
    with pytest.raises(UnsupportedError, match="ellipsis_mask"):
        select_kernels(load_tflite(b.build([x], [y])))


def test_mean_declares_an_int32_scratch_per_output() -> None:
    g = load_tflite(MeanCase((1, 5, 7, 3), (1, 2)).build().model)
    call = select_kernels(g).choices[0].call
    assert call is not None and call.scratch_bytes == 4 * 3 and call.args[-1] == "scratch"


def test_concatenation_takes_one_argument_per_input() -> None:
    g = load_tflite(ConcatCase(((2, 3), (2, 4), (2, 1)), 1).build().model)
    call = select_kernels(g).choices[0].call
    assert call is not None and call.args == ("in0", "in1", "in2", "out0")
    assert list(call.const("chunks").values) == [3, 4, 1]


def test_shrink_axis_with_negative_stride_is_rejected() -> None:
    c = SliceCase((3, 4), (-1, 0), (0, 4), (-1, 1), 0, 0, 1)
    with pytest.raises(UnsupportedError, match="negative stride"):
        select_kernels(load_tflite(c.build().model))


@pytest.mark.target
def test_shape_ops_kernels_build_for_cortex_m_without_warnings() -> None:
    errors = arm_compile_errors(
        ["kernels/ref/td_pad_s8_ref.c", "kernels/ref/td_concatenation_s8_ref.c",
         "kernels/ref/td_strided_slice_s8_ref.c", "kernels/ref/td_mean_s8_ref.c"])
    assert not errors, "\n".join(errors)
