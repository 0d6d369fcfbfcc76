"""int8 binary ops with broadcasting: SUB, MAXIMUM, MINIMUM, SQUARED_DIFFERENCE, PRELU.

All five share one parameter struct (``td_binary_params_t``) and the broadcast walk of ADD
and MUL (`elementwise.broadcast_strides`): Prepare-time arithmetic is done here exactly as
TFLite Micro's Prepare does it, including its float types:

* SUB (``CalculateOpDataSub``) as ADD: multipliers of double ratios, left shift 20;
* SQUARED_DIFFERENCE works in double throughout, left shift 7, and its output multiplier may
  exceed 1;
* PRELU uses two double multipliers, in/out and in*alpha/out;
* MAXIMUM/MINIMUM compare the raw int8 values: TFLM never requantizes them, so the
  quantization of the inputs and the output must agree (checked here, as the converter
  guarantees it; otherwise the oracle's bytes would not mean what the model says).

Broadcast ranks follow TFLM's implementations: SUB up to 5-D (``BroadcastSubCommon``),
SQUARED_DIFFERENCE up to 4-D (``BroadcastBinaryFunction4DSlow``), the others up to 6-D.
Either operand may be constant (not both): it is then a flash array in the params and the
kernel argument for it repeats the arena operand. All five may run in place.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from tinydeploy.fixedpoint import quantize_multiplier
from tinydeploy.kernels.common import REF_DIR, activation_range, f32, ref_variant
from tinydeploy.kernels.elementwise import (
    add_params,
    binary_reason,
    broadcast_shape,
    broadcast_strides,
    fused_activation,
)
from tinydeploy.kernels.registry import ConstArray, KernelCall, register
from tinydeploy.model.ir import Graph, Operator, Tensor

HEADERS = (f"{REF_DIR}/td_binary_walk.h", f"{REF_DIR}/td_bcast_rows.h")
SUB_LEFT_SHIFT = 20
SQDIFF_LEFT_SHIFT = 7

Params = dict[str, int]


def _operands(graph: Graph, op: Operator) -> tuple[Tensor, Tensor, Tensor]:
    a, b = graph.op_inputs(op)
    assert a is not None and b is not None
    return a, b, graph.op_outputs(op)[0]


def binary_call(symbol: str, graph: Graph, op: Operator, p: Params) -> KernelCall:
    """The td_binary_params_t call of a broadcasting binary op: ``p``'s fields (0 where
    absent), the broadcast dims and strides, a constant operand's data in flash."""
    a, b, out = _operands(graph, op)
    out_shape = broadcast_shape(a.shape, b.shape)
    assert out_shape is not None
    dims, st0, st1 = broadcast_strides(a.shape, b.shape, out_shape)
    consts = [ConstArray("out_dims", "int32_t", np.array(dims, dtype=np.int32)),
              ConstArray("in0_strides", "int32_t", np.array(st0, dtype=np.int32)),
              ConstArray("in1_strides", "int32_t", np.array(st1, dtype=np.int32))]
    refs = {}
    for k, t in enumerate((a, b)):
        if t.is_constant:
            assert t.data is not None
            consts.append(ConstArray(f"in{k}_data", "int8_t",
                                     np.asarray(t.data, dtype=np.int8).reshape(-1)))
            refs[f"in{k}_const"] = f"@in{k}_data"
        else:
            refs[f"in{k}_const"] = "NULL"
    arena = "in1" if a.is_constant else "in0"
    args = (arena if a.is_constant else "in0", arena if b.is_constant else "in1", "out0")
    fields = ("left_shift", "in0_offset", "in0_mult", "in0_shift", "in1_offset", "in1_mult",
              "in1_shift", "out_offset", "out_mult", "out_shift", "alpha_mult", "alpha_shift",
              "act_min", "act_max")
    params: list[tuple[str, int | float | str]] = [(f, int(p.get(f, 0))) for f in fields]
    params += [("out_dims", "@out_dims"), ("in0_strides", "@in0_strides"),
               ("in1_strides", "@in1_strides"), ("in0_const", refs["in0_const"]),
               ("in1_const", refs["in1_const"])]
    return KernelCall(symbol=symbol, params_type="td_binary_params_t", params=tuple(params),
                      consts=tuple(consts), args=args)


# --- per-op Prepare arithmetic ----------------------------------------------------------


def sub_params(s0: float, z0: int, s1: float, z1: int, so: float, zo: int) -> Params:
    """TFLM CalculateOpDataSub (int8). The source divides the float32 scales in float32, but
    the tflite-micro build that is the oracle gives the double ratios' bytes (checked: with
    float32 ratios 0.05 / 0.22 rounds to another multiplier and one output of the golden
    case differs by one), as ADD's do: `elementwise.add_params` with SUB's left shift."""
    return add_params(s0, z0, s1, z1, so, zo, SUB_LEFT_SHIFT)


def squared_difference_params(s0: float, z0: int, s1: float, z1: int, so: float, zo: int
                              ) -> Params:
    """TFLM SquaredDifference PrepareQuantized (int8): double arithmetic, left shift 7."""
    twice_max = 2.0 * f32(max(np.float32(s0), np.float32(s1)))
    m0, sh0 = quantize_multiplier(f32(s0) / twice_max)
    m1, sh1 = quantize_multiplier(f32(s1) / twice_max)
    denom = f32(np.float32(1 << (2 * SQDIFF_LEFT_SHIFT)) * np.float32(so))
    mo, sho = quantize_multiplier(twice_max * twice_max / denom)
    return {"left_shift": SQDIFF_LEFT_SHIFT, "in0_offset": -z0, "in0_mult": m0,
            "in0_shift": sh0, "in1_offset": -z1, "in1_mult": m1, "in1_shift": sh1,
            "out_offset": zo, "out_mult": mo, "out_shift": sho, "act_min": -128,
            "act_max": 127}


def prelu_params(s_in: float, z_in: int, s_alpha: float, z_alpha: int, so: float, zo: int
                 ) -> Params:
    """TFLM CalculatePreluParams (int8)."""
    m1, sh1 = quantize_multiplier(f32(s_in) / f32(so))
    m2, sh2 = quantize_multiplier(f32(s_in) * f32(s_alpha) / f32(so))
    return {"in0_offset": -z_in, "in1_offset": -z_alpha, "out_offset": zo, "out_mult": m1,
            "out_shift": sh1, "alpha_mult": m2, "alpha_shift": sh2, "act_min": -128,
            "act_max": 127}


# --- accepts / prepare per op -------------------------------------------------------------


def _accepts_sub(graph: Graph, op: Operator) -> str | None:
    why = binary_reason(graph, op, 5)
    if why:
        return why
    a, b, out = _operands(graph, op)
    act = fused_activation(op)
    if activation_range(act, out) is None:
        return f"fused activation {act.name} is not supported for int8"
    p = sub_params(a.scale, a.zero_point, b.scale, b.zero_point, out.scale, out.zero_point)
    for k in ("in0", "in1", "out"):
        if p[f"{k}_shift"] > 0:
            return (f"output scale {out.scale:g} is too small for input scales {a.scale:g}, "
                    f"{b.scale:g} (TFLM needs every SUB rescale below 1)")
    return None


def _prepare_sub(graph: Graph, op: Operator) -> KernelCall:
    a, b, out = _operands(graph, op)
    p = sub_params(a.scale, a.zero_point, b.scale, b.zero_point, out.scale, out.zero_point)
    rng = activation_range(fused_activation(op), out)
    assert rng is not None
    p["act_min"], p["act_max"] = rng
    return binary_call("td_sub_s8_ref", graph, op, p)


def _accepts_minmax(graph: Graph, op: Operator) -> str | None:
    why = binary_reason(graph, op, 6)
    if why:
        return why
    a, b, out = _operands(graph, op)
    for t in (a, b):
        if f32(t.scale) != f32(out.scale) or t.zero_point != out.zero_point:
            return (f"input '{t.name}' has scale {t.scale:g}, zero point {t.zero_point}, the "
                    f"output {out.scale:g}, {out.zero_point}: TFLM's int8 {op.opcode} compares "
                    "raw values, so all three must share one quantization")
    return None


def _prepare_minmax(symbol: str) -> Callable[[Graph, Operator], KernelCall]:
    def prepare(graph: Graph, op: Operator) -> KernelCall:
        return binary_call(symbol, graph, op, {"act_min": -128, "act_max": 127})
    return prepare


def _accepts_sqdiff(graph: Graph, op: Operator) -> str | None:
    why = binary_reason(graph, op, 4)
    if why:
        return why
    a, b, out = _operands(graph, op)
    p = squared_difference_params(a.scale, a.zero_point, b.scale, b.zero_point, out.scale,
                                  out.zero_point)
    if p["in0_shift"] > 0 or p["in1_shift"] > 0:  # pragma: no cover - ratios are <= 1/2
        return "input rescale not below 1"
    return None


def _prepare_sqdiff(graph: Graph, op: Operator) -> KernelCall:
    a, b, out = _operands(graph, op)
    return binary_call("td_squared_difference_s8_ref", graph, op, squared_difference_params(
        a.scale, a.zero_point, b.scale, b.zero_point, out.scale, out.zero_point))


def _accepts_prelu(graph: Graph, op: Operator) -> str | None:
    why = binary_reason(graph, op, 6)
    if why:
        return why
    a, _, _ = _operands(graph, op)
    if a.is_constant:
        return f"input '{a.name}' is constant (fold the op before compiling)"
    return None


def _prepare_prelu(graph: Graph, op: Operator) -> KernelCall:
    a, b, out = _operands(graph, op)
    return binary_call("td_prelu_s8_ref", graph, op, prelu_params(
        a.scale, a.zero_point, b.scale, b.zero_point, out.scale, out.zero_point))


def _variant(op: str, symbol: str, accepts: Callable[[Graph, Operator], str | None],
             prepare: Callable[[Graph, Operator], KernelCall],
             headers: tuple[str, ...] = ()) -> None:
    register(ref_variant(op, symbol, accepts, prepare, inplace=True,
                         headers=HEADERS + headers))


_variant("SUB", "td_sub_s8_ref", _accepts_sub, _prepare_sub,
         (f"{REF_DIR}/td_addsub_one.h",))
_variant("MAXIMUM", "td_maximum_s8_ref", _accepts_minmax, _prepare_minmax("td_maximum_s8_ref"))
_variant("MINIMUM", "td_minimum_s8_ref", _accepts_minmax, _prepare_minmax("td_minimum_s8_ref"))
_variant("SQUARED_DIFFERENCE", "td_squared_difference_s8_ref", _accepts_sqdiff,
         _prepare_sqdiff)
_variant("PRELU", "td_prelu_s8_ref", _accepts_prelu, _prepare_prelu)
