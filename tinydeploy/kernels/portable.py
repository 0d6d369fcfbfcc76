"""Portable optimised variants of CONV_2D and DEPTHWISE_CONV_2D (``impl="opt"``): plain C
for cores without the DSP extension (Cortex-M0/M0+), faster than the reference kernels
through their loop shape and the host-chosen requantization form, not SIMD.

Each variant reuses the reference op's checks and `prepare` and keeps its constants (the
int8 filter in the reference layout: no more flash), with two host decisions added:

* ``requant_form``: the branch-free rounding form where the host proves it exact
  (`arm_dsp.rounding_form`), else the general td_requantize;
* when every window lies inside the image (no tap is ever skipped) and the layer has a bias,
  the input offset is folded into the bias (`arm_dsp.fold_bias`, the same bytes) and the
  call passes ``input_offset = 0``, which drops one add per multiply-accumulate.

The kernels keep the reference's loop order, so they declare the reference's access order
and the planner's in-place placements stay valid. Invariants: ``impl="opt"``, no board
feature required, priority between the reference (0) and the dsp/mve variants (>= 10).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from tinydeploy.kernels.access import conv_ref_order, dwconv_ref_order
from tinydeploy.kernels.arm_dsp import fold_bias, rounding_form
from tinydeploy.kernels.conv import CONV2D_S8_REF
from tinydeploy.kernels.depthwise import DWCONV2D_S8_REF
from tinydeploy.kernels.registry import ConstArray, KernelCall, KernelVariant, register
from tinydeploy.model.ir import Graph, Operator

OPT_DIR = "kernels/opt"
DOT_HEADER = f"{OPT_DIR}/td_opt_dot.h"
PRIORITY = 5


def windows_inside(call: KernelCall) -> bool:
    """True when no output pixel's window reaches outside the image (nothing skipped)."""
    p = dict(call.params)
    for axis in ("h", "w"):
        eff = (int(p[f"filter_{axis}"]) - 1) * int(p[f"dilation_{axis}"]) + 1
        last = (int(p[f"out_{axis}"]) - 1) * int(p[f"stride_{axis}"]) - int(p[f"pad_{axis}"])
        if int(p[f"pad_{axis}"]) != 0 or last + eff > int(p[f"in_{axis}"]):
            return False
    return True


def as_opt_call(call: KernelCall, symbol: str, rows: np.ndarray) -> KernelCall:
    """The reference ``call`` as a call of ``symbol``: requant_form proven from ``rows`` (the
    filter as [out_c, window] int8, in channel order); the input offset folded into the bias
    where every window is inside the image."""
    params = call.params + (("requant_form", rounding_form(rows, call)),)
    consts = call.consts
    has_bias = any(c.name == "bias" for c in consts)
    if has_bias and windows_inside(call) and int(call.param("input_offset")) != 0:
        folded = fold_bias(rows, call.const("bias").values, int(call.param("input_offset")))
        consts = tuple(ConstArray("bias", "int32_t", folded) if c.name == "bias" else c
                       for c in consts)
        params = tuple((k, 0 if k == "input_offset" else v) for k, v in params)
    return replace(call, symbol=symbol, params=params, consts=consts)


def _conv_prepare(graph: Graph, op: Operator) -> KernelCall:
    call = CONV2D_S8_REF.prepare(graph, op)
    oc = int(call.param("out_c"))
    rows = call.const("filter").values.astype(np.int8).reshape(oc, -1)
    return as_opt_call(call, "td_conv2d_s8_opt", rows)


def _dw_prepare(graph: Graph, op: Operator) -> KernelCall:
    call = DWCONV2D_S8_REF.prepare(graph, op)
    oc = int(call.param("out_c"))
    taps = call.const("filter").values.astype(np.int8).reshape(-1, oc)
    return as_opt_call(call, "td_dwconv2d_s8_opt", taps.T)


CONV2D_S8_OPT = register(KernelVariant(
    op="CONV_2D", impl="opt", symbol="td_conv2d_s8_opt",
    sources=(f"{OPT_DIR}/td_conv2d_s8_opt.c", DOT_HEADER), requires=frozenset(),
    accepts=CONV2D_S8_REF.accepts, prepare=_conv_prepare, priority=PRIORITY,
    access=conv_ref_order,
    code_bytes=1900))

DWCONV2D_S8_OPT = register(KernelVariant(
    op="DEPTHWISE_CONV_2D", impl="opt", symbol="td_dwconv2d_s8_opt",
    sources=(f"{OPT_DIR}/td_dwconv2d_s8_opt.c", DOT_HEADER), requires=frozenset(),
    accepts=DWCONV2D_S8_REF.accepts, prepare=_dw_prepare, priority=PRIORITY,
    access=dwconv_ref_order,
    code_bytes=1270))
