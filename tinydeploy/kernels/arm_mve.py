"""Cortex-M MVE (Helium) variants of the two kernels that dominate a DS-CNN: the pointwise
CONV_2D (front to back, and its back-to-front twin for in-place chains) and the 3x3
DEPTHWISE_CONV_2D.

As in `arm_dsp`, each variant reuses the reference op's checks and `prepare` (all of
TFLite's Prepare-time math lives there, once) and extends the resulting `KernelCall`: another
symbol and sources, the same parameter struct, and a *folded bias*
``bias[o] + input_offset * sum(filter[o])`` (see `arm_dsp.fold_bias`), so that the device
multiplies plain int8 by int8 and never adds the input offset per tap. Unlike the dsp
kernels, the MVE kernels keep the weights int8: the pointwise kernel reads the reference
layout (16-byte vector loads need no lane reordering, tail-predicated loads no padding); the
depthwise kernel reads the taps regrouped per four channels (`pack_dw_filter_mve`).

The C files require MVE (they ``#error`` without it), so the host harness cannot compile
them; tests/golden/test_mve_target.py runs them on QEMU's mps3-an547 (Cortex-M55).

Invariants: every variant here has ``impl="mve"``, requires the board feature ``"mve"``,
outranks the dsp variants of the same op (``priority`` above theirs) and returns a reason
from ``accepts`` for any shape it does not handle, so that selection falls back to the dsp or
reference kernel.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from tinydeploy.kernels.access import (
    conv_1x1_lanes_back_order,
    conv_1x1_lanes_order,
    dwconv_lanes_order,
)
from tinydeploy.kernels.arm_dsp import (
    CONV2D_1X1_S8_DSP,
    DW3X3_TAPS_H,
    DWCONV2D_3X3_S8_DSP,
    conv_1x1_accepts,
    dw3x3_accepts,
    fold_bias,
)
from tinydeploy.kernels.conv import CONV2D_S8_REF
from tinydeploy.kernels.depthwise import DWCONV2D_S8_REF
from tinydeploy.kernels.registry import ConstArray, KernelCall, KernelVariant, register
from tinydeploy.model.ir import Graph, Operator

ARM_DIR = "kernels/arm"
MVE = frozenset({"mve"})
REQUANT_MVE_H = f"{ARM_DIR}/td_requant_mve.h"   # four-lane td_requantize (private)
PW_MVE_H = f"{ARM_DIR}/td_conv2d_1x1_mve.h"     # one pointwise output pixel (private)


def dw_scratch_bytes(channels: int) -> int:
    """Twin of td_dwconv2d_3x3_s8_mve_scratch_size: one row of the input zero point (the
    channels rounded up to 4), read by the taps that fall outside the image."""
    return (channels + 3) & ~3


def with_folded_bias(call: KernelCall, symbol: str, rows: np.ndarray) -> KernelCall:
    """The reference ``call`` turned into a call of the mve kernel ``symbol``: the filter
    kept as it is, the constant ``bias`` (if any) replaced by ``bias_folded`` (``rows`` = the
    filter as [out_c, depth] int8), which the ``bias`` field points at (never NULL); the other
    const arrays kept in order; no scratch."""
    bias = next((c.values for c in call.consts if c.name == "bias"), None)
    folded = fold_bias(rows, bias, int(call.param("input_offset")))
    consts = [c for c in call.consts if c.name != "bias"]
    consts.append(ConstArray("bias_folded", "int32_t", folded))
    params = tuple((k, "@bias_folded" if k == "bias" else v) for k, v in call.params)
    return replace(call, symbol=symbol, params=params, consts=tuple(consts))


# --- CONV_2D 1x1 --------------------------------------------------------------------------

def _conv_1x1_prepare(graph: Graph, op: Operator) -> KernelCall:
    call = CONV2D_S8_REF.prepare(graph, op)
    assert call.param("pad_h") == 0 and call.param("pad_w") == 0
    depth = int(call.param("in_c"))
    filt = call.const("filter").values.astype(np.int8)
    return with_folded_bias(call, "td_conv2d_1x1_s8_mve", filt.reshape(filt.size // depth,
                                                                       depth))


def _conv_1x1_back_prepare(graph: Graph, op: Operator) -> KernelCall:
    return replace(_conv_1x1_prepare(graph, op), symbol="td_conv2d_1x1_back_s8_mve")


CONV2D_1X1_S8_MVE = register(KernelVariant(
    op="CONV_2D", impl="mve", symbol="td_conv2d_1x1_s8_mve",
    sources=(f"{ARM_DIR}/td_conv2d_1x1_s8_mve.c", PW_MVE_H, REQUANT_MVE_H), requires=MVE,
    accepts=conv_1x1_accepts, prepare=_conv_1x1_prepare,
    priority=CONV2D_1X1_S8_DSP.priority + 10, access=conv_1x1_lanes_order(4),
    twins=("td_conv2d_1x1_back_s8_mve",)))

# The same product back to front (no scratch either): never chosen by priority (it only
# changes the order), put in the forward kernel's place by the planner when its output should
# trail its input (after a depthwise layer that moved its output down), as the dsp twins are.
CONV2D_1X1_BACK_S8_MVE = register(KernelVariant(
    op="CONV_2D", impl="mve", symbol="td_conv2d_1x1_back_s8_mve",
    sources=(f"{ARM_DIR}/td_conv2d_1x1_back_s8_mve.c", PW_MVE_H, REQUANT_MVE_H),
    requires=MVE, accepts=conv_1x1_accepts, prepare=_conv_1x1_back_prepare,
    priority=CONV2D_1X1_S8_MVE.priority - 1, access=conv_1x1_lanes_back_order(4),
    twins=("td_conv2d_1x1_s8_mve",)))


# --- DEPTHWISE_CONV_2D 3x3 ----------------------------------------------------------------

def pack_dw_filter_mve(taps: np.ndarray) -> np.ndarray:
    """[9, C] int8 depthwise taps -> td_dwconv2d_3x3_s8_mve's filter: int8 [ceil(C/4)][9][4],
    group g, tap t = channels 4g .. 4g+3 of tap t (0 where the channel does not exist)."""
    taps = np.asarray(taps, dtype=np.int8)
    ntaps, c = taps.shape
    groups = (c + 3) // 4
    padded = np.zeros((ntaps, 4 * groups), dtype=np.int8)
    padded[:, :c] = taps
    return np.ascontiguousarray(padded.reshape(ntaps, groups, 4).transpose(1, 0, 2)).reshape(-1)


def _dw_prepare(graph: Graph, op: Operator) -> KernelCall:
    call = DWCONV2D_S8_REF.prepare(graph, op)
    c = int(call.param("in_c"))
    taps = call.const("filter").values.astype(np.int8).reshape(9, c)
    # the folded bias wants [out_c, depth] rows (channel c's row is its 9 taps); scratch: one
    # row of the input zero point, as for the dsp kernel
    call = with_folded_bias(call, "td_dwconv2d_3x3_s8_mve", taps.T)
    packed = ConstArray("filter_groups", "int8_t", pack_dw_filter_mve(taps))
    consts = (packed,) + tuple(k for k in call.consts if k.name != "filter")
    params = tuple((k, "@filter_groups" if k == "filter" else v) for k, v in call.params)
    return replace(call, params=params, consts=consts, args=call.args + ("scratch",),
                   scratch_bytes=dw_scratch_bytes(c))


DWCONV2D_3X3_S8_MVE = register(KernelVariant(
    op="DEPTHWISE_CONV_2D", impl="mve", symbol="td_dwconv2d_3x3_s8_mve",
    sources=(f"{ARM_DIR}/td_dwconv2d_3x3_s8_mve.c", REQUANT_MVE_H, DW3X3_TAPS_H), requires=MVE,
    accepts=dw3x3_accepts, prepare=_dw_prepare,
    priority=DWCONV2D_3X3_S8_DSP.priority + 10, access=dwconv_lanes_order(4)))
