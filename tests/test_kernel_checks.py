"""The weighted ops' int8 and 16x8 variants share one `accepts` skeleton
(`common.check_conv_op`, `fully_connected.check_fc_op`): a model wrong in a way that does not
depend on the element type is refused by both for the same reason, and the parts check of
SPLIT and CONCATENATION (`common.parts_reason`) names the part that does not fit."""

from __future__ import annotations

import numpy as np
import pytest

from tinydeploy.kernels.common import parts_reason
from tinydeploy.kernels.registry import variant_by_symbol
from tinydeploy.model import ir
from tinydeploy.model.loader import load_tflite
from tinydeploy.testing.builder import ModelBuilder

RNG = np.random.default_rng(15)


def _weighted(op: str, dtype: str, x_shape: tuple[int, ...], w_shape: tuple[int, ...],
              y_shape: tuple[int, ...], options: object) -> ir.Graph:
    """One weighted op on ``dtype`` activations (zero point 0, as 16x8 requires) with int8
    per-tensor weights and no bias."""
    b = ModelBuilder()
    x = b.tensor("x", x_shape, dtype, scale=0.05, zero_point=0)
    w = b.tensor("w", w_shape, "int8", scale=0.02, zero_point=0,
                 data=RNG.integers(-127, 128, size=w_shape).astype(np.int8))
    y = b.tensor("y", y_shape, dtype, scale=0.1, zero_point=0)
    b.op(op, [x, w, -1], [y], options)
    return load_tflite(b.build(inputs=[x], outputs=[y]))


def _reason(graph: ir.Graph, op: str, symbol: str) -> str | None:
    return variant_by_symbol(op, symbol).accepts(graph, graph.operators[0])


# (op, int8 symbol, int16 symbol, x, filter, y (wrong), options)
WRONG_OUTPUT = [
    ("CONV_2D", "td_conv2d_s8_ref", "td_conv2d_s16_ref", (1, 8, 8, 3), (4, 3, 3, 3),
     (1, 7, 7, 4), ir.Conv2DOptions(padding=ir.Padding.SAME)),
    ("DEPTHWISE_CONV_2D", "td_dwconv2d_s8_ref", "td_dwconv2d_s16_ref", (1, 8, 8, 3),
     (1, 3, 3, 6), (1, 4, 4, 6),
     ir.DepthwiseConv2DOptions(padding=ir.Padding.VALID, depth_multiplier=2)),
    ("FULLY_CONNECTED", "td_fully_connected_s8_ref", "td_fully_connected_s16_ref", (2, 16),
     (5, 16), (2, 4), ir.FullyConnectedOptions()),
]


@pytest.mark.parametrize("op, s8, s16, x, w, y, options", WRONG_OUTPUT,
                         ids=[c[0] for c in WRONG_OUTPUT])
def test_int8_and_int16_refuse_a_wrong_output_alike(op: str, s8: str, s16: str,
                                                    x: tuple[int, ...], w: tuple[int, ...],
                                                    y: tuple[int, ...], options: object) -> None:
    g8, g16 = _weighted(op, "int8", x, w, y, options), _weighted(op, "int16", x, w, y, options)
    why8, why16 = _reason(g8, op, s8), _reason(g16, op, s16)
    assert why8 is not None and "output" in why8 and str(y[-1]) in why8, why8
    assert why8 == why16
    # and each variant accepts the other type's model for no reason of its own type
    assert _reason(g8, op, s16) != why8 and _reason(g16, op, s8) != why16


def _t(name: str, shape: tuple[int, ...]) -> ir.Tensor:
    return ir.Tensor(0, name, shape, ir.DType.INT8, ir.Quantization((0.1,), (0,)))


def _any(t: ir.Tensor | None, role: str) -> str | None:
    return None


def test_parts_reason_names_the_part_and_the_sum() -> None:
    whole = _t("whole", (2, 5, 3))
    ok = [_t("a", (2, 2, 3)), _t("b", (2, 3, 3))]
    assert parts_reason(ok, whole, 1, ("input", "output"), _any) is None
    off_axis = [_t("a", (2, 2, 3)), _t("b", (2, 3, 4))]
    why = parts_reason(off_axis, whole, 1, ("input", "output"), _any)
    assert why is not None and why.startswith("input 1 shape [2, 3, 4]"), why
    short = [_t("a", (2, 2, 3)), _t("b", (2, 2, 3))]
    why = parts_reason(short, whole, 1, ("output", "input"), _any)
    assert why == "outputs add up to 4 along axis 1, the input has 5"
    why = parts_reason(ok, whole, 1, ("input", "output"), _any,
                       lambda k, t: f"part {k} refused" if t.name == "b" else None)
    assert why == "part 1 refused"
