"""Cortex-M DSP-extension (SIMD) variants of CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED.

Each variant reuses the reference op's checks and `prepare` (all of TFLite's Prepare-time
math lives there, once) and extends the resulting `KernelCall`: another symbol and sources,
the same parameter struct, a scratch buffer, a *folded bias* and the filter packed on the
host as sign-extended int16 in the lane order the SIMD instructions consume (q15 rows for
the matrix products, see td_gemm_s8_dsp.h; [group][tap][4 lanes] for the depthwise kernel),
so that the device never sign-extends a weight. Packed weights take twice the flash of int8.

Folded bias: the reference accumulates sum((x + input_offset) * w) + bias. The dsp kernels
accumulate the pure int8 dot product sum(x * w) and add

    bias_folded[o] = bias[o] + input_offset * sum(w[o])        (wrapped to int32)

which is the same value modulo 2^32, hence the same int32 whenever the reference does not
overflow (and TFLite is undefined when it does). Padded taps (im2col columns, depthwise taps
outside the image) read the input zero point, whose contribution (zp + input_offset) * w is
0, exactly what the reference's skipping of those taps contributes. A FULLY_CONNECTED with
a non-zero filter zero point would add an input-dependent term, so that case stays on the
reference kernel.

Invariants: every variant here has ``impl="dsp"``, requires the board feature ``"dsp"``,
outranks the reference (``priority`` > 0) and returns a reason from ``accepts`` for any shape
it does not handle, so that selection falls back to the reference kernel.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from tinydeploy.kernels.access import (
    conv_1x1_back_pairs_order,
    conv_1x1_pairs_order,
    dwconv_lanes_order,
)
from tinydeploy.kernels.conv import CONV2D_S8_REF
from tinydeploy.kernels.depthwise import DWCONV2D_S8_REF
from tinydeploy.kernels.fully_connected import FULLY_CONNECTED_S8_REF
from tinydeploy.kernels.registry import ConstArray, KernelCall, KernelVariant, register
from tinydeploy.model.ir import DepthwiseConv2DOptions, Graph, Operator

ARM_DIR = "kernels/arm"
DSP = frozenset({"dsp"})
SIMD_HEADER = f"{ARM_DIR}/td_simd.h"
DW3X3_TAPS_H = f"{ARM_DIR}/td_dw3x3_taps.h"   # 3x3 depthwise tap pointers (private)
GEMM_HEADER = f"{ARM_DIR}/td_gemm_s8_dsp.h"

# Dot products of int8 values are at most 2^14 in magnitude; the kernels' partial sums stay in
# int32 for depths below 2^17 (see td_gemm_s8_dsp.h).
MAX_DEPTH = 1 << 17


def wrap_int32(values: np.ndarray) -> np.ndarray:
    """int64 values reduced modulo 2^32 into int32 (two's complement)."""
    v = np.asarray(values, dtype=np.int64)
    return ((v + (1 << 31)) % (1 << 32) - (1 << 31)).astype(np.int32)


def fold_bias(filter_rows: np.ndarray, bias: np.ndarray | None, input_offset: int) -> np.ndarray:
    """``bias + input_offset * filter_rows.sum(axis=1)``, exact in int64, wrapped to int32.

    ``filter_rows`` is [out_c, depth] int8; ``bias`` [out_c] int32 or None (zeros).
    """
    rows = np.asarray(filter_rows, dtype=np.int64)
    b = np.zeros(rows.shape[0], np.int64) if bias is None else np.asarray(bias, np.int64)
    return wrap_int32(b + int(input_offset) * rows.sum(axis=1))


def q15_len(depth: int) -> int:
    """Twin of td_q15_len: int16 values per packed row (depth rounded up to 4)."""
    return (depth + 3) & ~3


def pair_bytes(depth: int) -> int:
    """Twin of td_pair_bytes: scratch bytes of a q15 pair buffer (two extended rows)."""
    return 4 * q15_len(depth)


def q15_order(depth: int) -> np.ndarray:
    """The int8 index stored at each int16 position of a q15 row (-1 = zero padding): groups
    of four as 0, 2, 1, 3 (the lanes SXTB16 and SXTB16 ROR #8 produce), then the tail in
    order (see td_gemm_s8_dsp.h)."""
    order = np.full(q15_len(depth), -1, dtype=np.int64)
    full = depth // 4
    for q in range(full):
        order[4 * q:4 * q + 4] = (4 * q, 4 * q + 2, 4 * q + 1, 4 * q + 3)
    tail = np.arange(4 * full, depth)
    order[4 * full:4 * full + tail.size] = tail
    return order


def pack_q15_rows(rows: np.ndarray) -> np.ndarray:
    """[n, depth] int8 -> the bytes (as int8, little-endian int16) of n q15 rows."""
    rows = np.asarray(rows, dtype=np.int8)
    n, depth = rows.shape
    order = q15_order(depth)
    out = np.zeros((n, order.size), dtype="<i2")
    valid = order >= 0
    out[:, valid] = rows[:, order[valid]]
    return out.reshape(-1).view(np.int8)


def with_packed_weights(call: KernelCall, symbol: str, rows: np.ndarray, packed: ConstArray,
                        scratch_bytes: int) -> KernelCall:
    """The reference ``call`` turned into a call of the dsp kernel ``symbol``: the int8
    ``filter`` replaced by ``packed`` (``rows`` = the filter as [out_c, depth] int8), the
    constant ``bias`` (if any) by ``bias_folded``, which the ``bias`` field points at (never
    NULL), the other const arrays kept in order, and a scratch buffer of ``scratch_bytes``."""
    bias = next((c.values for c in call.consts if c.name == "bias"), None)
    folded = fold_bias(rows, bias, int(call.param("input_offset")))
    consts = [packed, ConstArray("bias_folded", "int32_t", folded)]
    consts += [c for c in call.consts if c.name not in ("filter", "bias")]
    rename = {"filter": f"@{packed.name}", "bias": "@bias_folded"}
    params = tuple((k, rename.get(k, v)) for k, v in call.params)
    return replace(call, symbol=symbol, params=params, consts=tuple(consts),
                   args=call.args + ("scratch",), scratch_bytes=scratch_bytes)


def as_dsp_gemm_call(call: KernelCall, symbol: str, depth: int, scratch_bytes: int
                     ) -> KernelCall:
    """The reference ``call`` turned into a call of a dsp matrix-product kernel: ``symbol``;
    the int8 ``filter`` replaced by its q15 rows ``filter_q15``; the constant ``bias`` (if any)
    replaced by ``bias_folded``, which the ``bias`` field points at (never NULL); and a
    scratch buffer of ``scratch_bytes``."""
    filt = call.const("filter").values.astype(np.int8)
    rows = filt.reshape(filt.size // depth, depth)
    return with_packed_weights(call, symbol, rows,
                               ConstArray("filter_q15", "int8_t", pack_q15_rows(rows)),
                               scratch_bytes)


# --- CONV_2D ------------------------------------------------------------------------------

def _conv_common(graph: Graph, op: Operator) -> str | None:
    why = CONV2D_S8_REF.accepts(graph, op)
    if why is not None:
        return why
    inp, filt = graph.tensor(op.inputs[0]), graph.tensor(op.inputs[1])
    if filt.shape[3] != inp.shape[3]:
        return f"grouped convolution ({inp.shape[3] // filt.shape[3]} groups)"
    depth = filt.shape[1] * filt.shape[2] * filt.shape[3]
    if depth >= MAX_DEPTH:
        return f"dot-product depth {depth} exceeds {MAX_DEPTH - 1}"
    return None


def conv_1x1_accepts(graph: Graph, op: Operator) -> str | None:
    why = _conv_common(graph, op)
    if why is not None:
        return why
    filt = graph.tensor(op.inputs[1])
    if filt.shape[1:3] != (1, 1):
        return f"filter is {filt.shape[1]}x{filt.shape[2]}, 1x1 required"
    return None


def _conv_1x1_prepare(graph: Graph, op: Operator) -> KernelCall:
    call = CONV2D_S8_REF.prepare(graph, op)
    assert call.param("pad_h") == 0 and call.param("pad_w") == 0
    depth = int(call.param("in_c"))
    return as_dsp_gemm_call(call, "td_conv2d_1x1_s8_dsp", depth, pair_bytes(depth))


def conv_scratch_bytes(filter_h: int, filter_w: int, in_c: int) -> int:
    """Twin of td_conv2d_s8_dsp_scratch_size: a q15 pair buffer and two im2col columns of
    the depth rounded up to 4 bytes."""
    depth = filter_h * filter_w * in_c
    return pair_bytes(depth) + 2 * ((depth + 3) & ~3)


def _conv_prepare(graph: Graph, op: Operator) -> KernelCall:
    call = CONV2D_S8_REF.prepare(graph, op)
    fh, fw, c = (int(call.param(k)) for k in ("filter_h", "filter_w", "in_c"))
    return as_dsp_gemm_call(call, "td_conv2d_s8_dsp", fh * fw * c,
                            conv_scratch_bytes(fh, fw, c))


def _conv_1x1_back_prepare(graph: Graph, op: Operator) -> KernelCall:
    return replace(_conv_1x1_prepare(graph, op), symbol="td_conv2d_1x1_back_s8_dsp")


CONV2D_1X1_S8_DSP = register(KernelVariant(
    op="CONV_2D", impl="dsp", symbol="td_conv2d_1x1_s8_dsp",
    sources=(f"{ARM_DIR}/td_conv2d_1x1_s8_dsp.c", GEMM_HEADER, SIMD_HEADER), requires=DSP,
    accepts=conv_1x1_accepts, prepare=_conv_1x1_prepare, priority=20,
    access=conv_1x1_pairs_order, twins=("td_conv2d_1x1_back_s8_dsp",)))

# The same product back to front: never chosen by priority (it only changes the order), put
# in the forward kernel's place by the planner when its output should trail its input.
CONV2D_1X1_BACK_S8_DSP = register(KernelVariant(
    op="CONV_2D", impl="dsp", symbol="td_conv2d_1x1_back_s8_dsp",
    sources=(f"{ARM_DIR}/td_conv2d_1x1_back_s8_dsp.c", GEMM_HEADER, SIMD_HEADER),
    requires=DSP, accepts=conv_1x1_accepts, prepare=_conv_1x1_back_prepare, priority=19,
    access=conv_1x1_back_pairs_order, twins=("td_conv2d_1x1_s8_dsp",)))

CONV2D_S8_DSP = register(KernelVariant(
    op="CONV_2D", impl="dsp", symbol="td_conv2d_s8_dsp",
    sources=(f"{ARM_DIR}/td_conv2d_s8_dsp.c", GEMM_HEADER, SIMD_HEADER), requires=DSP,
    accepts=_conv_common, prepare=_conv_prepare, priority=10))


# --- DEPTHWISE_CONV_2D --------------------------------------------------------------------

def dw3x3_accepts(graph: Graph, op: Operator) -> str | None:
    why = DWCONV2D_S8_REF.accepts(graph, op)
    if why is not None:
        return why
    filt = graph.tensor(op.inputs[1])
    opts = op.options
    assert isinstance(opts, DepthwiseConv2DOptions)   # checked by the reference's accepts
    if filt.shape[1:3] != (3, 3):
        return f"filter is {filt.shape[1]}x{filt.shape[2]}, 3x3 required"
    if opts.depth_multiplier != 1:
        return f"depth multiplier {opts.depth_multiplier}, 1 required"
    return None


def pack_dw_filter(taps: np.ndarray) -> np.ndarray:
    """[9, C] int8 depthwise taps -> the bytes (as int8) of td_dwconv2d_3x3_s8_dsp's filter:
    int16 [ceil(C/4)][9][4], lanes of group g = channels 4g, 4g+2, 4g+1, 4g+3 (0 if absent)."""
    taps = np.asarray(taps, dtype=np.int8)
    ntaps, c = taps.shape
    groups = (c + 3) // 4
    padded = np.zeros((ntaps, 4 * groups), dtype=np.int16)
    padded[:, :c] = taps
    lanes = padded.reshape(ntaps, groups, 4)[:, :, [0, 2, 1, 3]]
    return np.ascontiguousarray(lanes.transpose(1, 0, 2)).astype("<i2").reshape(-1).view(
        np.int8)


def _dw_prepare(graph: Graph, op: Operator) -> KernelCall:
    call = DWCONV2D_S8_REF.prepare(graph, op)
    c = int(call.param("in_c"))
    taps = call.const("filter").values.astype(np.int8).reshape(9, c)
    # the folded bias wants [out_c, depth] rows: channel c's row is its 9 taps
    return with_packed_weights(call, "td_dwconv2d_3x3_s8_dsp", taps.T,
                               ConstArray("filter_packed", "int8_t", pack_dw_filter(taps)),
                               dw_scratch_bytes(c))


def dw_scratch_bytes(channels: int) -> int:
    """Twin of td_dwconv2d_3x3_s8_dsp_scratch_size: one row of the input zero point (the
    channels rounded up to 4), read by the taps that fall outside the image."""
    return (channels + 3) & ~3


DWCONV2D_3X3_S8_DSP = register(KernelVariant(
    op="DEPTHWISE_CONV_2D", impl="dsp", symbol="td_dwconv2d_3x3_s8_dsp",
    sources=(f"{ARM_DIR}/td_dwconv2d_3x3_s8_dsp.c", SIMD_HEADER, DW3X3_TAPS_H), requires=DSP,
    accepts=dw3x3_accepts, prepare=_dw_prepare, priority=20,
    access=dwconv_lanes_order(4)))


# --- FULLY_CONNECTED ----------------------------------------------------------------------

def _fc_accepts(graph: Graph, op: Operator) -> str | None:
    why = FULLY_CONNECTED_S8_REF.accepts(graph, op)
    if why is not None:
        return why
    filt = graph.tensor(op.inputs[1])
    assert filt.quant is not None
    if any(z != 0 for z in filt.quant.zero_point):
        return f"filter '{filt.name}' has a non-zero zero point (asymmetric weights)"
    if filt.shape[1] >= MAX_DEPTH:
        return f"dot-product depth {filt.shape[1]} exceeds {MAX_DEPTH - 1}"
    return None


def _fc_prepare(graph: Graph, op: Operator) -> KernelCall:
    call = FULLY_CONNECTED_S8_REF.prepare(graph, op)
    assert call.param("filter_offset") == 0
    depth = int(call.param("accum_depth"))
    return as_dsp_gemm_call(call, "td_fully_connected_s8_dsp", depth, pair_bytes(depth))


FULLY_CONNECTED_S8_DSP = register(KernelVariant(
    op="FULLY_CONNECTED", impl="dsp", symbol="td_fully_connected_s8_dsp",
    sources=(f"{ARM_DIR}/td_fully_connected_s8_dsp.c", GEMM_HEADER, SIMD_HEADER),
    requires=DSP, accepts=_fc_accepts, prepare=_fc_prepare, priority=20))
