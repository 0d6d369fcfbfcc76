"""int8 RESIZE_NEAREST_NEIGHBOR and RESIZE_BILINEAR (NHWC, constant output size).

Everything that depends only on the shapes is computed here, per output row and column,
exactly as TFLite Micro computes it per pixel:

* nearest: ``GetNearestNeighbor`` in float32 (scale = in/out or (in-1)/(out-1) with
  align_corners; +0.5 with half_pixel_centers; floor, or round half away from zero with
  align_corners; clamped to the input);
* bilinear: ``ResizeBilinearInteger``'s Q10 scale (rounded integer division), the scaled
  position, its lower/upper source index and the Q10 weight, with C's truncating division.

RESIZE_NEAREST_NEIGHBOR also runs on int16 (TFLM's int16 kernel: the same copies, one C body
for both types); TFLM's RESIZE_BILINEAR is int8 only.

The output keeps the input's quantization in TFLM (values are copied or interpolated as
stored), so no requantization happens. A size tensor that is not constant would make the
output shape depend on data and is refused.
"""

from __future__ import annotations

import math

import numpy as np

from tinydeploy.fixedpoint import round_half_away
from tinydeploy.kernels.activations import int8_per_tensor_reason
from tinydeploy.kernels.common import TensorReason, plan_reason, planned_variants, ref_variant
from tinydeploy.kernels.layout import COPY_ELEMS
from tinydeploy.kernels.registry import ConstArray, KernelCall, register
from tinydeploy.model.ir import Graph, Operator, ResizeOptions, Tensor


def _trunc_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def nearest_index(v: int, in_size: int, out_size: int, align: bool, half: bool) -> int:
    """TFLite GetNearestNeighbor (float32 arithmetic)."""
    if align and out_size > 1:
        scale = np.float32(in_size - 1) / np.float32(out_size - 1)
    else:
        scale = np.float32(in_size) / np.float32(out_size)
    offset = np.float32(0.5) if half else np.float32(0.0)
    pos = float(np.float32((np.float32(v) + offset) * scale))
    idx = round_half_away(pos) if align else math.floor(pos)
    idx = min(idx, in_size - 1)
    if half:
        idx = max(0, idx)
    return idx


def bilinear_taps(v: int, in_size: int, out_size: int, align: bool, half: bool
                  ) -> tuple[int, int, int]:
    """(lower, upper, Q10 weight of upper) of TFLite's ResizeBilinearInteger."""
    scale = _trunc_div((1 << 10) * in_size + out_size // 2, out_size)
    if align and out_size > 1:
        scale = _trunc_div((1 << 10) * (in_size - 1) + (out_size - 1) // 2, out_size - 1)
    scaled = v * scale + _trunc_div(scale, 2) - (1 << 9) if half else v * scale
    lower = max(_trunc_div(scaled, 1 << 10), 0)
    upper = min(_trunc_div(scaled + (1 << 10) - 1, 1 << 10), in_size - 1)
    return lower, upper, scaled - (1 << 10) * lower


def _plan(graph: Graph, op: Operator, reason: TensorReason = int8_per_tensor_reason
          ) -> tuple[Tensor, Tensor, bool, bool] | str:
    ins, outs = graph.op_inputs(op), graph.op_outputs(op)
    if len(ins) != 2 or len(outs) != 1:
        return f"expects 2 inputs and 1 output, has {len(ins)} and {len(outs)}"
    x, size, y = ins[0], ins[1], outs[0]
    why = reason(x, "input") or reason(y, "output")
    if why:
        return why
    assert x is not None
    if x.is_constant:
        return f"input '{x.name}' is constant (fold the op before compiling)"
    if size is None or size.data is None:
        return ("the size input is not constant: the output shape would depend on data, and "
                "tinydeploy plans static shapes")
    if len(x.shape) != 4 or len(y.shape) != 4:
        return f"input rank {len(x.shape)} (TFLM requires 4-D NHWC)"
    hw = [int(v) for v in np.asarray(size.data).reshape(-1)]
    if len(hw) != 2 or tuple(y.shape) != (x.shape[0], hw[0], hw[1], x.shape[3]):
        return f"output shape {list(y.shape)} does not match the size {hw}"
    if min(hw) < 1:
        return f"output size {hw} is empty"
    opts = op.options if isinstance(op.options, ResizeOptions) else ResizeOptions()
    if opts.align_corners and opts.half_pixel_centers:
        return "align_corners and half_pixel_centers are both set (TFLM refuses this)"
    return x, y, opts.align_corners, opts.half_pixel_centers


def _accepts(graph: Graph, op: Operator, reason: TensorReason = int8_per_tensor_reason
             ) -> str | None:
    return plan_reason(_plan(graph, op, reason))


def _call(symbol: str, x: Tensor, y: Tensor, rows: list[int], cols: list[int]) -> KernelCall:
    n, h, w, c = x.shape
    return KernelCall(
        symbol=symbol, params_type="td_resize_params_t",
        params=(("batches", n), ("in_h", h), ("in_w", w), ("depth", c), ("out_h", y.shape[1]),
                ("out_w", y.shape[2]), ("rows", "@rows"), ("cols", "@cols")),
        consts=(ConstArray("rows", "int32_t", np.array(rows, dtype=np.int32)),
                ConstArray("cols", "int32_t", np.array(cols, dtype=np.int32))),
        args=("in0", "out0"))


def _nearest_call(graph: Graph, op: Operator, plan: tuple[Tensor, Tensor, bool, bool],
                  symbol: str) -> KernelCall:
    x, y, align, half = plan
    rows = [nearest_index(v, x.shape[1], y.shape[1], align, half) for v in range(y.shape[1])]
    cols = [nearest_index(v, x.shape[2], y.shape[2], align, half) for v in range(y.shape[2])]
    return _call(symbol, x, y, rows, cols)


def _prepare_bilinear(graph: Graph, op: Operator) -> KernelCall:
    plan = _plan(graph, op)
    assert not isinstance(plan, str), plan
    x, y, align, half = plan
    rows = [t for v in range(y.shape[1])
            for t in bilinear_taps(v, x.shape[1], y.shape[1], align, half)]
    cols = [t for v in range(y.shape[2])
            for t in bilinear_taps(v, x.shape[2], y.shape[2], align, half)]
    return _call("td_resize_bilinear_s8_ref", x, y, rows, cols)


for _v in planned_variants("RESIZE_NEAREST_NEIGHBOR", "resize_nearest", COPY_ELEMS, _plan,
                           _nearest_call, headers=("kernels/ref/td_resize_nearest_body.h",)):
    register(_v)
register(ref_variant("RESIZE_BILINEAR", "td_resize_bilinear_s8_ref", _accepts,
                     _prepare_bilinear))
