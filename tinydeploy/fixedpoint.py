"""Exact Python twins of TFLite's fixed-point helpers (quantization_util / common.h / gemmlowp).

Everything here reproduces TensorFlow Lite Micro's integer arithmetic bit for bit, because
the firmware must produce exactly the oracle's bytes (DESIGN invariant 1). Two rules follow:

* rounding is TFLite's: ``std::round`` rounds halves away from zero (Python's ``round`` rounds
  halves to even, so it is never used here), and integer division truncates toward zero;
* scales arrive as float32 in the model and TFLite widens them to double before computing a
  multiplier, so callers pass the float32 values (``float(np.float32(s))``), not re-derived
  doubles.

A real multiplier ``m`` is represented as ``(quantized_multiplier, shift)`` with
``m ≈ quantized_multiplier * 2^(shift - 31)``, ``quantized_multiplier`` in ``[2^30, 2^31)``
(or 0) and ``shift`` in ``[-31, 30]`` (tiny multipliers become (0, 0)). The C twin of
`multiply_by_quantized_multiplier` is ``td_requantize`` in ``firmware/kernels/td_requant.h``.
"""

from __future__ import annotations

import math

import numpy as np

INT32_MIN = -(1 << 31)
INT32_MAX = (1 << 31) - 1


def round_half_away(x: float) -> int:
    """``std::round``: the nearest integer, halves away from zero. A value that is not finite
    (a quantization parameter divided by a scale too small for float32) is the model's
    fault: a ModelError, not an OverflowError from deep inside a kernel's checks."""
    if not math.isfinite(x):
        from tinydeploy.errors import ModelError

        raise ModelError(f"a quantization parameter is {x} in float32 (a scale too small or "
                         "too large for its tensor's values)")
    r = math.floor(abs(x) + 0.5)
    return int(r) if x >= 0 else -int(r)


def quantize_multiplier(real: float) -> tuple[int, int]:
    """TFLite ``QuantizeMultiplier``: real -> (Q31 multiplier, shift).

    frexp gives ``real = q * 2^shift`` with ``q`` in [0.5, 1); ``q`` is rounded (half away from
    zero) to Q31; a rounding up to exactly 2^31 is renormalised; a shift below -31 gives (0, 0)
    because every bit would be shifted out.
    """
    if real == 0.0:
        return 0, 0
    q, shift = math.frexp(real)
    q_fixed = round_half_away(q * (1 << 31))
    if q_fixed > (1 << 31):
        raise ValueError(f"multiplier {real!r} does not fit Q31")
    if q_fixed == (1 << 31):
        q_fixed //= 2
        shift += 1
    if shift < -31:
        shift = 0
        q_fixed = 0
    return int(q_fixed), int(shift)


def quantize_multiplier_smaller_than_one_exp(real: float) -> tuple[int, int]:
    """TFLite ``QuantizeMultiplierSmallerThanOneExp``: for 0 < real < 1, shift <= 0."""
    if not 0.0 < real < 1.0:
        raise ValueError(f"multiplier {real!r} is not in (0, 1)")
    q, shift = quantize_multiplier(real)
    if shift > 0:
        raise ValueError(f"multiplier {real!r} gave a positive shift {shift}")
    return q, shift


def quantize_multiplier_greater_than_one(real: float) -> tuple[int, int]:
    """TFLite ``QuantizeMultiplierGreaterThanOne``: for real > 1, shift >= 0."""
    if not real > 1.0:
        raise ValueError(f"multiplier {real!r} is not greater than 1")
    q, shift = quantize_multiplier(real)
    if shift < 0:
        raise ValueError(f"multiplier {real!r} gave a negative shift {shift}")
    return q, shift


def _wrap32(x: int) -> int:
    return ((x + (1 << 31)) & 0xFFFFFFFF) - (1 << 31)


def _trunc_div(a: int, b: int) -> int:
    """C integer division (truncation toward zero) for b > 0."""
    q = abs(a) // b
    return q if a >= 0 else -q


def saturating_rounding_doubling_high_mul(a: int, b: int) -> int:
    """gemmlowp ``SaturatingRoundingDoublingHighMul`` on int32 scalars."""
    if a == INT32_MIN and b == INT32_MIN:
        return INT32_MAX
    ab = a * b
    nudge = (1 << 30) if ab >= 0 else 1 - (1 << 30)
    return _trunc_div(ab + nudge, 1 << 31)


def rounding_divide_by_pot(x: int, exponent: int) -> int:
    """gemmlowp ``RoundingDivideByPOT``: x / 2^exponent, halves away from zero."""
    if not 0 <= exponent <= 31:
        raise ValueError(f"exponent {exponent} is not in [0, 31]")
    mask = (1 << exponent) - 1
    remainder = x & mask
    threshold = (mask >> 1) + (1 if x < 0 else 0)
    return (x >> exponent) + (1 if remainder > threshold else 0)


def saturating_rounding_multiply_by_pot(x: int, exponent: int) -> int:
    """gemmlowp ``SaturatingRoundingMultiplyByPOT<exponent>`` on int32."""
    if exponent <= 0:
        return rounding_divide_by_pot(x, -exponent)
    threshold = (1 << (31 - exponent)) - 1
    if x > threshold:
        return INT32_MAX
    if x < -threshold:
        return INT32_MIN
    return _wrap32(x << exponent)


def multiply_by_quantized_multiplier(x: int, multiplier: int, shift: int) -> int:
    """TFLite ``MultiplyByQuantizedMultiplier`` (double rounding, TFLM's default)."""
    left = shift if shift > 0 else 0
    right = 0 if shift > 0 else -shift
    return rounding_divide_by_pot(
        saturating_rounding_doubling_high_mul(_wrap32(x * (1 << left)), multiplier), right)


def multiply_by_quantized_multiplier_greater_than_one(x: int, multiplier: int,
                                                      left_shift: int) -> int:
    return saturating_rounding_doubling_high_mul(_wrap32(x * (1 << left_shift)), multiplier)


def multiply_by_quantized_multiplier_np(x: np.ndarray, multiplier: np.ndarray | int,
                                        shift: np.ndarray | int) -> np.ndarray:
    """Vectorised `multiply_by_quantized_multiplier` (int64 arithmetic, int32 result).

    ``multiplier`` and ``shift`` broadcast against ``x`` (e.g. per-channel along the last axis).
    """
    x64 = np.asarray(x, dtype=np.int64)
    m = np.asarray(multiplier, dtype=np.int64)
    s = np.asarray(shift, dtype=np.int64)
    left = np.where(s > 0, s, 0)
    right = np.where(s > 0, 0, -s)
    shifted = ((x64 << left) + (1 << 31)) % (1 << 32) - (1 << 31)   # int32 wrap
    both_min = (shifted == INT32_MIN) & (m == INT32_MIN)
    # a * b fits int64 for int32 operands except (-2^31)^2 = 2^62, which also fits.
    ab = shifted * m
    nudge = np.where(ab >= 0, 1 << 30, 1 - (1 << 30))
    num = ab + nudge
    high = np.where(num >= 0, num >> 31, -((-num) >> 31))          # truncating division
    high = np.where(both_min, INT32_MAX, high)
    mask = (np.int64(1) << right) - 1
    remainder = high & mask
    threshold = (mask >> 1) + (high < 0)
    out = (high >> right) + (remainder > threshold)
    return out.astype(np.int32)


def rounding_form_rnd(shift: int, zero_point: int) -> int:
    """The rounding constant ``r = (2 * zp + 1) * 2^(e - 1)`` of the rounding form, e = -shift
    (twin of ``td_requant_rnd``)."""
    e = -shift
    return (2 * zero_point + 1) * (1 << (e - 1))


def rounding_form_holds(acc_bound: int, multiplier: int, shift: int, zero_point: int) -> bool:
    """True when the rounding form (``td_requant_round_form`` in td_requant.h) equals
    ``multiply_by_quantized_multiplier(acc, multiplier, shift) + zero_point`` for every
    ``|acc| <= acc_bound``: a right shift (shift <= -1), a positive multiplier, 2 * acc and
    the rounding constant inside int32, and no wrap when both are added."""
    e = -shift
    if not 1 <= e <= 31 or not 0 < multiplier <= INT32_MAX or acc_bound < 0:
        return False
    if acc_bound >= 1 << 30:
        return False
    if abs(2 * zero_point + 1) * (1 << e) > INT32_MAX:
        return False
    return acc_bound + 2 + abs(rounding_form_rnd(shift, zero_point)) <= INT32_MAX


def requantize_rounding_form(acc: int, multiplier: int, shift: int, zero_point: int) -> int:
    """Python twin of ``td_requant_round_form``: SMMULR of 2 * acc, then one add of the sign,
    one of the rounding constant and one arithmetic shift. Exact (equal to TFLite's
    ``MultiplyByQuantizedMultiplier(acc) + zero_point``) only where `rounding_form_holds`."""
    e = -shift
    x = (_wrap32(2 * acc) * multiplier + (1 << 31)) >> 32
    x = _wrap32(x + (x >> 31) + rounding_form_rnd(shift, zero_point))
    return x >> e


def accumulator_bound(rows: np.ndarray, bias: np.ndarray | None, input_offset: int
                      ) -> np.ndarray:
    """Per output channel, a bound on |bias + sum_k (x_k + input_offset) * w_k| over every int8
    input x (rows = the filter as [channels, depth] int8; a skipped padding tap contributes
    0, inside the bound). Exact in int64."""
    w = np.abs(np.asarray(rows, dtype=np.int64))
    reach = max(abs(-128 + int(input_offset)), abs(127 + int(input_offset)))
    b = np.zeros(w.shape[0], np.int64) if bias is None else np.abs(np.asarray(bias, np.int64))
    return b + reach * w.sum(axis=1)


def count_leading_zeros32(x: int) -> int:
    """Leading zero bits of ``x`` as an unsigned 32-bit value (32 for 0)."""
    x &= 0xFFFFFFFF
    return 32 - x.bit_length()


# --- gemmlowp fixed-point transcendental functions used by SOFTMAX ------------------------

def _fp_mul(a: int, b: int) -> int:
    return saturating_rounding_doubling_high_mul(a, b)


def exp_on_interval_between_negative_one_quarter_and_0_excl(a: int) -> int:
    """exp(a) for a Q0.31 value a in [-1/4, 0): a 4th-order Taylor series around -1/8."""
    constant_term = 1895147668         # exp(-1/8) in Q0.31
    constant_1_over_3 = 715827883      # 1/3 in Q0.31
    x = _wrap32(a + (1 << 28))         # a + 1/8
    x2 = _fp_mul(x, x)
    x3 = _fp_mul(x2, x)
    x4 = _fp_mul(x2, x2)
    x4_over_4 = saturating_rounding_multiply_by_pot(x4, -2)
    poly = saturating_rounding_multiply_by_pot(
        _wrap32(_fp_mul(_wrap32(x4_over_4 + x3), constant_1_over_3) + x2), -1)
    return _wrap32(constant_term + _fp_mul(constant_term, _wrap32(x + poly)))


_EXP_BARREL = ((-2, 1672461947), (-1, 1302514674), (0, 790015084), (1, 290630308),
               (2, 39332535), (3, 720401), (4, 242))


def exp_on_negative_values(a: int, integer_bits: int) -> int:
    """gemmlowp ``exp_on_negative_values`` for a raw fixed-point a <= 0 with ``integer_bits``
    integer bits; returns exp(a) in Q0.31."""
    frac = 31 - integer_bits
    one_quarter = 1 << (frac - 2)
    mask = one_quarter - 1
    a_mod_quarter_minus_one_quarter = _wrap32((a & mask) - one_quarter)
    result = exp_on_interval_between_negative_one_quarter_and_0_excl(
        saturating_rounding_multiply_by_pot(a_mod_quarter_minus_one_quarter, integer_bits))
    remainder = _wrap32(a_mod_quarter_minus_one_quarter - a)
    for exponent, multiplier in _EXP_BARREL:
        if integer_bits > exponent:
            if remainder & (1 << (frac + exponent)):
                result = _fp_mul(result, multiplier)
    if integer_bits > 5:
        clamp = -(1 << (36 - integer_bits))
        if a < clamp:
            result = 0
    if a == 0:
        result = INT32_MAX
    return result


def rounding_half_sum(a: int, b: int) -> int:
    s = a + b
    sign = 1 if s >= 0 else -1
    return _trunc_div(s + sign, 2)


def newton_reciprocal_q2(a: int) -> int:
    """gemmlowp's shared core of the two functions below: 1 / ((1 + a) / 2) for a Q0.31 value
    a in [0, 1), in Q2.29, by three Newton-Raphson steps from 48/17 - 32/17 d."""
    half_denominator = rounding_half_sum(a, INT32_MAX)
    x = _wrap32(1515870810 + _fp_mul(half_denominator, -1010580540))
    one_q2 = 1 << 29
    for _ in range(3):
        hdx = _fp_mul(half_denominator, x)
        one_minus = _wrap32(one_q2 - hdx)
        x = _wrap32(x + saturating_rounding_multiply_by_pot(_fp_mul(x, one_minus), 2))
    return x


def one_over_one_plus_x_for_x_in_0_1(a: int) -> int:
    """gemmlowp: 1 / (1 + a), Q0.31 in and out."""
    # Rescale<0>(ExactMulByPot<-1>(x)): ExactMulByPot relabels x as Q1.30 without touching
    # its raw value, so the result is x times 2 with saturation.
    return saturating_rounding_multiply_by_pot(newton_reciprocal_q2(a), 1)


def one_minus_x_over_one_plus_x_for_x_in_0_1(a: int) -> int:
    """gemmlowp: (1 - a) / (1 + a), Q0.31 in and out (Rescale<0>(x - 1) of the Q2.29 x)."""
    return saturating_rounding_multiply_by_pot(_wrap32(newton_reciprocal_q2(a) - (1 << 29)), 2)


def get_reciprocal(x: int, x_integer_digits: int) -> tuple[int, int]:
    """TFLite ``GetReciprocal``: (Q0.31 reciprocal scale, num_bits_over_unit) of a positive
    fixed-point x with ``x_integer_digits`` integer bits."""
    headroom_plus_one = count_leading_zeros32(x)
    num_bits_over_unit = x_integer_digits - headroom_plus_one
    shifted_sum_minus_one = _wrap32(((x & 0xFFFFFFFF) << headroom_plus_one) - (1 << 31))
    return one_over_one_plus_x_for_x_in_0_1(shifted_sum_minus_one), num_bits_over_unit


def preprocess_softmax_scaling(beta: float, input_scale: float,
                               input_integer_bits: int) -> tuple[int, int]:
    """TFLite ``PreprocessSoftmaxScaling``: the multiplier (> 1) and left shift that map an
    int8 input difference to a Q(input_integer_bits) fixed-point value of beta * scale * diff."""
    max_real = float((1 << 31) - 1)
    real = min(beta * input_scale * (1 << (31 - input_integer_bits)), max_real)
    return quantize_multiplier_greater_than_one(real)


def calculate_input_radius(input_integer_bits: int, input_left_shift: int,
                           total_signed_bits: int = 31) -> int:
    """TFLite ``CalculateInputRadius``: the largest |diff| whose rescaled value fits."""
    max_input_rescaled = (1.0 * ((1 << input_integer_bits) - 1)
                          * (1 << (total_signed_bits - input_integer_bits))
                          * 2.0 ** -input_left_shift)   # exact; any sign of shift
    return int(math.floor(max_input_rescaled))


def get_inv_sqrt_quantized_multiplier_exp(x: int, reverse_shift: int) -> tuple[int, int]:
    """TFLite ``GetInvSqrtQuantizedMultiplierExp``: 1/sqrt(x) as (Q31 multiplier, shift),
    by five Newton-Raphson steps in gemmlowp Q3.28 fixed point. ``reverse_shift`` is -1
    (``kReverseShift``) for a left-positive shift. x <= 1 gives (INT32_MAX, 0), as TFLite."""
    if x < 0:
        raise ValueError(f"inverse square root of negative {x}")
    if x <= 1:
        return INT32_MAX, 0
    shift = 11
    while x >= (1 << 29):
        x //= 4
        shift += 1
    max_left_shift_bits = count_leading_zeros32(x) - 1
    pairs = max_left_shift_bits // 2 - 1
    shift -= pairs
    x <<= 2 * pairs
    half_input = saturating_rounding_multiply_by_pot(x >> 1, -1)
    half_three = (1 << 28) + (1 << 27)
    srdhm = saturating_rounding_doubling_high_mul
    v = 1 << 28                                  # F3 one
    for _ in range(5):
        x3 = saturating_rounding_multiply_by_pot(srdhm(srdhm(v, v), v), 6)   # F9 -> F3
        v = saturating_rounding_multiply_by_pot(
            _wrap32(srdhm(half_three, v) - srdhm(half_input, x3)), 3)        # F6 -> F3
    v = srdhm(v, 1518500250)                     # * sqrt(2)/2 in Q0.31
    if shift < 0:
        v = _wrap32(v << -shift)
        shift = 0
    return v, shift * reverse_shift
