"""int8 activation ops as 256-entry lookup tables: RELU, RELU6, LEAKY_RELU, HARD_SWISH,
LOGISTIC, TANH.

Each of these ops maps one int8 input to one int8 output through integer arithmetic fixed at
Prepare time by the tensors' quantization. So the host evaluates TFLite Micro's reference
arithmetic for all 256 possible inputs (the Python twins below, bit for bit, including the
gemmlowp fixed-point logistic/tanh that TFLM evaluates per element at run time) and the
device runs one tiny kernel, ``td_lut_s8_ref``: ``out = lut[in + 128]``. The same kernel
serves int8 -> int8 QUANTIZE (see `elementwise`).

Invariants:

* every table is exactly TFLM's output for that input (checked exhaustively against the
  tflite-micro interpreter in tests/golden/test_activations.py);
* intermediate float arithmetic follows TFLM's types: scales are float32, and where TFLM
  divides or multiplies in float32 (RELU, LEAKY_RELU, HARD_SWISH) so do we, before widening
  to double for ``QuantizeMultiplier``;
* C ``int16_t``/``int32_t`` wrap-around is emulated explicitly (`_wrap16`, `_wrap32`).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from tinydeploy.fixedpoint import (
    INT32_MAX,
    calculate_input_radius,
    exp_on_negative_values,
    multiply_by_quantized_multiplier,
    one_minus_x_over_one_plus_x_for_x_in_0_1,
    one_over_one_plus_x_for_x_in_0_1,
    quantize_multiplier,
    round_half_away,
    rounding_divide_by_pot,
)
from tinydeploy.kernels.common import f32, ref_variant
from tinydeploy.kernels.registry import ConstArray, KernelCall, KernelVariant, register
from tinydeploy.model.ir import DType, Graph, LeakyReluOptions, Operator, Tensor

LUT_SYMBOL = "td_lut_s8_ref"
LUT_SOURCE = "kernels/ref/td_lut_s8_ref.c"
INT8_INPUTS = tuple(range(-128, 128))


def _wrap16(x: int) -> int:
    return ((x + (1 << 15)) & 0xFFFF) - (1 << 15)


def _wrap32(x: int) -> int:
    return ((x + (1 << 31)) & 0xFFFFFFFF) - (1 << 31)


def _clamp(x: int, lo: int, hi: int) -> int:
    return lo if x < lo else (hi if x > hi else x)


def _table(fn: Callable[[int], int]) -> np.ndarray:
    """fn evaluated for q = -128..127, as the int8 array the kernel indexes by q + 128."""
    return np.array([fn(q) for q in INT8_INPUTS], dtype=np.int8)


# --- the Python twins of TFLM's int8 arithmetic, one LUT builder per op -------------------


def relu_lut(in_scale: float, in_zp: int, out_scale: float, out_zp: int) -> np.ndarray:
    """TFLM ReluQuantized<int8>: requantize by in_scale / out_scale, then clamp to
    [max(-128, out_zp), 127]. The ratio is taken in double (this tflite-micro build; a float32
    ratio differs on exact ties, e.g. 0.3 / 0.2)."""
    mult, shift = quantize_multiplier(f32(in_scale) / f32(out_scale))
    act_min = max(-128, out_zp)  # out_zp + round(0 / out_scale)

    def f(q: int) -> int:
        v = out_zp + multiply_by_quantized_multiplier(q - in_zp, mult, shift)
        return _clamp(v, act_min, 127)

    return _table(f)


def relu6_six(in_scale: float, in_zp: int) -> int:
    """TFLM FloatToQuantizedType<int8>(6.0f, scale, zp): round(6.0f / scale) in float32, plus the
    zero point (a float addition in TFLM), clamped to int8."""
    r = round_half_away(f32(np.float32(6.0) / np.float32(in_scale)))
    v = f32(float(r) + in_zp)
    if v != v or v > 127:  # NaN cannot happen for a positive finite scale; keep it explicit
        return 127
    return _clamp(int(v), -128, 127)


def relu6_lut(in_scale: float, in_zp: int) -> np.ndarray:
    """TFLM Relu6Quantized<int8>: clamp the raw input to [zp, six]; the output tensor's
    quantization is not used (TFLM assumes it equals the input's)."""
    six = relu6_six(in_scale, in_zp)
    return _table(lambda q: six if q > six else (in_zp if q < in_zp else q))


def leaky_relu_lut(in_scale: float, in_zp: int, out_scale: float, out_zp: int,
                   alpha: float) -> np.ndarray:
    """TFLM QuantizeLeakyRelu<int8>: identity and alpha multipliers; a negative alpha gives a
    negative multiplier whose magnitude is applied, then the result negated.

    The multipliers are computed in double from the float32 scales and alpha (verified on
    exact ties against this tflite-micro build: with float32 arithmetic, 0.3 * 1.5 / 0.2
    rounds to 2.25 and x = -2 would give -4 instead of the interpreter's -5)."""
    m_alpha, s_alpha = quantize_multiplier(f32(in_scale) * f32(alpha) / f32(out_scale))
    m_id, s_id = quantize_multiplier(f32(in_scale) / f32(out_scale))
    negative = m_alpha < 0
    m_alpha_abs = -m_alpha if negative else m_alpha

    def f(q: int) -> int:
        x = q - in_zp
        if x >= 0:
            v = out_zp + multiply_by_quantized_multiplier(x, m_id, s_id)
        else:
            a = multiply_by_quantized_multiplier(x, m_alpha_abs, s_alpha)
            v = out_zp + (-a if negative else a)
        return _clamp(v, -128, 127)

    return _table(f)


def _downscale_to_int16_multiplier(m: int) -> int:
    """TFLite DownScaleInt32ToInt16Multiplier."""
    if m >= INT32_MAX - (1 << 15):
        return 32767
    return (m + (1 << 15)) >> 16


def _srdhm16(a: int, b: int) -> int:
    """gemmlowp SaturatingRoundingDoublingHighMul on int16."""
    if a == b == -32768:
        return 32767
    ab = a * b
    nudge = (1 << 14) if ab >= 0 else 1 - (1 << 14)
    n = ab + nudge
    q = abs(n) >> 15
    return _wrap16(q if n >= 0 else -q)


def _sdhm16(a: int, b: int) -> int:
    """TFLite SaturatingDoublingHighMul (truncating) on int16."""
    if a == b == -32768:
        return 32767
    ab = a * b
    q = abs(ab) >> 15
    return _wrap16(q if ab >= 0 else -q)


def _sat_left_shift16(x: int, amount: int) -> int:
    return _clamp(x * (1 << amount), -32768, 32767)


def _rdbp16(x: int, exponent: int) -> int:
    """gemmlowp RoundingDivideByPOT instantiated for int16 (the mask is an int16 too)."""
    mask = _wrap16((1 << exponent) - 1)
    remainder = _wrap16(x & mask)
    threshold = _wrap16((mask >> 1) + (1 if x < 0 else 0))
    return _wrap16((x >> exponent) + (1 if remainder > threshold else 0))


def hard_swish_params(in_scale: float, out_scale: float) -> tuple[int, int, int, int]:
    """TFLM HardSwishPrepare: (output multiplier int16, its exponent, reluish multiplier
    int16, its exponent)."""
    hires = f32(np.float32(1.0 / 128.0) * np.float32(in_scale))
    reluish_scale = np.float32(3.0) / np.float32(32768.0)
    m_out, e_out = quantize_multiplier(f32(np.float32(hires) / np.float32(out_scale)))
    m_rel, e_rel = quantize_multiplier(f32(np.float32(hires) / reluish_scale))
    return (_downscale_to_int16_multiplier(m_out), e_out,
            _downscale_to_int16_multiplier(m_rel), e_rel)


def hard_swish_lut(in_scale: float, in_zp: int, out_scale: float, out_zp: int) -> np.ndarray:
    """TFLM reference HardSwish<int8> (int16 fixed point with saturating shifts)."""
    m_out, e_out, m_rel, e_rel = hard_swish_params(in_scale, out_scale)

    def f(q: int) -> int:
        x = _wrap16(q - in_zp)
        hires = _wrap16(x * 128)
        preshift = _srdhm16(hires, m_out)
        r = hires
        if e_rel > 0:
            r = _sat_left_shift16(r, e_rel - 1)
        r = _srdhm16(r, m_rel)
        if e_rel > 0:
            r = _sat_left_shift16(r, 1)
        if e_rel < 0:
            r = _rdbp16(r, -e_rel)
        r = _wrap16((r + (1 << 15)) >> 1)
        out = _sdhm16(r, preshift)
        out = _rdbp16(out, -e_out)
        out = _wrap16(out + out_zp)
        return _clamp(out, -128, 127)

    return _table(f)


def gemmlowp_logistic_q4(a: int) -> int:
    """gemmlowp logistic of a Q4.27 raw value; Q0.31 result."""
    if a == 0:
        return 1 << 30
    abs_a = a if a > 0 else _wrap32(-a)
    pos = one_over_one_plus_x_for_x_in_0_1(exp_on_negative_values(_wrap32(-abs_a), 4))
    return pos if a > 0 else _wrap32(INT32_MAX - pos)


def gemmlowp_tanh_q4(a: int) -> int:
    """gemmlowp tanh of a Q4.27 raw value; Q0.31 result."""
    if a == 0:
        return 0
    n = a if a < 0 else _wrap32(-a)
    # ExactMulByPot<1>: the same raw value read with 5 integer bits, i.e. 2 * n
    t = one_minus_x_over_one_plus_x_for_x_in_0_1(exp_on_negative_values(n, 5))
    return _wrap32(-t) if a < 0 else t


def _sigmoid_input_params(in_scale: float) -> tuple[int, int, int]:
    """TFLM's LOGISTIC/TANH int8 Prepare: (multiplier, left shift, input range radius) that
    map (q - zp) to Q4.27."""
    import math

    real = float(np.float32(in_scale)) * float(1 << 27)
    frac, left_shift = math.frexp(real)
    mult = _wrap32(round_half_away(frac * (1 << 31)))
    radius = calculate_input_radius(4, left_shift, 31)
    return mult, left_shift, radius


def _sigmoid_family_lut(in_scale: float, in_zp: int, q4_fn: Callable[[int], int],
                        out_exponent: int, out_zp: int) -> np.ndarray:
    """TFLM's int8 LOGISTIC/TANH: inputs beyond the radius saturate to -128/127; the others
    are mapped to Q4.27, through ``q4_fn`` (Q0.31 result), then divided by 2^out_exponent
    with rounding, offset by ``out_zp`` and clamped."""
    mult, left_shift, radius = _sigmoid_input_params(in_scale)

    def f(q: int) -> int:
        x = q - in_zp
        if x <= -radius:
            return -128
        if x >= radius:
            return 127
        y = q4_fn(multiply_by_quantized_multiplier(x, mult, left_shift))
        return _clamp(rounding_divide_by_pot(y, out_exponent) + out_zp, -128, 127)

    return _table(f)


def logistic_lut(in_scale: float, in_zp: int) -> np.ndarray:
    """TFLM reference_integer_ops::Logistic (int8 in, output scale 1/256, zero point -128)."""
    return _sigmoid_family_lut(in_scale, in_zp, gemmlowp_logistic_q4, 23, -128)


def tanh_lut(in_scale: float, in_zp: int) -> np.ndarray:
    """TFLM reference_integer_ops::Tanh (int8 in, output scale 1/128, zero point 0)."""
    return _sigmoid_family_lut(in_scale, in_zp, gemmlowp_tanh_q4, 24, 0)


# --- accepts / prepare ---------------------------------------------------------------------


def int8_per_tensor_reason(t: Tensor | None, role: str) -> str | None:
    """None when ``t`` is an int8 per-tensor quantized tensor, else why not."""
    if t is None:
        return f"{role} is missing"
    if t.dtype is not DType.INT8:
        return f"{role} '{t.name}' is {t.dtype.name}, not INT8"
    if t.quant is None or len(t.quant.scale) != 1:
        return f"{role} '{t.name}' is not per-tensor quantized"
    if not t.quant.scale[0] > 0:
        return f"{role} '{t.name}' has scale {t.quant.scale[0]} (must be > 0)"
    if not -128 <= t.quant.zero_point[0] <= 127:
        return f"{role} '{t.name}' has zero point {t.quant.zero_point[0]} outside int8"
    return None


def int8_io_reason(x: Tensor | None, out: Tensor | None) -> str | None:
    """`int8_per_tensor_reason` of the op's input, then of its output."""
    return int8_per_tensor_reason(x, "input") or int8_per_tensor_reason(out, "output")


def unary_int8_reason(graph: Graph, op: Operator) -> str | None:
    """Common checks of one-input one-output int8 elementwise ops."""
    ins = graph.op_inputs(op)
    outs = graph.op_outputs(op)
    if len(ins) < 1 or len(outs) != 1:
        return f"expects 1 input and 1 output, has {len(ins)} and {len(outs)}"
    for t, role in ((ins[0], "input"), (outs[0], "output")):
        why = int8_per_tensor_reason(t, role)
        if why:
            return why
    assert ins[0] is not None
    return same_size_reason(ins[0], outs[0])


def same_size_reason(x: Tensor, y: Tensor) -> str | None:
    """None when ``x`` and ``y`` have as many elements (an elementwise op), else why not."""
    if x.size != y.size:
        return f"input has {x.size} elements, output {y.size}"
    return None


def lut_call(graph: Graph, op: Operator, lut: np.ndarray) -> KernelCall:
    """The KernelCall of td_lut_s8_ref for ``op`` with table ``lut``."""
    out = graph.op_outputs(op)[0]
    assert lut.shape == (256,) and lut.dtype == np.int8
    return KernelCall(
        symbol=LUT_SYMBOL,
        params_type="td_lut_params_t",
        params=(("size", out.size), ("lut", "@lut")),
        consts=(ConstArray("lut", "int8_t", lut),),
        args=("in0", "out0"),
    )


def unary_io(graph: Graph, op: Operator) -> tuple[Tensor, Tensor]:
    """(input 0, output 0) of an op whose arity the `accepts` checked."""
    x = graph.op_inputs(op)[0]
    assert x is not None
    return x, graph.op_outputs(op)[0]


def lut_prepare(make: Callable[[Tensor, Tensor, Operator], np.ndarray]
                 ) -> Callable[[Graph, Operator], KernelCall]:
    """The `prepare` of a table op: ``make(input, output, op)`` builds its table."""
    def prepare(graph: Graph, op: Operator) -> KernelCall:
        x, y = unary_io(graph, op)
        return lut_call(graph, op, make(x, y, op))
    return prepare


def _unary_and(extra: Callable[[Tensor, Tensor], str | None]
               ) -> Callable[[Graph, Operator], str | None]:
    """The `accepts` of a table op with checks beyond `unary_int8_reason`: ``extra(input,
    output)``, asked only once the common checks pass."""
    def accepts(graph: Graph, op: Operator) -> str | None:
        return unary_int8_reason(graph, op) or extra(*unary_io(graph, op))
    return accepts


def _hard_swish_reason(x: Tensor, y: Tensor) -> str | None:
    _, e_out, _, _ = hard_swish_params(x.scale, y.scale)
    if e_out > 0:
        return (f"input scale {x.scale:g} / 128 over output scale {y.scale:g} is >= 1 "
                f"(exponent {e_out}); TFLM requires it below 1")
    return None


def _sigmoid_scale_reason(x: Tensor) -> str | None:
    if _sigmoid_input_params(x.scale)[1] < 0:
        return f"input scale {x.scale:g} is too small (below 2^-28)"
    return None


def _logistic_reason(x: Tensor, y: Tensor) -> str | None:
    if y.zero_point != -128:
        return (f"output '{y.name}' zero point is {y.zero_point}; TFLM's int8 LOGISTIC "
                "requires -128 (scale 1/256)")
    return _sigmoid_scale_reason(x)


def _leaky_alpha(op: Operator) -> float:
    return op.options.alpha if isinstance(op.options, LeakyReluOptions) else 0.0


def _variant(op: str, accepts: Callable[[Graph, Operator], str | None],
             prepare: Callable[[Graph, Operator], KernelCall]) -> KernelVariant:
    return ref_variant(op, LUT_SYMBOL, accepts, prepare, inplace=True, source=LUT_SOURCE)


register(_variant("RELU", unary_int8_reason, lut_prepare(
    lambda x, y, op: relu_lut(x.scale, x.zero_point, y.scale, y.zero_point))))
register(_variant("RELU6", unary_int8_reason, lut_prepare(
    lambda x, y, op: relu6_lut(x.scale, x.zero_point))))
register(_variant("LEAKY_RELU", unary_int8_reason, lut_prepare(
    lambda x, y, op: leaky_relu_lut(x.scale, x.zero_point, y.scale, y.zero_point,
                                    _leaky_alpha(op)))))
register(_variant("HARD_SWISH", _unary_and(_hard_swish_reason), lut_prepare(
    lambda x, y, op: hard_swish_lut(x.scale, x.zero_point, y.scale, y.zero_point))))
register(_variant("LOGISTIC", _unary_and(_logistic_reason), lut_prepare(
    lambda x, y, op: logistic_lut(x.scale, x.zero_point))))
register(_variant("TANH", _unary_and(lambda x, y: _sigmoid_scale_reason(x)), lut_prepare(
    lambda x, y, op: tanh_lut(x.scale, x.zero_point))))
