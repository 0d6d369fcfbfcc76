"""SOFTMAX, int8 in -> int8 out: `td_softmax_s8_ref`.

This tflite-micro build runs the gemmlowp fixed-point path for int8 (the LUT path is only
for int16): input differences to the row maximum are scaled by beta * input_scale into a
Q5.26 value (multiplier > 1 and a left shift, from ``PreprocessSoftmaxScaling``), those below
``diff_min`` are dropped, exp is ``exp_on_negative_values`` in Q0.31, the sum is accumulated
in Q12.19, its reciprocal comes from ``GetReciprocal`` and each output is
``RoundingDivideByPOT(reciprocal * exp, num_bits_over_unit + 23) - 128``.

An int8 difference lies in [-255, 0], so the whole exp stage (rescale, diff_min cut and
gemmlowp exp) depends on the difference alone: ``prepare`` computes it here for all 256
differences with the exact twins of `tinydeploy.fixedpoint`, and the kernel only
sums, takes the reciprocal (Newton-Raphson, as gemmlowp) and scales. A dropped difference
has table value 0, which yields the same bytes as TFLM's skip (it adds 0 and outputs -128).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from tinydeploy.fixedpoint import (
    calculate_input_radius,
    exp_on_negative_values,
    multiply_by_quantized_multiplier_greater_than_one,
    preprocess_softmax_scaling,
)
from tinydeploy.kernels.common import REF_DIR, check_int8_tensor, f32, ref_variant
from tinydeploy.kernels.registry import ConstArray, KernelCall, register
from tinydeploy.model.ir import Graph, Operator, SoftmaxOptions, Tensor

SCALED_DIFF_INTEGER_BITS = 5


def softmax_exp_table(beta: float, input_scale: float) -> tuple[np.ndarray, int]:
    """(table[256] of Q0.31 exp values indexed by max - x, diff_min) as TFLM computes them."""
    mult, shift = preprocess_softmax_scaling(f32(beta), f32(input_scale),
                                             SCALED_DIFF_INTEGER_BITS)
    diff_min = -calculate_input_radius(SCALED_DIFF_INTEGER_BITS, shift)
    table = np.zeros(256, dtype=np.int32)
    for d in range(256):
        diff = -d
        if diff >= diff_min:
            scaled = multiply_by_quantized_multiplier_greater_than_one(diff, mult, shift)
            table[d] = exp_on_negative_values(scaled, SCALED_DIFF_INTEGER_BITS)
    return table, diff_min


def softmax_shape_beta_reason(inp: Tensor, out: Tensor, beta: float) -> str | None:
    """Why TFLM's int8-input softmax (either output type) cannot run this op, else None:
    the output must have the input's non-empty shape, and beta * input_scale must leave a
    Q5.26 scaled difference above one unit (``PreprocessSoftmaxScaling``'s multiplier)."""
    if not inp.shape or inp.shape != out.shape:
        return f"input shape {list(inp.shape)} and output shape {list(out.shape)} differ"
    if not beta > 0 or not f32(beta) * f32(inp.scale) * (1 << 26) > 1.0:
        return f"beta {beta} times input scale {inp.scale} is too small"
    return None


def softmax_s8_reason(graph: Graph, op: Operator,
                      output_reason: Callable[[Tensor], str | None]) -> str | None:
    """TFLM's checks of an int8-input softmax; ``output_reason`` checks the output tensor
    (int8 here, int16 for the int8 -> int16 kernel in `int16.py`)."""
    if not isinstance(op.options, SoftmaxOptions):
        return "missing SoftmaxOptions"
    inp, out = graph.tensor(op.inputs[0]), graph.tensor(op.outputs[0])
    r = check_int8_tensor(inp, "input") or output_reason(out)
    if r:
        return r
    return softmax_shape_beta_reason(inp, out, op.options.beta)


def _int8_output_reason(out: Tensor) -> str | None:
    r = check_int8_tensor(out, "output")
    if r:
        return r
    if out.zero_point != -128 or np.float32(out.scale) != np.float32(1.0 / 256):
        return (f"output '{out.name}' has scale {out.scale} and zero point {out.zero_point}; "
                "TFLite requires 1/256 and -128 for int8 softmax")
    return None


def softmax_s8_prepare(symbol: str) -> Callable[[Graph, Operator], KernelCall]:
    """The prepare of the int8-input softmax kernels ``symbol``: TFLM's exp table of the
    differences to the row maximum (`softmax_exp_table`)."""
    def prepare(graph: Graph, op: Operator) -> KernelCall:
        assert isinstance(op.options, SoftmaxOptions)
        inp = graph.tensor(op.inputs[0])
        table, _ = softmax_exp_table(op.options.beta, inp.scale)
        depth = inp.shape[-1]
        params = (("rows", inp.size // depth if depth else 0), ("depth", depth),
                  ("exp_lut", "@exp_lut"))
        return KernelCall(symbol, "td_softmax_params_t", params,
                          (ConstArray("exp_lut", "int32_t", table),), ("in0", "out0"))
    return prepare


SOFTMAX_HEADERS = (f"{REF_DIR}/td_softmax_body.h", f"{REF_DIR}/td_gemmlowp.h")

SOFTMAX_S8_REF = register(ref_variant(
    "SOFTMAX", "td_softmax_s8_ref", lambda g, o: softmax_s8_reason(g, o, _int8_output_reason),
    softmax_s8_prepare("td_softmax_s8_ref"), headers=SOFTMAX_HEADERS))
