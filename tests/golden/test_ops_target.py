"""Target tier of the issue-13 ops: every golden case of tests/golden/cases_ops.py, built for
the emulated Cortex-M4F (QEMU mps2-an386) from the same generated program as the host tier,
compared byte for byte with the tflite-micro oracle.

The ARM toolchain and QEMU are required (CI installs them): their absence fails the tier.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tinydeploy.model.loader import load_tflite
from tinydeploy.oracle import run_oracle
from tinydeploy.testing.device import validate_on_board
from tinydeploy.testing.harness import HostCase
from tinydeploy.testing.target_harness import run_target

try:
    from cases_ops import (
        all_cases,
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
        kws16_chain,
        ops_chain,
        s16_chain,
    )
    from cases_recurrent import lstm16_cases
    from cases_shape_ops import int16_cases as int16_pad_slice_cases
    from golden_ops import compare
except ImportError:  # pragma: no cover - when tests/golden is a package
    from .cases_ops import (
        all_cases,
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
        kws16_chain,
        ops_chain,
        s16_chain,
    )
    from .cases_recurrent import lstm16_cases
    from .cases_shape_ops import int16_cases as int16_pad_slice_cases
    from .golden_ops import compare

pytestmark = pytest.mark.target


@pytest.fixture(scope="module", autouse=True)
def _tools() -> None:
    for tool in ("arm-none-eabi-gcc", "qemu-system-arm"):
        if shutil.which(tool) is None:
            pytest.fail(f"the target tier needs {tool} (apt-get install gcc-arm-none-eabi "
                        "libnewlib-arm-none-eabi qemu-system-arm)")


@pytest.mark.parametrize("machine", ["mps2-an386"])
def test_every_new_op_is_bit_exact_on_the_emulated_core(machine: str) -> None:
    from tinydeploy.boards import get_board
    from tinydeploy.kernels.registry import select_kernels

    cases = (all_cases() + float_cases() + int16_cases() + int16_window_cases()
             + int16_add_cases() + int16_shape_cases() + int16_copy_cases()
             + int16_pad_slice_cases() + int16_sigmoid_cases() + int16_bias32_cases()
             + int16_softmax_cases() + lstm16_cases() + int16_minmax_cases())
    built = [c.build() for c in cases]
    ops = {c.op for c in cases}
    assert len(ops) >= 20, sorted(ops)
    board = get_board(machine)   # the board's own selection (float kernels need its FPU)
    graphs = [load_tflite(b.model) for b in built]
    actual = run_target([HostCase(g, b.inputs, select_kernels(g, board))
                         for g, b in zip(graphs, built, strict=True)], machine=machine)
    problems: list[str] = []
    for b, a in zip(built, actual, strict=True):
        problems += compare(b.name, run_oracle(b.model, b.inputs), a)
    assert not problems, (f"{len(problems)} of {len(built)} cases differ from tflite-micro on "
                          f"{machine}:\n" + "\n".join(problems))


def test_op_chain_validates_bit_exact_over_the_serial_protocol(tmp_path: Path) -> None:
    """`tinydeploy build` of a chain of the new ops for mps2-an386 (arena plan, multi-output
    SPLIT, in-place ops, scratch), validated against tflite-micro over the serial protocol."""
    model = tmp_path / "ops_chain.tflite"
    model.write_bytes(ops_chain())
    graph = load_tflite(model)
    assert len({op.opcode for op in graph.operators}) >= 20
    report = validate_on_board(model, "mps2-an386", tmp_path / "fw", 4, seed=5)
    assert report.bit_exact_cases == report.cases == 4, report.first_mismatch


@pytest.mark.parametrize("board_id", ["mps2-an386", "microbit-v1"])
def test_16x8_conv_net_validates_bit_exact_on_m4_and_m0(board_id: str, tmp_path: Path) -> None:
    """A 16x8 conv net (int8 in, QUANTIZE to int16, CONV_2D x2, FULLY_CONNECTED, int16 and
    int32 outputs) built for the Cortex-M4F and the Cortex-M0, validated over the serial
    protocol: the planner, the validate app and the protocol carry int16 and int32 tensors."""
    model = tmp_path / "s16.tflite"
    model.write_bytes(s16_chain())
    report = validate_on_board(model, board_id, tmp_path / "fw", 3, seed=4)
    assert report.bit_exact_cases == report.cases == 3, report.first_mismatch


@pytest.mark.parametrize("board_id", ["mps2-an386", "microbit-v1"])
@pytest.mark.parametrize("state", ["int16", "int8"])
def test_keyword_model_with_int16_io_is_bit_exact_on_m4_and_m0(board_id: str, state: str,
                                                                tmp_path: Path) -> None:
    """TFLM's keyword_scrambled shape (int16 input, SVDF + FULLY_CONNECTED, int8 -> int16
    SOFTMAX, int16 -> int32 QUANTIZE), five invocations in a row (SVDF state carries over),
    validated bit-exact over the serial protocol."""
    model = tmp_path / "kws16.tflite"
    model.write_bytes(kws16_chain(state=state))
    report = validate_on_board(model, board_id, tmp_path / "fw", 5, seed=6)
    assert report.bit_exact_cases == report.cases == 5, report.first_mismatch


@pytest.mark.parametrize("board_id", ["mps2-an386", "microbit-v1"])
def test_16x8_lstm_validates_bit_exact_on_m4_and_m0(board_id: str, tmp_path: Path) -> None:
    """A 16x8 UNIDIRECTIONAL_SEQUENCE_LSTM (int16 input, hidden state and output, int64
    biases) built for the Cortex-M4F and the Cortex-M0, four invocations in a row over the
    serial protocol (the hidden and cell states carry over), bit-exact with tflite-micro."""
    model = tmp_path / "lstm16.tflite"
    model.write_bytes(lstm16_cases()[1].model())
    report = validate_on_board(model, board_id, tmp_path / "fw", 4, seed=9)
    assert report.bit_exact_cases == report.cases == 4, report.first_mismatch
