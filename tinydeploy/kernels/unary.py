"""int8 ABS, RSQRT and ELU as 256-entry tables on ``td_lut_s8_ref``.

Each maps one int8 input to one int8 output with arithmetic fixed at Prepare time, so the
host evaluates TFLite Micro's per-element code for all 256 inputs (as `activations` does for
LOGISTIC and TANH) and the device looks the results up:

* ABS (``AbsEvalQuantized``): |q - zp_in|, requantized by the float32 ratio in/out scale
  when the scales differ, plus zp_out, saturated;
* RSQRT (``RsqrtEvalQuantized``): ``GetInvSqrtQuantizedMultiplierExp`` of q - zp_in, applied
  to 1 with 20 extra bits, then rescaled by 1/(sqrt(in_scale) * out_scale); q == zp_in gives
  127. TFLM refuses to invoke on inputs below the zero point ("Rsqrt is only defined for
  positive values"): a firmware cannot stop mid-inference, so those entries hold 127 too and
  the refusal is documented, not reproduced;
* ELU: TFLM's int8 ELU is itself a table, filled in float32 (dequantize, exp(x) - 1 for
  x < 0, multiply by the float32 1/out_scale, round half away from zero, add zp_out). The
  exponential is the C library's ``expf`` (called through ctypes, as the interpreter does),
  so the table is the interpreter's bit for bit.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
from collections.abc import Callable

import numpy as np

from tinydeploy.fixedpoint import (
    get_inv_sqrt_quantized_multiplier_exp,
    multiply_by_quantized_multiplier,
    quantize_multiplier,
    round_half_away,
)
from tinydeploy.kernels.activations import (
    LUT_SOURCE,
    LUT_SYMBOL,
    lut_prepare,
    unary_int8_reason,
)
from tinydeploy.kernels.common import ref_variant
from tinydeploy.kernels.registry import register
from tinydeploy.model.ir import Operator, Tensor

RSQRT_SHIFT = 20


def _clamp8(v: int) -> int:
    return -128 if v < -128 else (127 if v > 127 else v)


def abs_lut(in_scale: float, in_zp: int, out_scale: float, out_zp: int) -> np.ndarray:
    rescale = np.float32(in_scale) != np.float32(out_scale)
    mult, shift = quantize_multiplier(float(np.float32(in_scale) / np.float32(out_scale)))
    vals = []
    for q in range(-128, 128):
        v = abs(q - in_zp)
        if rescale:
            v = multiply_by_quantized_multiplier(v, mult, shift)
        vals.append(_clamp8(v + out_zp))
    return np.array(vals, dtype=np.int8)


def rsqrt_lut(in_scale: float, in_zp: int, out_scale: float, out_zp: int) -> np.ndarray:
    sq = np.float32(np.sqrt(np.float32(in_scale)))     # std::sqrt(float)
    mult, shift = quantize_multiplier(1.0 / float(np.float32(sq * np.float32(out_scale))))
    vals = []
    for q in range(-128, 128):
        v = q - in_zp
        if v <= 0:
            vals.append(127)
            continue
        inv, inv_shift = get_inv_sqrt_quantized_multiplier_exp(v, -1)
        data = multiply_by_quantized_multiplier(1, inv, inv_shift + RSQRT_SHIFT)
        out = multiply_by_quantized_multiplier(data, mult, shift - RSQRT_SHIFT) + out_zp
        vals.append(_clamp8(out))
    return np.array(vals, dtype=np.int8)


@functools.cache
def _expf() -> object:
    """The C library's expf, or None where it cannot be loaded."""
    name = ctypes.util.find_library("m")
    if not name:
        return None
    try:
        f = ctypes.CDLL(name).expf
    except (OSError, AttributeError):
        return None
    f.restype = ctypes.c_float
    f.argtypes = [ctypes.c_float]
    return f


def exp32(x: np.float32) -> np.float32:
    """The C library's expf of a float32 (what TFLite's std::exp on a float calls)."""
    f = _expf()
    if f is not None:
        return np.float32(f(float(x)))  # type: ignore[operator]
    return np.float32(np.exp(np.float64(x)))  # correctly rounded in all but rare cases


def elu_lut(in_scale: float, in_zp: int, out_scale: float, out_zp: int) -> np.ndarray:
    inv = np.float32(1) / np.float32(out_scale)
    vals = []
    for q in range(-128, 128):
        x = np.float32(in_scale) * np.float32(q - in_zp)
        y = exp32(x) - np.float32(1) if x < 0 else x
        r = round_half_away(float(np.float32(y * inv)))
        v = float(np.float32(np.float32(r) + np.float32(out_zp)))
        vals.append(_clamp8(int(v)))
    return np.array(vals, dtype=np.int8)


def _table_of(make: Callable[[float, int, float, int], np.ndarray]
              ) -> Callable[[Tensor, Tensor, Operator], np.ndarray]:
    def table(x: Tensor, y: Tensor, op: Operator) -> np.ndarray:
        return make(x.scale, x.zero_point, y.scale, y.zero_point)
    return table


for _op, _make in (("ABS", abs_lut), ("RSQRT", rsqrt_lut), ("ELU", elu_lut)):
    register(ref_variant(_op, LUT_SYMBOL, unary_int8_reason, lut_prepare(_table_of(_make)),
                         inplace=True, source=LUT_SOURCE))
