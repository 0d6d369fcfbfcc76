"""int8 SUM and REDUCE_MAX over any axes.

SUM is TFLite Micro's ``QuantizedMeanOrSum`` with ``compute_sum``: the same int32 sums as
MEAN and the same ``td_mean_s8_ref`` kernel, but the multiplier is the plain in/out scale
ratio (MEAN folds 1/count into it). REDUCE_MAX takes the largest raw int8 value: TFLM
requires the input and output quantization to be equal (its Eval fails otherwise), so that
is checked here. Both reuse MEAN's axis resolution (negative axes, repeats, rank up to 6).
"""

from __future__ import annotations

from dataclasses import replace

from tinydeploy.fixedpoint import quantize_multiplier
from tinydeploy.kernels.common import f32, ref_variant, then_check
from tinydeploy.kernels.registry import KernelCall, register
from tinydeploy.kernels.shape_ops import _accepts_mean, _prepare_mean
from tinydeploy.model.ir import Graph, Operator, Tensor


def _prepare_sum(graph: Graph, op: Operator) -> KernelCall:
    call = _prepare_mean(graph, op)
    x, y = graph.op_inputs(op)[0], graph.op_outputs(op)[0]
    assert x is not None
    mult, shift = quantize_multiplier(f32(x.scale) / f32(y.scale))
    params = tuple((k, mult if k == "out_mult" else shift if k == "out_shift" else v)
                   for k, v in call.params)
    return replace(call, params=params)


def _same_quant_reason(x: Tensor, y: Tensor) -> str | None:
    if f32(x.scale) != f32(y.scale) or x.zero_point != y.zero_point:
        return (f"input scale {x.scale:g}, zero point {x.zero_point} differ from the output's "
                f"{y.scale:g}, {y.zero_point}: TFLM's int8 REDUCE_MAX requires them equal")
    return None


_accepts_reduce_max = then_check(_accepts_mean, _same_quant_reason)


def _prepare_reduce_max(graph: Graph, op: Operator) -> KernelCall:
    call = _prepare_mean(graph, op)
    return replace(call, symbol="td_reduce_max_s8_ref", args=("in0", "out0"), scratch_bytes=0)


register(ref_variant("SUM", "td_mean_s8_ref", _accepts_mean, _prepare_sum,
                     headers=("kernels/ref/td_mean_body.h", "kernels/ref/td_bcast_rows.h")))
register(ref_variant("REDUCE_MAX", "td_reduce_max_s8_ref", _accepts_reduce_max,
                     _prepare_reduce_max, headers=("kernels/ref/td_bcast_rows.h",)))
