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

The depthwise kernel keeps the reference's loop order and declares the reference's access
order. The convolution takes its output channels in pairs (td_opt_pairs.h) where it has no
groups and contiguous kernel rows; a pair reads its pixel's whole window before writing, so
the reference's order (which allows no more overlap) stays true for its windows, and its
pointwise path declares the pairs' own order. The back-to-front twin
``td_conv2d_1x1_back_s8_opt`` runs that pointwise body from the last pixel to the first, so
that the in-place chains the reference kernels get (a pointwise output trailing its input
after a depthwise layer that led) are there with the portable kernels too. Invariants:
``impl="opt"``, no board feature required, priority between the reference (0) and the
dsp/mve variants (>= 10).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import numpy as np

from tinydeploy.kernels.access import (
    AccessOrder,
    conv_1x1_lanes_back_order,
    conv_1x1_lanes_order,
    conv_ref_order,
    dwconv_ref_order,
)
from tinydeploy.kernels.arm_dsp import fold_bias, rounding_form
from tinydeploy.kernels.conv import CONV2D_1X1_BACK_S8_REF, CONV2D_S8_REF
from tinydeploy.kernels.depthwise import DWCONV2D_S8_REF
from tinydeploy.kernels.registry import ConstArray, KernelCall, KernelVariant, register
from tinydeploy.model.ir import Graph, Operator

OPT_DIR = "kernels/opt"
DOT_HEADER = f"{OPT_DIR}/td_opt_dot.h"
# the channel-pair body of both orders: its header and its one source (one copy per build)
PAIR_FILES = (f"{OPT_DIR}/td_opt_pairs.h", f"{OPT_DIR}/td_opt_pairs.c")
PW_LANES = 2   # output channels per step of td_opt_pairs.h (one input load feeds both)
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
    opt = as_opt_call(call, "td_conv2d_s8_opt", rows)
    return replace(opt, instructions=pairs_instructions(opt))


def _conv_1x1_back_prepare(graph: Graph, op: Operator) -> KernelCall:
    return replace(_conv_prepare(graph, op), symbol="td_conv2d_1x1_back_s8_opt")


# the channel-pair pointwise body (td_opt_pairs.h, either order): instructions per MAC and
# per output, fitted on person_detect's four widening pointwise layers on the Cortex-M4
# (24x24x16 -> 32: 2,275,060 measured; 12x12x32 -> 64: 1,640,976; 6x6x64 -> 128: 1,332,464;
# 3x3x128 -> 256: 1,181,327; each estimate within 2 %)
PAIRS_COST = (3.49, 66.0)


def pairs_instructions(call: KernelCall) -> int:
    """The estimate of a pointwise call of td_opt_pairs.h (0: not pointwise, no model)."""
    if not is_pointwise(call):
        return 0
    p = dict(call.params)
    outputs = int(p["batches"]) * int(p["out_h"]) * int(p["out_w"]) * int(p["out_c"])
    per_mac, per_out = PAIRS_COST
    return int(round(outputs * (int(p["in_c"]) * per_mac + per_out)))


def is_pointwise(call: KernelCall) -> bool:
    """True for the calls td_conv2d_s8_opt runs through td_opt_pairs.h: a 1x1 filter over all
    input channels (no groups) without padding."""
    p = dict(call.params)
    return ((int(p["filter_h"]), int(p["filter_w"]), int(p["pad_h"]), int(p["pad_w"]))
            == (1, 1, 0, 0) and int(p["filter_c"]) == int(p["in_c"]))


def _conv_order(call: KernelCall) -> AccessOrder:
    """td_conv2d_s8_opt: pointwise calls take the output channels in pairs (td_opt_pairs.h);
    for other shapes the reference's order holds (a pair writes after reading its window)."""
    return conv_1x1_lanes_order(PW_LANES)(call) if is_pointwise(call) else conv_ref_order(call)


def _dw_prepare(graph: Graph, op: Operator) -> KernelCall:
    call = DWCONV2D_S8_REF.prepare(graph, op)
    oc = int(call.param("out_c"))
    taps = call.const("filter").values.astype(np.int8).reshape(-1, oc)
    return as_opt_call(call, "td_dwconv2d_s8_opt", taps.T)


def _opt_variant(base: KernelVariant, symbol: str,
                 prepare: Callable[[Graph, Operator], KernelCall],
                 access: Callable[[KernelCall], AccessOrder], code_bytes: int, *,
                 shared: tuple[str, ...] = (), priority: int = PRIORITY,
                 twins: tuple[str, ...] = ()) -> KernelVariant:
    """Register the portable variant ``symbol`` of ``base``'s op: its file is named after it
    with td_opt_dot.h and the ``shared`` files (the header and the one source of a body that
    several variants run); it accepts what ``base`` accepts."""
    return register(KernelVariant(
        op=base.op, impl="opt", symbol=symbol,
        sources=(f"{OPT_DIR}/{symbol}.c", DOT_HEADER, *shared), requires=frozenset(),
        accepts=base.accepts, prepare=prepare, priority=priority, access=access,
        code_bytes=code_bytes, twins=twins))


CONV2D_S8_OPT = _opt_variant(CONV2D_S8_REF, "td_conv2d_s8_opt", _conv_prepare, _conv_order,
                             3290, shared=PAIR_FILES, twins=("td_conv2d_1x1_back_s8_opt",))

# The pointwise path of td_conv2d_s8_opt back to front (the same body, td_opt_pairs.h): never
# chosen by priority (it only changes the order), put in the forward kernel's place by the
# planner when a pointwise output should trail its input, as the dsp and reference twins are.
# Its code_bytes hold the shared body too (counted twice when both orders are in a build).
CONV2D_1X1_BACK_S8_OPT = _opt_variant(
    CONV2D_1X1_BACK_S8_REF, "td_conv2d_1x1_back_s8_opt", _conv_1x1_back_prepare,
    conv_1x1_lanes_back_order(PW_LANES), 1220, shared=PAIR_FILES,
    priority=PRIORITY - 1, twins=("td_conv2d_s8_opt",))

DWCONV2D_S8_OPT = _opt_variant(DWCONV2D_S8_REF, "td_dwconv2d_s8_opt", _dw_prepare,
                               dwconv_ref_order, 1490)
