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
        float_cases,
        int16_add_cases,
        int16_bias32_cases,
        int16_cases,
        int16_copy_cases,
        int16_minmax_cases,
        int16_shape_cases,
        int16_sigmoid_cases,
        int16_softmax_cases,
        int16_window_cases,
        layout_cases,
        log_softmax_cases,
        matmul_cases,
        reduce_resize_cases,
        unary_cases,
    )
    from cases_shape_ops import int16_cases as int16_pad_slice_cases
    from golden_ops import arm_compile_errors, check, compare
except ImportError:  # pragma: no cover - when tests/golden is a package
    from .cases_ops import (
        In,
        OpCase,
        Out,
        binary_cases,
        float_cases,
        int16_add_cases,
        int16_bias32_cases,
        int16_cases,
        int16_copy_cases,
        int16_minmax_cases,
        int16_shape_cases,
        int16_sigmoid_cases,
        int16_softmax_cases,
        int16_window_cases,
        layout_cases,
        log_softmax_cases,
        matmul_cases,
        reduce_resize_cases,
        unary_cases,
    )
    from .cases_shape_ops import int16_cases as int16_pad_slice_cases
    from .golden_ops import arm_compile_errors, check, compare


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
    "kernels/ref/td_batch_matmul_s8_ref.c", "kernels/ref/td_transpose_conv_s8_ref.c",
    "kernels/ref/td_l2norm_s8_ref.c", "kernels/ref/td_log_softmax_s8_ref.c",
    "kernels/ref/td_elu_f32_ref.c", "kernels/ref/td_abs_f32_ref.c",
    "kernels/ref/td_logistic_f32_ref.c", "kernels/ref/td_tanh_f32_ref.c",
    "kernels/ref/td_fully_connected_s16_ref.c", "kernels/ref/td_conv2d_s16_ref.c",
    "kernels/ref/td_quantize_s16_s8_ref.c", "kernels/ref/td_quantize_s8_s16_ref.c",
    "kernels/ref/td_quantize_s16_s16_ref.c", "kernels/ref/td_quantize_s16_s32_ref.c",
    "kernels/ref/td_quantize_s8_s32_ref.c", "kernels/ref/td_dequantize_s16_ref.c",
    "kernels/ref/td_dwconv2d_s16_ref.c", "kernels/ref/td_avgpool2d_s16_ref.c",
    "kernels/ref/td_maxpool2d_s16_ref.c", "kernels/ref/td_softmax_s8_s16_ref.c",
    "kernels/ref/td_add_s16_ref.c", "kernels/ref/td_sub_s16_ref.c", "kernels/ref/td_mul_s16_ref.c",
    "kernels/ref/td_mean_s16_ref.c", "kernels/ref/td_concatenation_s16_ref.c",
    "kernels/ref/td_transpose_s16_ref.c", "kernels/ref/td_split_s16_ref.c",
    "kernels/ref/td_split_f32_ref.c",
    "kernels/ref/td_pad_s16_ref.c", "kernels/ref/td_strided_slice_s16_ref.c",
    "kernels/ref/td_resize_nearest_s16_ref.c", "kernels/ref/td_pad_s8_ref.c",
    "kernels/ref/td_strided_slice_s8_ref.c", "kernels/ref/td_concatenation_s8_ref.c",
    "kernels/ref/td_logistic_s16_ref.c", "kernels/ref/td_tanh_s16_ref.c",
    "kernels/ref/td_fully_connected_s16_b32_ref.c", "kernels/ref/td_conv2d_s16_b32_ref.c",
    "kernels/ref/td_softmax_s16_ref.c", "kernels/ref/td_lstm_s16_ref.c",
    "kernels/ref/td_maximum_s16_ref.c", "kernels/ref/td_minimum_s16_ref.c",
]


@pytest.mark.target
def test_new_op_kernels_build_for_cortex_m_without_warnings() -> None:
    errors = arm_compile_errors(NEW_SOURCES)
    assert not errors, "\n".join(errors)


def test_layout_ops_match_tflite_micro() -> None:
    check([c.build() for c in layout_cases()])


def test_split_with_a_data_dependent_axis_is_refused() -> None:
    from tinydeploy.model.ir import SplitOptions
    from tinydeploy.testing.builder import ModelBuilder

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
    from tinydeploy.testing.builder import ModelBuilder

    b = ModelBuilder()
    x = b.tensor("x", (1, 2, 2, 1), "int8", scale=0.1, zero_point=0)
    size = b.tensor("size", (2,), "int32")
    y = b.tensor("y", (1, 4, 4, 1), "int8", scale=0.1, zero_point=0)
    b.op("RESIZE_BILINEAR", [x, size], [y])
    with pytest.raises(UnsupportedError, match="depend on data"):
        select_kernels(load_tflite(b.build([x, size], [y])))


def test_matmul_transpose_conv_l2norm_match_tflite_micro() -> None:
    check([c.build() for c in matmul_cases()])


def test_log_softmax_matches_tflite_micro() -> None:
    check([c.build() for c in log_softmax_cases()])


def test_float_ops_between_dequantize_and_quantize_match_tflite_micro() -> None:
    """On a board with an FPU the float ELU/ABS/LOGISTIC/TANH kernels are chosen and give the
    interpreter's bytes for every int8 input."""
    from tinydeploy.boards import get_board
    from tinydeploy.oracle import run_oracle
    from tinydeploy.testing.harness import HostCase, run_host

    board = get_board("mps2-an386")
    built = [c.build() for c in float_cases()]
    graphs = [load_tflite(b.model) for b in built]
    sels = [select_kernels(g, board) for g in graphs]
    for sel in sels:
        assert sel.choices[1].variant.symbol.endswith("_f32_ref")
    actual = run_host([HostCase(g, b.inputs, s) for g, b, s in zip(graphs, built, sels,
                                                                    strict=True)])
    problems = []
    for b, a in zip(built, actual, strict=True):
        problems += compare(b.name, run_oracle(b.model, b.inputs), a)
    assert not problems, "\n".join(problems)


def test_float_op_is_refused_on_a_core_without_fpu() -> None:
    from tinydeploy.boards import get_board

    graph = load_tflite(float_cases()[0].build().model)
    with pytest.raises(UnsupportedError, match="board lacks fpu"):
        select_kernels(graph, get_board("microbit-v1"))


def test_concatenation_with_a_fused_activation_is_refused_for_int8_and_int16() -> None:
    """TFLM's CONCATENATION accepts no fused activation whatever the element type."""
    from tinydeploy.model.ir import Activation, ConcatenationOptions
    from tinydeploy.testing.builder import ModelBuilder

    for dtype in ("int8", "int16"):
        b = ModelBuilder()
        x0 = b.tensor("x0", (2, 3), dtype, scale=0.01, zero_point=0)
        x1 = b.tensor("x1", (2, 5), dtype, scale=0.01, zero_point=0)
        y = b.tensor("y", (2, 8), dtype, scale=0.01, zero_point=0)
        b.op("CONCATENATION", [x0, x1], [y], ConcatenationOptions(1, Activation.RELU))
        with pytest.raises(UnsupportedError, match=r"fused activation RELU \(TFLM requires NONE"):
            select_kernels(load_tflite(b.build([x0, x1], [y])))


def test_16x8_ops_match_tflite_micro() -> None:
    check([c.build() for c in int16_cases() + int16_window_cases() + int16_add_cases()
           + int16_shape_cases()])


def test_int16_data_movement_matches_tflite_micro() -> None:
    """TRANSPOSE, SPLIT, SPLIT_V, PACK, RESIZE_NEAREST_NEIGHBOR, PAD, PADV2 and STRIDED_SLICE
    on int16 data: the int8 kernels' copies (one C body per op), the int16 kernels chosen."""
    cases = [c.build() for c in int16_copy_cases()] + [c.build() for c in
                                                       int16_pad_slice_cases()]
    ops = set()
    for b in cases:
        sel = select_kernels(load_tflite(b.model))
        ops |= {ch.variant.op for ch in sel.choices}
        assert all(ch.variant.symbol.endswith("_s16_ref") for ch in sel.choices), b.name
    assert ops == {"TRANSPOSE", "SPLIT", "SPLIT_V", "PACK", "RESIZE_NEAREST_NEIGHBOR", "PAD",
                   "PADV2", "STRIDED_SLICE"}
    check(cases)


def test_int16_logistic_and_tanh_match_tflite_micro() -> None:
    """Every int16 input at five input scales (TFLM's power-of-two shortcuts and its general
    multiplier), and random inputs at four more."""
    cases = int16_sigmoid_cases()
    assert {c.op for c in cases} == {"LOGISTIC", "TANH"}
    check([c.build() for c in cases])


def test_16x8_with_int32_bias_matches_tflite_micro() -> None:
    """The int32-bias 16x8 path of FULLY_CONNECTED and CONV_2D (int32 sums, 32-bit
    requantization) takes the _b32 kernels; the int64 path gives other bytes on these cases,
    so the two paths are told apart."""
    cases = int16_bias32_cases()
    check([c.build() for c in cases], lambda symbol: symbol.endswith("_s16_b32_ref"))


def test_16x8_depthwise_with_int32_bias_is_refused() -> None:
    """TFLM's int16 DEPTHWISE_CONV_2D reads its bias as int64 whatever its type (what the
    converter's int32-bias option emits for a Keras DepthwiseConv2D): the interpreter's
    bytes with an int32 bias are not those of the same bias stored as int64, so the op is
    refused with the reason rather than matched."""
    import numpy as np

    from tinydeploy.model import ir
    from tinydeploy.oracle import run_oracle
    from tinydeploy.testing.builder import ModelBuilder

    def model(bias_type: str) -> bytes:
        rng = np.random.default_rng(0)
        b = ModelBuilder()
        x = b.tensor("x", (1, 5, 5, 3), "int16", scale=0.0005, zero_point=0)
        w = b.tensor("w", (1, 3, 3, 3), "int8", scale=[0.01, 0.02, 0.03], axis=3,
                     data=rng.integers(-127, 128, (1, 3, 3, 3)))
        bias = b.tensor("b", (3,), bias_type, data=[1000, -2000, 3000])
        y = b.tensor("y", (1, 5, 5, 3), "int16", scale=0.05, zero_point=0)
        b.op("DEPTHWISE_CONV_2D", [x, w, bias], [y], ir.DepthwiseConv2DOptions(), version=5)
        return b.build([x], [y])

    feed = [np.random.default_rng(1).integers(-3000, 3000, (1, 5, 5, 3)).astype(np.int16)]
    as32, as64 = run_oracle(model("int32"), feed)[0], run_oracle(model("int64"), feed)[0]
    assert np.mean(as32 != as64) > 0.5
    select_kernels(load_tflite(model("int64")))
    with pytest.raises(UnsupportedError, match="reads an int64 bias"):
        select_kernels(load_tflite(model("int32")))


def test_16x8_without_bias_declaring_int32_bias_is_refused() -> None:
    """A bias-less 16x8 FULLY_CONNECTED / CONV_2D whose ``quantized_bias_type`` option says
    INT32 runs TFLM's int32-accumulator path; no variant here implements that path without a
    bias, so the op is refused with the reason instead of computed on the int64 path. The
    same op with the default option is compiled and matches the oracle (the option is read,
    not ignored)."""
    import numpy as np

    from tinydeploy.model import ir
    from tinydeploy.testing.builder import ModelBuilder

    def model(kind: str, bias_type: int) -> bytes:
        rng = np.random.default_rng(0)
        b = ModelBuilder()
        if kind == "fc":
            x = b.tensor("x", (1, 40), "int16", scale=0.0005, zero_point=0)
            w = b.tensor("w", (6, 40), "int8", scale=0.01, data=rng.integers(-127, 128, (6, 40)))
            y = b.tensor("y", (1, 6), "int16", scale=0.002, zero_point=0)
            b.op("FULLY_CONNECTED", [x, w, -1], [y],
                 ir.FullyConnectedOptions(quantized_bias_type=bias_type), version=7)
        else:
            x = b.tensor("x", (1, 5, 5, 3), "int16", scale=0.0005, zero_point=0)
            w = b.tensor("w", (4, 3, 3, 3), "int8", scale=0.01,
                         data=rng.integers(-127, 128, (4, 3, 3, 3)))
            y = b.tensor("y", (1, 5, 5, 4), "int16", scale=0.002, zero_point=0)
            b.op("CONV_2D", [x, w, -1], [y], ir.Conv2DOptions(quantized_bias_type=bias_type),
                 version=4)
        return b.build([x], [y])

    for kind in ("fc", "conv"):
        assert load_tflite(model(kind, 2)).operators[0].options.quantized_bias_type == 2
        select_kernels(load_tflite(model(kind, 0)))
        with pytest.raises(UnsupportedError, match="quantized_bias_type option is INT32"):
            select_kernels(load_tflite(model(kind, 2)))


def test_int16_softmax_matches_tflite_micro() -> None:
    """int16 -> int16 SOFTMAX with TFLM's two 513-entry tables, filled on the host."""
    cases = int16_softmax_cases()
    check([c.build() for c in cases], "td_softmax_s16_ref".__eq__)


def test_int16_maximum_and_minimum_match_tflite_micro() -> None:
    """MAXIMUM and MINIMUM on int16 data with broadcasting (raw compares, one scale)."""
    built = [c.build() for c in int16_minmax_cases()]
    symbols = {ch.variant.symbol for b in built
               for ch in select_kernels(load_tflite(b.model)).choices}
    assert symbols == {"td_maximum_s16_ref", "td_minimum_s16_ref"}
    check(built)
