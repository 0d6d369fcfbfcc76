"""Prepare-time helpers shared by the op modules: TFLite's padding, activation-range and
per-channel requantization rules, and the dtype/quantization checks of `accepts` functions.

All of these reproduce TFLite Micro's Prepare functions exactly (float32 scales widened to
double, ``std::round`` halves away from zero), because the C kernels only apply what is
computed here.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from tinydeploy.model.ir import Activation, DType, Graph, Operator, Padding, Tensor
from tinydeploy.quantize.fixedpoint import quantize_multiplier, round_half_away

INT8_MIN, INT8_MAX = -128, 127
REF_DIR = "kernels/ref"


def f32(x: float) -> float:
    """The double TFLite sees for a float32 value stored in the model."""
    return float(np.float32(x))


def compute_out_size(padding: Padding, size: int, filt: int, stride: int,
                     dilation: int = 1) -> int:
    """TFLite ``ComputeOutSize``."""
    eff = (filt - 1) * dilation + 1
    if padding == Padding.SAME:
        return (size + stride - 1) // stride
    return (size + stride - eff) // stride


def compute_padding(stride: int, dilation: int, size: int, filt: int, out: int) -> int:
    """TFLite ``ComputePaddingWithOffset``: the top/left padding (the odd extra goes to the
    bottom/right and is never read explicitly: the kernels skip out-of-image taps)."""
    eff = (filt - 1) * dilation + 1
    total = (out - 1) * stride + eff - size
    total = max(total, 0)
    return total // 2


def activation_range(act: Activation, out: Tensor) -> tuple[int, int] | None:
    """TFLite ``CalculateActivationRangeQuantized`` for int8 outputs; None when the fused
    activation has no clamp form (TANH, SIGN_BIT)."""
    scale = np.float32(out.scale)
    zp = out.zero_point

    def q(v: float) -> int:
        return zp + round_half_away(float(np.float32(v) / scale))

    if act == Activation.NONE:
        return INT8_MIN, INT8_MAX
    if act == Activation.RELU:
        return max(INT8_MIN, q(0.0)), INT8_MAX
    if act == Activation.RELU6:
        return max(INT8_MIN, q(0.0)), min(INT8_MAX, q(6.0))
    if act == Activation.RELU_N1_TO_1:
        return max(INT8_MIN, q(-1.0)), min(INT8_MAX, q(1.0))
    return None


def per_channel_multipliers(input_scale: float, filter_scales: Sequence[float],
                            output_scale: float, channels: int) -> tuple[np.ndarray, np.ndarray]:
    """TFLite ``PopulateConvolutionQuantizationParams`` (int8): one (multiplier, shift) per
    output channel from in_scale * filter_scale[c] / out_scale, in double. A per-tensor
    filter scale is repeated for every channel."""
    mult = np.zeros(channels, dtype=np.int32)
    shift = np.zeros(channels, dtype=np.int32)
    for c in range(channels):
        fs = filter_scales[c] if len(filter_scales) > 1 else filter_scales[0]
        eff = f32(input_scale) * f32(fs) / f32(output_scale)
        mult[c], shift[c] = quantize_multiplier(eff)
    return mult, shift


def check_int8_tensor(t: Tensor | None, role: str, *, per_tensor: bool = True) -> str | None:
    """None if ``t`` is an int8 tensor with usable quantization, else the reason."""
    if t is None:
        return f"{role} is missing"
    if t.dtype != DType.INT8:
        return f"{role} '{t.name}' is {t.dtype.name}, int8 required"
    if t.quant is None or not t.quant.scale:
        return f"{role} '{t.name}' has no quantization parameters"
    if per_tensor and t.quant.per_channel:
        return f"{role} '{t.name}' is quantized per channel, per-tensor required"
    if any(s <= 0 for s in t.quant.scale):
        return f"{role} '{t.name}' has a non-positive scale"
    return None


def first_reason(*reasons: str | None) -> str | None:
    for r in reasons:
        if r is not None:
            return r
    return None


def io(graph: Graph, op: Operator) -> tuple[tuple[Tensor | None, ...], tuple[Tensor, ...]]:
    return graph.op_inputs(op), graph.op_outputs(op)


def optional_input(graph: Graph, op: Operator, k: int) -> Tensor | None:
    if len(op.inputs) <= k or op.inputs[k] < 0:
        return None
    return graph.tensor(op.inputs[k])


def nhwc(t: Tensor) -> tuple[int, int, int, int]:
    n, h, w, c = t.shape
    return n, h, w, c
