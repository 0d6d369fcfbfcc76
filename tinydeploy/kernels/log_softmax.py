"""int8 LOG_SOFTMAX along the last dimension (``td_log_softmax_s8_ref``).

TFLite Micro's int8 LOG_SOFTMAX requires the output quantization 16/256 and zero point 127
and beta 1. Everything that depends only on the input scale is computed here as its Prepare
and per-element code does it: the Q5.26 rescaled difference for each of the 256 possible
differences from the row maximum, its gemmlowp exponential rescaled to Q12.19 (0 where the
difference is below ``diff_min``, which TFLM skips), the reverse scaling divisor and
``diff_min``. What depends on a row's values (its maximum, the sum of exponentials and its
logarithm) is computed on the device.
"""

from __future__ import annotations

import numpy as np

from tinydeploy.fixedpoint import (
    calculate_input_radius,
    exp_on_negative_values,
    multiply_by_quantized_multiplier,
    preprocess_softmax_scaling,
    quantize_multiplier_smaller_than_one_exp,
    rounding_divide_by_pot,
)
from tinydeploy.kernels.activations import unary_int8_reason
from tinydeploy.kernels.common import f32, ref_variant, then_check
from tinydeploy.kernels.registry import ConstArray, KernelCall, register
from tinydeploy.model.ir import Graph, Operator, Tensor

OUTPUT_SCALE = 16.0 / 256
OUTPUT_ZERO_POINT = 127
SCALED_DIFF_BITS = 5
MAX_DEPTH = 4096


def log_softmax_tables(in_scale: float) -> dict[str, object]:
    """TFLM PreprocessLogSoftmaxScalingExp(beta 1) and the two per-difference tables."""
    mult, left_shift = preprocess_softmax_scaling(1.0, f32(in_scale), SCALED_DIFF_BITS)
    rev = float(1 << (31 - left_shift)) / float(mult)
    rev_mult, rev_shift = quantize_multiplier_smaller_than_one_exp(rev)
    diff_min = -calculate_input_radius(SCALED_DIFF_BITS, left_shift)
    q5, exps = [], []
    for d in range(256):
        v = multiply_by_quantized_multiplier(-d, mult, left_shift)
        q5.append(v)
        if -d >= diff_min:
            exps.append(rounding_divide_by_pot(exp_on_negative_values(v, SCALED_DIFF_BITS), 12))
        else:
            exps.append(0)
    return {"diff_min": diff_min, "rev_mult": rev_mult, "rev_shift": rev_shift,
            "q5": np.array(q5, dtype=np.int32), "exp": np.array(exps, dtype=np.int32)}


def _log_softmax_reason(x: Tensor, y: Tensor) -> str | None:
    """TFLM's LOG_SOFTMAX rules past the int8 unary checks: the shape kept, the fixed output
    quantization, a last dimension the Q12 sum holds."""
    if x.shape != y.shape or not x.shape:
        return f"output shape {list(y.shape)} differs from the input's {list(x.shape)}"
    if f32(y.scale) != f32(OUTPUT_SCALE) or y.zero_point != OUTPUT_ZERO_POINT:
        return (f"output scale {y.scale:g}, zero point {y.zero_point}: TFLM's int8 "
                f"LOG_SOFTMAX requires {OUTPUT_SCALE:g} and {OUTPUT_ZERO_POINT}")
    if x.shape[-1] > MAX_DEPTH:
        return f"last dimension {x.shape[-1]} exceeds {MAX_DEPTH} (Q12 accumulation)"
    return None


_accepts = then_check(unary_int8_reason, _log_softmax_reason)


def _prepare(graph: Graph, op: Operator) -> KernelCall:
    x = graph.op_inputs(op)[0]
    assert x is not None
    t = log_softmax_tables(x.scale)
    depth = x.shape[-1]
    return KernelCall(
        symbol="td_log_softmax_s8_ref", params_type="td_log_softmax_params_t",
        params=(("rows", x.size // depth), ("depth", depth),
                ("diff_min", int(t["diff_min"])),  # type: ignore[call-overload]
                ("rev_mult", int(t["rev_mult"])),  # type: ignore[call-overload]
                ("rev_shift", int(t["rev_shift"])),  # type: ignore[call-overload]
                ("q5_lut", "@q5_lut"), ("exp_lut", "@exp_lut")),
        consts=(ConstArray("q5_lut", "int32_t", t["q5"]),  # type: ignore[arg-type]
                ConstArray("exp_lut", "int32_t", t["exp"])),  # type: ignore[arg-type]
        args=("in0", "out0"))


register(ref_variant("LOG_SOFTMAX", "td_log_softmax_s8_ref", _accepts, _prepare, inplace=True,
                     headers=("kernels/ref/td_gemmlowp.h",)))
