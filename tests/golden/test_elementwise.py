"""Golden tests: int8 ADD, MUL (broadcasting), QUANTIZE, DEQUANTIZE vs tflite-micro."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from tinydeploy.boards import get_board
from tinydeploy.errors import UnsupportedError
from tinydeploy.kernels.elementwise import add_params, add_rounding_form_reason, broadcast_strides
from tinydeploy.kernels.registry import select_kernels
from tinydeploy.model.ir import Activation
from tinydeploy.model.loader import load_tflite
from tinydeploy.oracle import run_oracle
from tinydeploy.testing.builder import ModelBuilder
from tinydeploy.testing.harness import HostCase, run_host

try:
    from cases_elementwise import (
        BinaryCase,
        default_binary_cases,
        default_convert_cases,
        sweep_cases,
    )
    from golden_ops import Built, arm_compile_errors, check, compare
    from test_dsp_host import host_selection
except ImportError:  # pragma: no cover - when tests/golden is a package
    from .cases_elementwise import (
        BinaryCase,
        default_binary_cases,
        default_convert_cases,
        sweep_cases,
    )
    from .golden_ops import Built, arm_compile_errors, check, compare
    from .test_dsp_host import host_selection


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


# td_add_s8_opt: same-shape ADD with the rounding form proven on the host. Every int8 pair
# (256 x 256 in one tensor each) under scales whose ratio is a power of two (exact ties of
# the rescaling), equal scales (both shifts 0), the output shift 0, zero points at both ends,
# the fused activations, a constant operand, in place, and the cases of
# default_binary_cases it accepts.
_ALL = np.array([(a, b) for a in range(-128, 128) for b in range(-128, 128)], np.int8)
ADD_OPT_CASES = [
    BinaryCase("ADD", (256, 256), (256, 256), (0.25, 0), (0.125, 1), (0.5, 0), data="all"),
    BinaryCase("ADD", (256, 256), (256, 256), (0.1, -128), (0.1, 127), (0.3, -3), data="all"),
    BinaryCase("ADD", (256, 256), (256, 256), (0.05, 17), (0.6, -60), (0.3, 127),
               Activation.RELU6, data="all"),
    BinaryCase("ADD", (256, 256), (256, 256), (0.02, -128), (0.015, 5), (0.0205, -128),
               Activation.RELU, data="all"),
    BinaryCase("ADD", (33, 7), (33, 7), (0.3, 2), (0.2, -1), (0.4, 0), Activation.RELU_N1_TO_1,
               const=0, seed=5),
]


def _all_pairs(c: BinaryCase) -> Built:
    """``c`` built with its two inputs covering every (a, b) pair of int8 values once."""
    if c.data != "all":
        return c.build()
    b = replace(c, data="random").build()
    return Built(b.name + " all pairs", b.model, (_ALL[:, 0].reshape(256, 256).copy(),
                                                _ALL[:, 1].reshape(256, 256).copy()))


def test_add_opt_matches_tflite_micro() -> None:
    board = get_board("microbit-v1")
    cases = ADD_OPT_CASES + [c for c in default_binary_cases() if c.op == "ADD"]
    built = [_all_pairs(c) for c in cases]
    graphs = [load_tflite(b.model) for b in built]
    sels = [select_kernels(g, board) for g in graphs]
    chosen = [s.choices[0].variant.symbol for s in sels]
    assert chosen[:len(ADD_OPT_CASES)] == ["td_add_s8_opt"] * len(ADD_OPT_CASES), chosen
    assert chosen.count("td_add_s8_opt") >= len(ADD_OPT_CASES) + 6, chosen
    assert "td_add_s8_ref" in chosen   # the broadcasting cases keep the reference
    actual = run_host([HostCase(g, b.inputs, host_selection(s))
                       for g, b, s in zip(graphs, built, sels, strict=True)])
    problems: list[str] = []
    for b, a in zip(built, actual, strict=True):
        problems += compare(b.name, run_oracle(b.model, b.inputs), a)
    assert not problems, "\n".join(problems[:10])


def test_add_opt_is_refused_where_its_form_is_not_proven() -> None:
    """Neither shift 0 (parameters TFLM never computes) and a sum whose bound makes the
    rounding constant wrap are refused; TFLM's own parameters are accepted."""
    p = add_params(0.1, 0, 0.07, 3, 0.2, 1)
    assert add_rounding_form_reason(p) is None
    assert "shift is 0" in (add_rounding_form_reason({**p, "in0_shift": -1}) or "")
    assert "sum" in (add_rounding_form_reason({**p, "out_shift": -31, "out_offset": 127})
                     or "")


@pytest.mark.target
@pytest.mark.parametrize("board_id", ["mps2-an386", "microbit-v1"])
def test_add_opt_on_device(board_id: str, tmp_path: Path) -> None:
    """The validate app with td_add_s8_opt, on the M4 (SMMULR) and the M0 (portable C): every
    output byte equals tflite-micro's for random inputs."""
    from tinydeploy.testing.device import validate_on_board

    c = BinaryCase("ADD", (1, 8, 8, 24), (1, 8, 8, 24), (0.05, 17), (0.6, -60),
                   (0.3, 127), Activation.RELU6)
    path = tmp_path / "add.tflite"
    path.write_bytes(c.build().model)
    g = load_tflite(path)
    assert select_kernels(g, get_board(board_id)).choices[0].variant.symbol == "td_add_s8_opt"
    report = validate_on_board(path, board_id, tmp_path / "fw", 4, seed=3)
    assert report.bit_exact_cases == report.cases == 4, report.first_mismatch
