"""Cortex-M DSP-extension (SIMD) variants of CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED.

Each variant reuses the reference op's checks and `prepare` (all of TFLite's Prepare-time
math lives there, once) and extends the resulting `KernelCall`: another symbol and sources,
the same parameter struct, the reference's int8 filter (in the reference layout, or the same
bytes regrouped as the kernel reads them), the model's bias, a scratch buffer bounded by a
small multiple of the kernel size, and ``requant_form`` (the 3x3 depthwise kernel also reads
its shifts as ~shift under the rounding form).

Int8 weights stay int8 in flash (no more bytes than the model's): the kernels widen four
weights per LDR in registers (SXTB16) and the inputs with the input offset added (SXTAB16),
see td_gemm_s8_dsp.h. Padded taps (im2col columns, depthwise taps outside the image) read the
input zero point, which widens to 0: what the reference's skipping of those taps contributes.

``requant_form`` = 1 selects the branch-free rounding form of the requantization
(td_requant.h), which the host proves exact for the layer: every channel shifts right, and
the accumulator bound from the weights, the bias and the input range
(`fixedpoint.accumulator_bound`) keeps every intermediate inside int32
(`fixedpoint.rounding_form_holds`). Otherwise the kernel uses the general td_requantize.

Each variant declares its cost (`VariantCost`: instructions from a per-MAC and per-output
model fitted to QEMU icount runs, weight flash bytes, scratch bytes) for selection against a
board's budget.

Invariants: every variant here has ``impl="dsp"``, requires the board feature ``"dsp"``,
outranks the reference (``priority`` > 0), stores exactly the reference's weight bytes
(except ``td_dwconv2d_3x3_wide_s8_dsp``, whose widened weights are a speed-for-flash trade
that only ``--optimize speed`` makes: its constants exceed the reference's, and its priority
is below the unrolled kernel's, so priority selection never takes it) and returns a reason
from ``accepts`` for any shape it does not handle, so that selection falls back to the
reference kernel.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from tinydeploy.fixedpoint import accumulator_bound, rounding_form_holds
from tinydeploy.kernels.access import (
    DW3L_LINE,
    AccessOrder,
    conv_c1_order,
    conv_rows_back_order,
    conv_rows_order,
    dw3l_lines,
    dwconv_lanes_order,
    dwconv_lines_order,
    dwconv_ref_order,
)
from tinydeploy.kernels.conv import CONV2D_S8_REF
from tinydeploy.kernels.depthwise import DWCONV2D_S8_REF
from tinydeploy.kernels.fully_connected import FULLY_CONNECTED_S8_REF
from tinydeploy.kernels.pooling import AVGPOOL2D_S8_REF
from tinydeploy.kernels.registry import ConstArray, KernelCall, KernelVariant, register
from tinydeploy.model.ir import Conv2DOptions, DepthwiseConv2DOptions, Graph, Operator

ARM_DIR = "kernels/arm"
DSP = frozenset({"dsp"})
SIMD_HEADER = f"{ARM_DIR}/td_simd.h"
DW3X3_TAPS_H = f"{ARM_DIR}/td_dw3x3_taps.h"   # 3x3 depthwise tap pointers (the mve kernel)
DW_HEADER = f"{ARM_DIR}/td_dwconv2d_dsp.h"     # what the dsp depthwise kernels share
DOT4_HEADER = f"{ARM_DIR}/td_dot4_s8_dsp.h"    # four dot products (FC, one-channel dw)
GEMM_HEADER = f"{ARM_DIR}/td_gemm_s8_dsp.h"
# the header and its one out-of-line function (td_gemm_out_general, one copy per build)
GEMM_FILES = (GEMM_HEADER, f"{ARM_DIR}/td_gemm_s8_dsp.c")

# |x + input_offset| <= 255 and |w| <= 128: a pair of products stays inside int32 and the
# kernels' sums for depths below 2^16 (the accumulator bound decides the requantization form).
MAX_DEPTH = 1 << 16


def rounding_form(rows: np.ndarray, call: KernelCall) -> int:
    """1 when the rounding form of the requantization is exact for every channel of ``call``
    (``rows`` = the filter as [out_c, depth] int8), else 0 (the general td_requantize)."""
    bias = next((c.values for c in call.consts if c.name == "bias"), None)
    bound = accumulator_bound(rows, bias, int(call.param("input_offset")))
    mult = call.const("mult").values
    shift = call.const("shift").values
    zp = int(call.param("output_offset"))
    ok = all(rounding_form_holds(int(a), int(m), int(s), zp)
             for a, m, s in zip(bound, mult, shift, strict=True))
    return int(ok)


# Instructions per multiply-accumulate, requantization and loop overhead included, measured
# on QEMU mps2-an386 (-icount, -O2) on the DS-CNN, micro_speech and AD01-shaped layers.
INSTRUCTIONS_PER_MAC = {
    "td_conv2d_s8_dsp": 2.1, "td_dwconv2d_3x3_s8_dsp": 4.3,
    "td_dwconv2d_s8_dsp": 7.0, "td_fully_connected_s8_dsp": 1.85,
    "td_dwconv2d_c1_s8_dsp": 2.9, "td_conv2d_c1_s8_dsp": 1.8,
}


def estimated_instructions(symbol: str, rows: np.ndarray, call: KernelCall) -> int:
    """The cost model: MACs (outputs x depth of ``rows``) x the symbol's measured rate."""
    outputs = 1
    for k in ("batches", "out_h", "out_w"):
        try:
            outputs *= int(call.param(k))
        except KeyError:
            pass
    macs = outputs * int(rows.size)
    return int(round(macs * INSTRUCTIONS_PER_MAC.get(symbol, 0.0)))


def as_dsp_call(call: KernelCall, symbol: str, rows: np.ndarray, scratch_bytes: int,
                filter_values: np.ndarray | None = None) -> KernelCall:
    """The reference ``call`` turned into a call of the dsp kernel ``symbol``: the same
    constants (``filter_values`` replaces the filter's bytes when the kernel reads them
    regrouped), ``requant_form`` proven from ``rows`` (the filter as [out_c, depth] int8) and
    a scratch buffer of ``scratch_bytes`` (none, and no scratch argument, when 0, except for
    the kernels of `SCRATCH_ARG_ALWAYS`)."""
    consts = call.consts
    if filter_values is not None:
        consts = tuple(ConstArray("filter", "int8_t", filter_values) if c.name == "filter"
                       else c for c in consts)
    params = call.params + (("requant_form", rounding_form(rows, call)),)
    args = call.args + (("scratch",) if scratch_bytes or symbol in SCRATCH_ARG_ALWAYS else ())
    return replace(call, symbol=symbol, params=params, consts=consts, args=args,
                   scratch_bytes=scratch_bytes,
                   instructions=estimated_instructions(symbol, rows, call))


def as_dsp_gemm_call(call: KernelCall, symbol: str, depth: int, scratch_bytes: int
                     ) -> KernelCall:
    """`as_dsp_call` for the matrix-product kernels, whose filter is [out_c, depth] as is."""
    filt = call.const("filter").values.astype(np.int8)
    return as_dsp_call(call, symbol, filt.reshape(filt.size // depth, depth), scratch_bytes)


def wrap_int32(values: np.ndarray) -> np.ndarray:
    """int64 values reduced modulo 2^32 into int32 (two's complement)."""
    v = np.asarray(values, dtype=np.int64)
    return ((v + (1 << 31)) % (1 << 32) - (1 << 31)).astype(np.int32)


def fold_bias(filter_rows: np.ndarray, bias: np.ndarray | None, input_offset: int) -> np.ndarray:
    """``bias + input_offset * filter_rows.sum(axis=1)``, exact in int64, wrapped to int32:
    the same value modulo 2^32 as the reference's accumulation of ``x + input_offset``, so
    the same int32 wherever the reference does not overflow (``filter_rows`` [out_c, depth]
    int8, ``bias`` [out_c] int32 or None)."""
    rows = np.asarray(filter_rows, dtype=np.int64)
    b = np.zeros(rows.shape[0], np.int64) if bias is None else np.asarray(bias, np.int64)
    return wrap_int32(b + int(input_offset) * rows.sum(axis=1))


# Kernels whose C signature takes a scratch pointer even for calls that need no scratch
# (td_conv2d_s8_dsp keeps small work in its frame): codegen passes a null pointer then.
SCRATCH_ARG_ALWAYS = frozenset({"td_conv2d_s8_dsp"})
GEMM_ROWS = 6          # twin of TD_GEMM_ROWS: input rows (pixels) per filter-row pass
GEMM_ROWS_IM2COL = 4   # twin of TD_IM2COL_ROWS: td_conv2d_s8_dsp's rows (less scratch)


def output_pixels(call: KernelCall) -> int:
    """batches x out_h x out_w of a convolution-like call."""
    return int(call.param("batches")) * int(call.param("out_h")) * int(call.param("out_w"))


def _conv_shape(call: KernelCall) -> tuple[int, int, int, bool]:
    """(filter_h, filter_w, in_c, pointwise) of a CONV_2D call; pointwise: a 1x1 filter
    without padding, whose input pixels are read in place."""
    fh, fw, c = (int(call.param(k)) for k in ("filter_h", "filter_w", "in_c"))
    pointwise = (fh, fw) == (1, 1) and call.param("pad_h") == 0 and call.param("pad_w") == 0
    return fh, fw, c, pointwise


def rows_bytes(depth: int, rows: int = GEMM_ROWS) -> int:
    """Twin of td_rows_bytes: the widened rows buffer of ``rows`` input rows."""
    return rows * 8 * ((depth + 3) // 4)


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
    if filt.shape[3] > PW_STACK_DEPTH:
        return (f"{filt.shape[3]} input channels: the rows buffer in the kernel's stack frame "
                f"holds {PW_STACK_DEPTH} (td_conv2d_s8_dsp takes deeper pointwise layers)")
    return None


# Twin of TD_GEMM_STACK_DEPTH: the pointwise kernels' rows buffer is a fixed 512-byte array in
# their stack frame (no arena scratch), enough for this many input channels.
PW_STACK_DEPTH = 64
GEMM_STACK_BYTES = GEMM_ROWS * 8 * PW_STACK_DEPTH // 4   # twin of TD_GEMM_STACK_BYTES


# td_conv2d_s8_dsp's 1x1 path (pointwise layers deeper than PW_STACK_DEPTH): the C four-row
# product (td_rows_times_filter), instructions per MAC and per output computed (whole groups
# of GEMM_ROWS_IM2COL pixels), fitted on VWW's 3x3x128 -> 256 (450,320) and 3x3x256 -> 256
# (845,840) layers; its 6x6x128 -> 128 ones: 680,520 measured, 675,382 estimated.
POINTWISE_C_COST = (1.0, 17.8)
# ... and its im2col path: per byte of a receptive field and per pixel beyond the product,
# fitted on ResNet's 3x3x16 -> 32 (1,483,480 measured, 1,518,080 estimated) and 3x3x32 -> 32
# (2,756,520; 2,813,440) layers, VWW's first layer (3x3x3 -> 8: 1,880,040) and
# person_detect's first (a one-channel depthwise 3x3 -> 8 taken as this convolution:
# 1,412,774); per pixel refitted on the last two, where the walk dominates
IM2COL_COST = (3.0, 372.0)


# twin of TD_PW_SHORT_ROWS: the rows of a partial group's product under the branch-free
# requantization (td_pw_rows_for)
PW_SHORT_ROWS = 5
# the assembly channel loops per group and output channel (td_pw_channels6 / 5): around the
# depth loop, and per block of four values (rows x 2 SMLAD, a weight word widened, the LDM)
PW_CHANNEL_COST = {GEMM_ROWS: (64, 18), PW_SHORT_ROWS: (55, 15)}


def pw_groups(pixels: int, fast: bool) -> list[tuple[int, int]]:
    """(groups, rows per group's product) of td_pw_product over ``pixels`` output pixels:
    whole groups of GEMM_ROWS, and a partial last group of GEMM_ROWS rows (repeating the
    last), or of PW_SHORT_ROWS rows under the branch-free requantization (``fast``) when the
    call is that group alone: only then does the build link the five-row loop
    (TD_PW_SHORT_GROUPS, tinydeploy/codegen/project.py; a streamed step). A larger call's
    last group in a build that has the loop for another call is costed at six rows: less
    than a sixth of one group too high."""
    whole, rest = divmod(pixels, GEMM_ROWS)
    groups = [(whole, GEMM_ROWS)] if whole else []
    if rest:
        groups.append((1, PW_SHORT_ROWS if fast and not whole else GEMM_ROWS))
    return groups


def pointwise_instructions(call: KernelCall, depth: int | None = None,
                           widen_per_block: float = 6.0) -> int:
    """The cost model of td_pw_product (td_conv2d_1x1_s8_dsp, its back twin, and
    td_conv2d_window_s8_dsp), fitted to QEMU icount runs (mps2-an386, -O2) of the DS-CNN's
    layers (pointwise: 489,600 measured, 489,216 estimated; the first layer: 360,440 and
    357,466; a streamed step's five pixels: 19,840 and 20,016, 14,680 and 14,746). Under the
    branch-free requantization over all of int8 (the assembly channel loops), per group and
    output channel `PW_CHANNEL_COST` (six rows: 64 + 18 per block of four values; a partial
    group's five rows, `pw_groups`: 55 + 15); ~60 + 3 per block more when the loop runs one
    channel per call (a depth that is not a multiple of 4, no bias); per group
    ``widen_per_block`` per block and row widened (6 from a pixel; a receptive field costs
    more) and ~356 around; ~300 per call. Otherwise the C product of six rows with the
    requantization per output through td_gemm_out_general: ~1 per MAC and ~60 per output.
    ``depth``: the dot-product depth (default: in_c, a 1x1 filter)."""
    pixels = output_pixels(call)
    oc = int(call.param("out_c"))
    if depth is None:
        depth = int(call.param("in_c"))
    blocks = (depth + 3) // 4
    bias = any(c.name == "bias" for c in call.consts)
    fast = (bool(call.param("requant_form")) and int(call.param("act_min")) == -128
            and int(call.param("act_max")) == 127)
    if not fast:
        return pixels * oc * (depth + 60) + 300
    total = 300.0
    for groups, rows in pw_groups(pixels, fast):
        around, per_block = PW_CHANNEL_COST[rows]
        per_channel = around + per_block * blocks
        if depth % 4 != 0 or not bias:
            per_channel += 60 + 3 * blocks
        widen = rows * widen_per_block * blocks
        total += groups * (oc * per_channel + widen + 356)
    return int(round(total))


def _conv_1x1_prepare(graph: Graph, op: Operator) -> KernelCall:
    call = CONV2D_S8_REF.prepare(graph, op)
    assert call.param("pad_h") == 0 and call.param("pad_w") == 0
    depth = int(call.param("in_c"))
    dsp = as_dsp_gemm_call(call, "td_conv2d_1x1_s8_dsp", depth, 0)
    return replace(dsp, instructions=pointwise_instructions(dsp))


def conv_scratch_bytes(filter_h: int, filter_w: int, in_c: int, pointwise: bool = False
                       ) -> int:
    """Twin of td_conv2d_s8_dsp_scratch_size: the rows buffer and GEMM_ROWS_IM2COL im2col
    columns of the depth rounded up to 4 bytes (no columns for a ``pointwise`` call: a 1x1
    filter without padding)."""
    depth = filter_h * filter_w * in_c
    cols = 0 if pointwise else GEMM_ROWS_IM2COL * ((depth + 3) & ~3)
    need = rows_bytes(depth, GEMM_ROWS_IM2COL) + cols
    return 0 if need <= GEMM_STACK_BYTES else need


def _conv_prepare(graph: Graph, op: Operator) -> KernelCall:
    call = CONV2D_S8_REF.prepare(graph, op)
    fh, fw, c, pointwise = _conv_shape(call)
    dsp = as_dsp_gemm_call(call, "td_conv2d_s8_dsp", fh * fw * c,
                           conv_scratch_bytes(fh, fw, c, pointwise))
    return replace(dsp, instructions=conv_dsp_instructions(dsp))


def conv_dsp_instructions(call: KernelCall) -> int:
    """td_conv2d_s8_dsp's cost model (`POINTWISE_C_COST`, `IM2COL_COST`) for ``call``."""
    fh, fw, c, pointwise = _conv_shape(call)
    dsp = call
    pixels = output_pixels(call)
    computed = -(-pixels // GEMM_ROWS_IM2COL) * GEMM_ROWS_IM2COL
    per_mac, per_out = POINTWISE_C_COST
    cost = computed * (int(dsp.const("filter").values.size) * per_mac
                       + int(call.param("out_c")) * per_out)
    if not pointwise:   # the im2col copy and its widening, and the walk per pixel
        per_byte, per_pixel = IM2COL_COST
        cost += pixels * (fh * fw * c * per_byte + per_pixel)
    if not int(call.param("requant_form")):
        cost += pixels * int(call.param("out_c")) * GENERAL_REQUANT_PER_OUTPUT
    return int(round(cost))


# td_gemm_out_general's extra cost per output where the rounding form is not proven
# (requant_form 0), fitted on MLPerf VWW's pointwise layers (6x6x128 -> 128: 892,360 measured
# against 672,096 without it; 12x12x64 -> 64: 1,204,040; td_conv2d_frame_s8_dsp's 3x3x128 ->
# 256: 491,120)
GENERAL_REQUANT_PER_OUTPUT = 48.0


def _conv_1x1_back_prepare(graph: Graph, op: Operator) -> KernelCall:
    return replace(_conv_1x1_prepare(graph, op), symbol="td_conv2d_1x1_back_s8_dsp")


CONV2D_1X1_S8_DSP = register(KernelVariant(
    op="CONV_2D", impl="dsp", symbol="td_conv2d_1x1_s8_dsp",
    sources=(f"{ARM_DIR}/td_conv2d_1x1_s8_dsp.c", *GEMM_FILES, SIMD_HEADER), requires=DSP,
    accepts=conv_1x1_accepts, prepare=_conv_1x1_prepare, priority=20,
    access=conv_rows_order(GEMM_ROWS), twins=("td_conv2d_1x1_back_s8_dsp",),
    code_bytes=4990))   # measured 4,534 B with td_pw_group and td_pw_product (-O2, M4), + 10 %

# The same product back to front: never chosen by priority (it only changes the order), put
# in the forward kernel's place by the planner when its output should trail its input.
CONV2D_1X1_BACK_S8_DSP = register(KernelVariant(
    op="CONV_2D", impl="dsp", symbol="td_conv2d_1x1_back_s8_dsp",
    sources=(f"{ARM_DIR}/td_conv2d_1x1_back_s8_dsp.c", *GEMM_FILES, SIMD_HEADER),
    requires=DSP, accepts=conv_1x1_accepts, prepare=_conv_1x1_back_prepare, priority=19,
    access=conv_rows_back_order(GEMM_ROWS), twins=("td_conv2d_1x1_s8_dsp",),
    code_bytes=4990))

CONV2D_S8_DSP = register(KernelVariant(
    op="CONV_2D", impl="dsp", symbol="td_conv2d_s8_dsp",
    sources=(f"{ARM_DIR}/td_conv2d_s8_dsp.c", *GEMM_FILES, SIMD_HEADER), requires=DSP,
    accepts=_conv_common, prepare=_conv_prepare, priority=10,
    access=conv_rows_order(GEMM_ROWS_IM2COL),
    code_bytes=2650))   # measured 2,208 B + td_gemm_out_general 192 B (-O2, M4), + 10 %


def conv_frame_rows(filter_h: int, filter_w: int, in_c: int, pointwise: bool) -> int:
    """Twin of td_conv_frame_rows: the most rows below GEMM_ROWS_IM2COL whose work (rows
    buffer and, unless ``pointwise``, im2col columns) fits the frame buffer; 0 if not one."""
    depth = filter_h * filter_w * in_c
    for rows in range(GEMM_ROWS_IM2COL - 1, 0, -1):
        cols = 0 if pointwise else rows * ((depth + 3) & ~3)
        if rows_bytes(depth, rows) + cols <= GEMM_STACK_BYTES:
            return rows
    return 0


def conv_frame_accepts(graph: Graph, op: Operator) -> str | None:
    """Layers whose four rows of work need scratch, and whose one row fits the frame."""
    why = _conv_common(graph, op)
    if why is not None:
        return why
    fh, fw, c, pointwise = _conv_shape(CONV2D_S8_REF.prepare(graph, op))
    if conv_scratch_bytes(fh, fw, c, pointwise) == 0:
        return "the work of four rows fits the frame (td_conv2d_s8_dsp takes no scratch)"
    if conv_frame_rows(fh, fw, c, pointwise) == 0:
        return (f"one row of depth {fh * fw * c} needs more than the {GEMM_STACK_BYTES} B "
                f"frame buffer")
    return None


# td_conv2d_frame_s8_dsp: instructions per computed multiply-accumulate with r rows (one LDR,
# two SXTB16 and r x (LDRD + 2 SMLAD) per block of four values, two for the loop), per
# computed output, and per im2col byte (copied, then widened), fitted on MLPerf's streaming
# wake-word 24x128 -> 128 layer (three rows: 518,120 measured, 520,212 estimated) and ResNet's
# 32x32x16 3x3 -> 16 layers (one row: 5,921,800)
FRAME_PER_OUTPUT, FRAME_PER_IM2COL_BYTE = 20.0, 5.9
# ... and per call beyond `choose.CALL_INSTRUCTIONS` (the rows' set-up): person_detect's
# 256 -> 2 classifier, one pixel, measured 1,732 for 1,064 + 250 without it
FRAME_PER_CALL = 420


def few_rows_cost(call: KernelCall, depth: int, rows: int, per_output: float
                  ) -> tuple[float, int]:
    """The C product with ``rows`` rows over whole groups of pixels: (5 + 3r) / 4r
    instructions per computed MAC (`td_dot_rows`) and ``per_output`` per computed output; and
    the pixels computed (the last group's repeats included)."""
    computed = -(-output_pixels(call) // rows) * rows
    per_mac = (5 + 3 * rows) / (4 * rows)
    return computed * int(call.param("out_c")) * (depth * per_mac + per_output), computed


def _conv_frame_prepare(graph: Graph, op: Operator) -> KernelCall:
    call = CONV2D_S8_REF.prepare(graph, op)
    fh, fw, c, pointwise = _conv_shape(call)
    depth = fh * fw * c
    dsp = as_dsp_gemm_call(call, "td_conv2d_frame_s8_dsp", depth, 0)
    cost, computed = few_rows_cost(call, depth, conv_frame_rows(fh, fw, c, pointwise),
                                   FRAME_PER_OUTPUT)
    if not pointwise:
        cost += output_pixels(call) * depth * FRAME_PER_IM2COL_BYTE
    if not int(dsp.param("requant_form")):
        cost += output_pixels(call) * int(call.param("out_c")) * GENERAL_REQUANT_PER_OUTPUT
    return replace(dsp, instructions=int(round(cost + FRAME_PER_CALL)))


def conv_frame_order(call: KernelCall) -> AccessOrder:
    """td_conv2d_frame_s8_dsp: `conv_rows_order` with its row count (`conv_frame_rows`)."""
    return conv_rows_order(max(1, conv_frame_rows(*_conv_shape(call))))(call)


# Deep layers without scratch: fewer rows, all in the frame buffer (below td_conv2d_s8_dsp,
# which the selector prefers where the arena has room for its scratch).
CONV2D_FRAME_S8_DSP = register(KernelVariant(
    op="CONV_2D", impl="dsp", symbol="td_conv2d_frame_s8_dsp",
    sources=(f"{ARM_DIR}/td_conv2d_s8_dsp.c", *GEMM_FILES, SIMD_HEADER), requires=DSP,
    accepts=conv_frame_accepts, prepare=_conv_frame_prepare, priority=9,
    access=conv_frame_order,
    code_bytes=4060))   # measured 3,496 B + td_gemm_out_general 192 B (-O2, M4), + 10 %


def _window_depth(graph: Graph, op: Operator) -> tuple[str | None, int]:
    """(why not, depth): the checks both window kernels share (kernel rows of whole blocks of
    four values) and the dot-product depth."""
    why = _conv_common(graph, op)
    if why is not None:
        return why, 0
    filt = graph.tensor(op.inputs[1])
    fh, fw, c = filt.shape[1], filt.shape[2], filt.shape[3]
    if (fw * c) % 4 != 0:
        return f"a kernel row is {fw}x{c} = {fw * c} values, a multiple of 4 required", 0
    return None, fh * fw * c


def conv_window_accepts(graph: Graph, op: Operator) -> str | None:
    """Kernel rows of whole blocks of four values, a depth the frame's rows buffer holds."""
    why, depth = _window_depth(graph, op)
    if why is not None:
        return why
    if depth > PW_STACK_DEPTH:
        return (f"dot-product depth {depth}: the rows buffer in the kernel's stack frame "
                f"holds {PW_STACK_DEPTH}")
    return None


# td_conv2d_window_s8_dsp widening a receptive field into the rows buffer: instructions per
# block of four values and row, fitted on the DS-CNN's first layer (10x4 on 49x10x1)
WIDEN_WINDOW_PER_BLOCK = 19.4


def _conv_window_prepare(graph: Graph, op: Operator) -> KernelCall:
    call = CONV2D_S8_REF.prepare(graph, op)
    depth = int(call.param("filter_h")) * int(call.param("filter_w")) * int(call.param("in_c"))
    dsp = as_dsp_gemm_call(call, "td_conv2d_window_s8_dsp", depth, 0)
    return replace(dsp, instructions=pointwise_instructions(dsp, depth,
                                                            WIDEN_WINDOW_PER_BLOCK))


# Receptive fields widened straight from the input into the pointwise rows buffer and the
# pointwise product (a keyword-spotting first layer; small layers of 4k channels): no scratch.
CONV2D_WINDOW_S8_DSP = register(KernelVariant(
    op="CONV_2D", impl="dsp", symbol="td_conv2d_window_s8_dsp",
    sources=(f"{ARM_DIR}/td_conv2d_window_s8_dsp.c", *GEMM_FILES, SIMD_HEADER),
    requires=DSP, accepts=conv_window_accepts, prepare=_conv_window_prepare, priority=16,
    access=conv_rows_order(GEMM_ROWS),
    code_bytes=5580))   # measured 5,072 B with td_pw_product (-O2, M4), + 10 %


# the deepest window td_conv2d_window_frame_s8_dsp takes: one row of it fills the frame buffer
WINDOW_FRAME_DEPTH = GEMM_STACK_BYTES // 8 * 4


def window_frame_rows(depth: int) -> int:
    """Twin of td_conv2d_window_frame_s8_dsp's rows: the most (at most GEMM_ROWS_IM2COL)
    whose rows buffer of ``depth`` values fits the frame buffer; 0 if not one."""
    return min(GEMM_ROWS_IM2COL, GEMM_STACK_BYTES // rows_bytes(depth, 1))


def conv_window_frame_accepts(graph: Graph, op: Operator) -> str | None:
    """Kernel rows of whole blocks of four values, deeper than the window kernel's 64 and at
    most WINDOW_FRAME_DEPTH."""
    why, depth = _window_depth(graph, op)
    if why is not None:
        return why
    if depth <= PW_STACK_DEPTH:
        return f"depth {depth}: the window kernel takes it"
    if depth > WINDOW_FRAME_DEPTH:
        return (f"dot-product depth {depth}: one row of it needs more than the "
                f"{GEMM_STACK_BYTES} B frame buffer")
    return None


# td_conv2d_window_frame_s8_dsp: instructions per computed multiply-accumulate with r rows, per
# computed output and per block of four values and row widened, fitted on MLPerf's ResNet
# (32x32x16, 3x3 -> 16: two rows, 4,265,400 measured, 4,265,984 estimated)
WINDOW_FRAME_PER_OUTPUT, WINDOW_FRAME_PER_BLOCK = 20.0, 19.0


def _conv_window_frame_prepare(graph: Graph, op: Operator) -> KernelCall:
    call = CONV2D_S8_REF.prepare(graph, op)
    depth = int(call.param("filter_h")) * int(call.param("filter_w")) * int(call.param("in_c"))
    dsp = as_dsp_gemm_call(call, "td_conv2d_window_frame_s8_dsp", depth, 0)
    cost, computed = few_rows_cost(call, depth, window_frame_rows(depth),
                                   WINDOW_FRAME_PER_OUTPUT)
    cost += computed * (depth // 4) * WINDOW_FRAME_PER_BLOCK
    if not int(dsp.param("requant_form")):   # VWW's 6x6x128 -> 128: 997,960 measured
        cost += output_pixels(call) * int(call.param("out_c")) * GENERAL_REQUANT_PER_OUTPUT
    return replace(dsp, instructions=int(round(cost)))


def conv_window_frame_order(call: KernelCall) -> AccessOrder:
    """td_conv2d_window_frame_s8_dsp: `conv_rows_order` with its row count."""
    depth = int(call.param("filter_h")) * int(call.param("filter_w")) * int(call.param("in_c"))
    return conv_rows_order(max(1, window_frame_rows(depth)))(call)


# Deeper windows of whole blocks (a 3x3 convolution of 16 or 32 channels): widened straight
# from the input into the frame buffer, fewer rows, the C product; no scratch, no im2col.
CONV2D_WINDOW_FRAME_S8_DSP = register(KernelVariant(
    op="CONV_2D", impl="dsp", symbol="td_conv2d_window_frame_s8_dsp",
    sources=(f"{ARM_DIR}/td_conv2d_window_s8_dsp.c", *GEMM_FILES, SIMD_HEADER),
    requires=DSP, accepts=conv_window_frame_accepts, prepare=_conv_window_frame_prepare,
    priority=14, access=conv_window_frame_order,
    code_bytes=5750))   # measured 5,228 B with td_widen_window (-O2, M4), + 10 %


C1_LANES = 2   # output channels per group of td_conv2d_c1_s8_dsp


def interleave_rows(rows: np.ndarray, lanes: int) -> np.ndarray:
    """[out_c, depth] int8 (depth % 4 == 0) -> the same bytes with every whole group of
    ``lanes`` rows interleaved per block of four values ([group][depth / 4][lanes][4]); the
    last ``out_c % lanes`` rows as they are."""
    rows = np.asarray(rows, dtype=np.int8)
    oc, depth = rows.shape
    assert depth % 4 == 0, depth
    g = oc // lanes
    head = rows[:lanes * g].reshape(g, lanes, depth // 4, 4).transpose(0, 2, 1, 3)
    return np.concatenate([head.reshape(-1), rows[lanes * g:].reshape(-1)]).astype(np.int8)


def conv_c1_accepts(graph: Graph, op: Operator) -> str | None:
    """One input channel, filters four taps wide, no horizontal dilation."""
    why = _conv_common(graph, op)
    if why is not None:
        return why
    inp, filt = graph.tensor(op.inputs[0]), graph.tensor(op.inputs[1])
    opts = op.options
    assert isinstance(opts, Conv2DOptions)   # checked by the reference's accepts
    if inp.shape[3] != 1:
        return f"{inp.shape[3]} input channels, 1 required"
    if filt.shape[2] != 4:
        return f"filter is {filt.shape[2]} taps wide, 4 required"
    if opts.dilation_w != 1:
        return f"horizontal dilation {opts.dilation_w}, 1 required"
    return None


def _conv_c1_prepare(graph: Graph, op: Operator) -> KernelCall:
    call = CONV2D_S8_REF.prepare(graph, op)
    depth = int(call.param("filter_h")) * 4
    rows = call.const("filter").values.astype(np.int8).reshape(-1, depth)
    return as_dsp_call(call, "td_conv2d_c1_s8_dsp", rows, 0, interleave_rows(rows, C1_LANES))


# One input channel, four taps wide (a keyword-spotting first layer): no im2col, no scratch.
CONV2D_C1_S8_DSP = register(KernelVariant(
    op="CONV_2D", impl="dsp", symbol="td_conv2d_c1_s8_dsp",
    sources=(f"{ARM_DIR}/td_conv2d_c1_s8_dsp.c", *GEMM_FILES, SIMD_HEADER),
    requires=DSP, accepts=conv_c1_accepts, prepare=_conv_c1_prepare, priority=15,
    access=conv_c1_order(C1_LANES),
    code_bytes=2200))


# --- DEPTHWISE_CONV_2D --------------------------------------------------------------------

def dw3x3_accepts(graph: Graph, op: Operator) -> str | None:
    """The 3x3 depthwise shapes both the dsp and the mve kernels handle (any channel count)."""
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


def _dw3x3_dsp_accepts(graph: Graph, op: Operator) -> str | None:
    why = dw3x3_accepts(graph, op)
    if why is not None:
        return why
    c = graph.tensor(op.inputs[1]).shape[3]
    if c % 4:
        return f"{c} channels, a multiple of 4 required (regrouping would pad the weights)"
    return None


def group_dw_taps(taps: np.ndarray) -> np.ndarray:
    """[9, C] int8 depthwise taps (C % 4 == 0) -> the layout td_dwconv2d_3x3_s8_dsp.c reads
    (the same bytes): per group g of channels 4g .. 4g+3, for the tap pairs (t, u) = (0, 1),
    (2, 3), (4, 5), (6, 7) the words [c0 t, c1 t, c0 u, c1 u] [c2 t, c3 t, c2 u, c3 u], then
    tap 8 as [c0, c1, c2, c3]."""
    taps = np.asarray(taps, dtype=np.int8)
    ntaps, c = taps.shape
    assert ntaps == 9 and c % 4 == 0, (ntaps, c)
    g = taps.reshape(9, c // 4, 4).transpose(1, 0, 2)          # [groups][9 taps][4 ch]
    pairs = g[:, :8].reshape(-1, 4, 2, 2, 2)                   # [g][pair][tap][half][ch]
    pairs = pairs.transpose(0, 1, 3, 2, 4).reshape(-1, 32)      # [g][pair][half][tap][ch]
    return np.ascontiguousarray(np.concatenate([pairs, g[:, 8]], axis=1)).reshape(-1)


def _dw_prepare(graph: Graph, op: Operator) -> KernelCall:
    call = DWCONV2D_S8_REF.prepare(graph, op)
    c = int(call.param("in_c"))
    taps = call.const("filter").values.astype(np.int8).reshape(9, c)
    # the accumulator bound wants [out_c, depth] rows: channel c's row is its 9 taps
    dsp = as_dsp_call(call, "td_dwconv2d_3x3_s8_dsp", taps.T, 0, group_dw_taps(taps))
    if not int(dsp.param("requant_form")):
        return dsp
    # the rounding form's kernel reads e - 1 = ~shift (e = -shift >= 1): one instruction less
    # per output, as many bytes
    shift = dsp.const("shift").values.astype(np.int8)
    consts = tuple(ConstArray("shift", "int8_t", np.invert(shift)) if c.name == "shift" else c
                   for c in dsp.consts)
    return replace(dsp, consts=consts)


DWCONV2D_3X3_S8_DSP = register(KernelVariant(
    op="DEPTHWISE_CONV_2D", impl="dsp", symbol="td_dwconv2d_3x3_s8_dsp",
    sources=(f"{ARM_DIR}/td_dwconv2d_3x3_s8_dsp.c", SIMD_HEADER, DW_HEADER),
    requires=DSP,
    accepts=_dw3x3_dsp_accepts, prepare=_dw_prepare, priority=20,
    access=dwconv_lanes_order(4),
    code_bytes=3100))


# The lines kernel's cost per channel and batch, fitted on QEMU mps2-an386 (-icount, -O2) to
# the DS-CNN's and VWW's depthwise layers (within 1.5 %; above the measure on maps of 6x6 and
# less): a fixed part, one per output line (its widening and set-up) and one per output
# (stride 1 along the line: fours; stride 2: one at a time). The unrolled kernel (channels
# in fours): per output and per pixel.
DW3L_COST = (224.6, 60.4, 16.2, 29.8)
DW3X3_COST = (38.5, 100.0)


# ... and per output when the activation clamps inside int8 (a fused ReLU6: the clamped
# requantization instead of the saturating store), fitted on the residual test model's
# 12x12x8 layer (act_max 9: 42,120 measured, 26,508 without it)
DW3L_CLAMP_PER_OUTPUT = 13.6


def dw3l_instructions(call: KernelCall, clamp: bool = True) -> int:
    """The lines kernel's estimated instructions for ``call`` (`DW3L_COST`, and
    `DW3L_CLAMP_PER_OUTPUT` unless ``clamp`` is False: the comparison with the unrolled
    kernel, whose model has no clamp term, leaves it out)."""
    fixed, per_line, per_out1, per_out2 = DW3L_COST
    rows, out_a, _ = dw3l_lines(call)
    out_x = int(call.param("out_h")) if rows else int(call.param("out_w"))
    s_a = int(call.param("stride_w")) if rows else int(call.param("stride_h"))
    per_channel = fixed + per_line * out_x + (per_out1 if s_a == 1 else per_out2) * out_a * out_x
    if clamp and (int(call.param("act_min")), int(call.param("act_max"))) != (-128, 127):
        per_channel += DW3L_CLAMP_PER_OUTPUT * out_a * out_x
    return int(round(per_channel * int(call.param("in_c")) * int(call.param("batches"))))


def dw3x3_instructions(call: KernelCall) -> int:
    """The unrolled kernel's (td_dwconv2d_3x3_s8_dsp) estimated instructions (`DW3X3_COST`)."""
    per_out, per_pixel = DW3X3_COST
    pixels = output_pixels(call)
    return int(round(pixels * (per_out * int(call.param("in_c")) + per_pixel)))


def _dw3x3_lines_accepts(graph: Graph, op: Operator) -> str | None:
    why = dw3x3_accepts(graph, op)
    if why is not None:
        return why
    opts = op.options
    assert isinstance(opts, DepthwiseConv2DOptions)   # checked by the reference's accepts
    if (opts.dilation_h, opts.dilation_w) != (1, 1):
        return f"dilation {opts.dilation_h}x{opts.dilation_w}, 1x1 required"
    if opts.stride_h > 2 or opts.stride_w > 2:
        return f"stride {opts.stride_h}x{opts.stride_w}, at most 2x2 required"
    call = DWCONV2D_S8_REF.prepare(graph, op)
    _, out_a, width = dw3l_lines(call)
    if width > DW3L_LINE:
        return (f"lines of {out_a} outputs widen {width} values, at most {DW3L_LINE} fit the "
                f"kernel's stack")
    c = int(call.param("in_c"))
    if not rounding_form(call.const("filter").values.astype(np.int8).reshape(9, c).T, call):
        return "the rounding form of the requantization is not exact for every channel"
    # general before fast, but not slower: short lines (few outputs per channel) and stride 2
    # cost more per output than the unrolled kernel (or, off multiples of four channels, the
    # general one at its rate per multiply-accumulate)
    mine = dw3l_instructions(call, clamp=False)
    other, name = ((dw3x3_instructions(call), "unrolled") if c % 4 == 0 else
                   (int(round(9 * c * output_pixels(call)
                              * INSTRUCTIONS_PER_MAC["td_dwconv2d_s8_dsp"])), "general"))
    if mine >= other:
        return f"estimated {mine:,} instructions, the {name} kernel's {other:,}"
    return None


def _dw3x3_lines_prepare(graph: Graph, op: Operator) -> KernelCall:
    call = DWCONV2D_S8_REF.prepare(graph, op)
    c = int(call.param("in_c"))
    taps = call.const("filter").values.astype(np.int8).reshape(9, c)
    dsp = as_dsp_call(call, "td_dwconv2d_3x3_lines_s8_dsp", taps.T, 0)
    return replace(dsp, instructions=dw3l_instructions(dsp))


# One channel at a time through widened lines on the stack (any channel count, strides 1 or
# 2, no dilation): above the unrolled kernel, which keeps the other 3x3 shapes.
DWCONV2D_3X3_LINES_S8_DSP = register(KernelVariant(
    op="DEPTHWISE_CONV_2D", impl="dsp", symbol="td_dwconv2d_3x3_lines_s8_dsp",
    sources=(f"{ARM_DIR}/td_dwconv2d_3x3_lines_s8_dsp.c", SIMD_HEADER, DW_HEADER),
    requires=DSP,
    accepts=_dw3x3_lines_accepts, prepare=_dw3x3_lines_prepare, priority=22,
    access=dwconv_lines_order,
    code_bytes=1970))   # measured 1,796 B, + 10 %


# --- the 3x3 depthwise kernel on widened weights (short maps: a streamed step's row) -------

DWW_SYMBOL = "td_dwconv2d_3x3_wide_s8_dsp"
DWW_GROUP_WORDS = 31   # twin of TD_DWW_WORDS: one group of four channels' table
# the tap pairs in the kernel's load order, then the single tap (twin of td_dww_taps)
DWW_TAPS = (1, 2, 0, 4, 5, 3, 7, 8, 6)


def _dw3x3_wide_accepts(graph: Graph, op: Operator) -> str | None:
    why = _dw3x3_dsp_accepts(graph, op)
    if why is not None:
        return why
    call = DWCONV2D_S8_REF.prepare(graph, op)
    c = int(call.param("in_c"))
    if not rounding_form(call.const("filter").values.astype(np.int8).reshape(9, c).T, call):
        return "the rounding form of the requantization is not exact for every channel"
    return None


def wide_dw_table(taps: np.ndarray, bias: np.ndarray | None, input_offset: int,
                  mult: np.ndarray, shift: np.ndarray, output_zp: int) -> np.ndarray:
    """The per-group tables td_dwconv2d_3x3_wide_s8_dsp.c reads, as int8 bytes (``taps``
    [9, C] int8, C % 4 == 0; the rounding form proven for every channel): per group of four
    channels 31 little-endian words: 2 * (bias + input_offset * sum of taps); the four tap
    pairs of `DWW_TAPS` per channel as int16 (2 w_t, 2 w_u); the single tap as int16
    (2 w c0, 2 w c2), (2 w c1, 2 w c3); per channel (mult, r) with the rounding constant
    r = (2 zp + 1) 2^(e-1); the bytes e - 1 (e = -shift >= 1)."""
    taps = np.asarray(taps, dtype=np.int64)
    ntaps, c = taps.shape
    assert ntaps == 9 and c % 4 == 0, (ntaps, c)
    b = np.zeros(c, np.int64) if bias is None else np.asarray(bias, np.int64)
    folded = 2 * (b + int(input_offset) * taps.sum(axis=0))
    assert np.all(np.abs(folded) < (1 << 31)), "the rounding form bounds the folded bias"
    e = -np.asarray(shift, np.int64)
    assert np.all(e >= 1), "the rounding form shifts right"
    rnd = (2 * int(output_zp) + 1) * (np.int64(1) << (e - 1))
    w2 = (2 * taps).astype(np.int16).view(np.uint16).astype(np.uint32)   # [9, C]
    groups = []
    for g in range(c // 4):
        ch = slice(4 * g, 4 * g + 4)
        words: list[np.ndarray] = [folded[ch].astype(np.int64) & 0xFFFFFFFF]
        for i in range(4):
            t, u = DWW_TAPS[2 * i], DWW_TAPS[2 * i + 1]
            words.append(w2[t, ch] | (w2[u, ch] << 16))
        s = w2[DWW_TAPS[8], ch]
        words.append(np.array([s[0] | (s[2] << 16), s[1] | (s[3] << 16)], np.uint32))
        req = np.stack([np.asarray(mult, np.int64)[ch], rnd[ch]], axis=1).reshape(-1)
        words.append(req & 0xFFFFFFFF)
        sh = (e[ch] - 1).astype(np.uint32)
        words.append(np.array([sh[0] | sh[1] << 8 | sh[2] << 16 | sh[3] << 24], np.uint32))
        groups.append(np.concatenate([np.asarray(w, np.uint64) for w in words]))
    table = np.concatenate(groups).astype(np.uint32)
    assert table.size == DWW_GROUP_WORDS * (c // 4)
    return table.astype("<u4").view(np.int8).copy()


@dataclass(frozen=True)
class DwwGeometry:
    """What td_dwconv2d_3x3_wide_s8_dsp runs for a call: output rows whose three kernel rows
    are inside the image (``asm_rows``), the runs of pixels of one kind of columns in such a
    row (all inside, the left or the right one outside: one asm loop each, ``asm_runs`` over
    all rows) and their pixels (``asm_pixels``); every other pixel takes the C loop
    (``c_pixels``); ``columns`` is the row's width (the runs are found once per call)."""

    asm_rows: int
    asm_runs: int
    asm_pixels: int
    c_pixels: int
    columns: int


def dww_column_kinds(call: KernelCall) -> list[int]:
    """Per output column: 0 all three kernel columns inside the image, 1 the left one outside,
    2 the right one outside, 3 any other (twin of td_dww_cols)."""
    sw, pad, d, n = (int(call.param(k)) for k in ("stride_w", "pad_w", "dilation_w", "in_w"))
    kinds = []
    for ox in range(int(call.param("out_w"))):
        x = ox * sw - pad
        in0, in1, in2 = (0 <= x + k * d < n for k in range(3))
        kinds.append(0 if in0 and in1 and in2 else 1 if not in0 and in1 and in2
                     else 2 if in0 and in1 and not in2 else 3)
    return kinds


def dww_geometry(call: KernelCall) -> DwwGeometry:
    """The `DwwGeometry` of a td_dwconv2d_3x3_wide_s8_dsp call."""
    sh, pad, d, n = (int(call.param(k)) for k in ("stride_h", "pad_h", "dilation_h", "in_h"))
    b, out_w = int(call.param("batches")), int(call.param("out_w"))
    rows = b * sum(1 for oy in range(int(call.param("out_h")))
                   if oy * sh - pad >= 0 and oy * sh - pad + 2 * d < n)
    kinds = dww_column_kinds(call)
    runs = [k for i, k in enumerate(kinds) if i == 0 or kinds[i - 1] != k]
    asm_runs = sum(1 for k in runs if k != 3)
    asm_cols = sum(1 for k in kinds if k != 3)
    return DwwGeometry(rows, rows * asm_runs, rows * asm_cols,
                       output_pixels(call) - rows * asm_cols, out_w)


# td_dwconv2d_3x3_wide_s8_dsp's cost, fitted on QEMU mps2-an386 (-icount, -O2) by least
# squares to 25 maps of 1x1 to 25x5 pixels over 4 to 128 channels, VALID and SAME, strides
# and dilation (within 2.5 %): per call, per output column (the runs are found once per
# call), per asm row, per asm run, per asm pixel, per asm pixel and group of four channels
# (and per such group when the activation clamps inside int8); per pixel of the C loop and
# per such pixel and group (~2.7 times the asm's)
DWW_COST = (27.9, 34.2, 114.6, 45.8, 1.6, 99.1, 3.6, 296.5, 267.5)


def dww_instructions(call: KernelCall) -> int:
    """td_dwconv2d_3x3_wide_s8_dsp's estimated instructions for ``call`` (`DWW_COST`)."""
    fixed, per_col, per_row, per_run, px_asm, group_asm, clamp, px_c, group_c = DWW_COST
    groups = int(call.param("in_c")) // 4
    if (int(call.param("act_min")), int(call.param("act_max"))) != (-128, 127):
        group_asm += clamp
    g = dww_geometry(call)
    return int(round(fixed + per_col * g.columns + per_row * g.asm_rows + per_run * g.asm_runs
                     + g.asm_pixels * (px_asm + group_asm * groups)
                     + g.c_pixels * (px_c + group_c * groups)))


def _dw3x3_wide_prepare(graph: Graph, op: Operator) -> KernelCall:
    call = DWCONV2D_S8_REF.prepare(graph, op)
    c = int(call.param("in_c"))
    taps = call.const("filter").values.astype(np.int8).reshape(9, c)
    bias = next((k.values for k in call.consts if k.name == "bias"), None)
    table = wide_dw_table(taps, bias, int(call.param("input_offset")),
                          call.const("mult").values, call.const("shift").values,
                          int(call.param("output_offset")))
    dsp = as_dsp_call(call, DWW_SYMBOL, taps.T, 0, table)
    consts = tuple(k for k in dsp.consts if k.name == "filter")
    params = tuple((k, "NULL" if k in ("bias", "mult", "shift") else v)
                   for k, v in dsp.params)
    dsp = replace(dsp, consts=consts, params=params)
    return replace(dsp, instructions=dww_instructions(dsp))


# 3x3 on multiples of four channels with the weights widened and the input offset folded into
# the bias on the host: 124 B of constants per four channels where the reference stores 72
# (a speed-for-flash trade, so only ``--optimize speed`` and the streamed selection under it
# take it), about 100 instructions per pixel and four channels where the unrolled kernel
# takes 136. Below the unrolled kernel's priority: selection by priority never takes it.
DWCONV2D_3X3_WIDE_S8_DSP = register(KernelVariant(
    op="DEPTHWISE_CONV_2D", impl="dsp", symbol=DWW_SYMBOL,
    sources=(f"{ARM_DIR}/td_dwconv2d_3x3_wide_s8_dsp.c", SIMD_HEADER),
    requires=DSP,
    accepts=_dw3x3_wide_accepts, prepare=_dw3x3_wide_prepare, priority=19,
    access=dwconv_lanes_order(4), estimate=dww_instructions,
    code_bytes=4540))   # measured 4,125 B, + 10 %


def _dw_dsp_accepts(graph: Graph, op: Operator) -> str | None:
    why = DWCONV2D_S8_REF.accepts(graph, op)
    if why is not None:
        return why
    opts = op.options
    assert isinstance(opts, DepthwiseConv2DOptions)   # checked by the reference's accepts
    if opts.depth_multiplier != 1:
        return f"depth multiplier {opts.depth_multiplier}, 1 required"
    return None


def _dw_general_prepare(graph: Graph, op: Operator) -> KernelCall:
    call = DWCONV2D_S8_REF.prepare(graph, op)
    c = int(call.param("in_c"))
    taps = call.const("filter").values.astype(np.int8).reshape(-1, c)
    dsp = as_dsp_call(call, "td_dwconv2d_s8_dsp", taps.T, 0)
    per_mac, per_out = DW_GENERAL_COST
    outputs = output_pixels(call) * int(call.param("out_c"))
    return replace(dsp, instructions=int(round(outputs * (taps.shape[0] * per_mac + per_out))))


# td_dwconv2d_s8_dsp per MAC and per output, fitted on MLPerf's streaming wake-word model's
# depthwise layers (3x1, 5x1, 10x1 and 15x1 over 40 and 128 channels: 69,240, 233,080,
# 224,920 and 20,400 measured; the flat 7 per MAC was up to 66 % low)
DW_GENERAL_COST = (7.1, 40.3)


DWCONV2D_S8_DSP = register(KernelVariant(
    op="DEPTHWISE_CONV_2D", impl="dsp", symbol="td_dwconv2d_s8_dsp",
    sources=(f"{ARM_DIR}/td_dwconv2d_s8_dsp.c", SIMD_HEADER, DW_HEADER), requires=DSP,
    accepts=_dw_dsp_accepts, prepare=_dw_general_prepare, priority=10,
    access=dwconv_lanes_order(1),
    code_bytes=3400))   # groups of 4 read before written: within lanes(1)


def _dw_as_conv_accepts(graph: Graph, op: Operator) -> str | None:
    why = DWCONV2D_S8_REF.accepts(graph, op)
    if why is not None:
        return why
    c = graph.tensor(op.inputs[0]).shape[3]
    if c != 1:
        return f"{c} input channels, 1 required (a depthwise on one channel is a convolution)"
    fh, fw, m = graph.tensor(op.inputs[1]).shape[1:4]
    if fh * fw >= MAX_DEPTH:
        return f"dot-product depth {fh * fw} exceeds {MAX_DEPTH - 1}"
    return None


def dw_as_conv_call(call: KernelCall) -> KernelCall:
    """A depthwise ``call`` on one input channel as the equal td_conv2d_params_t call: output
    channel o (of depth_multiplier M = out_c) is a convolution with the kernel taps of o, so
    the filter [kh][kw][M] is transposed to [M][kh][kw][1] (the same bytes)."""
    p = dict(call.params)
    fh, fw, m = (int(p[k]) for k in ("filter_h", "filter_w", "out_c"))
    filt = call.const("filter").values.astype(np.int8).reshape(fh * fw, m)
    consts = tuple(ConstArray("filter", "int8_t", np.ascontiguousarray(filt.T).reshape(-1))
                   if c.name == "filter" else c for c in call.consts)
    names = ("batches", "in_h", "in_w", "in_c", "out_h", "out_w", "out_c", "filter_h",
             "filter_w")
    params = tuple((k, p[k]) for k in names) + (("filter_c", 1),) + tuple(
        (k, p[k]) for k in ("stride_h", "stride_w", "dilation_h", "dilation_w", "pad_h",
                            "pad_w", "input_offset", "output_offset", "act_min", "act_max",
                            "filter", "bias", "mult", "shift"))
    return replace(call, symbol="td_conv2d_s8_ref", params_type="td_conv2d_params_t",
                   params=params, consts=consts)


def _dw_as_conv_prepare(graph: Graph, op: Operator) -> KernelCall:
    conv = dw_as_conv_call(DWCONV2D_S8_REF.prepare(graph, op))
    fh, fw = int(conv.param("filter_h")), int(conv.param("filter_w"))
    dsp = as_dsp_gemm_call(conv, "td_conv2d_s8_dsp", fh * fw, conv_scratch_bytes(fh, fw, 1))
    return replace(dsp, instructions=conv_dsp_instructions(dsp))


# The matrix-product form (faster, scratch of a few kernel sizes): below the scratch-free
# kernel, for a selection that weighs the board's budget.
DWCONV2D_C1_GEMM_S8_DSP = register(KernelVariant(
    op="DEPTHWISE_CONV_2D", impl="dsp", symbol="td_conv2d_s8_dsp",
    sources=(f"{ARM_DIR}/td_conv2d_s8_dsp.c", *GEMM_FILES, SIMD_HEADER), requires=DSP,
    accepts=_dw_as_conv_accepts, prepare=_dw_as_conv_prepare, priority=25,
    access=conv_rows_order(GEMM_ROWS_IM2COL),
    code_bytes=4550))


def group_c1_taps(taps: np.ndarray) -> np.ndarray:
    """[kh, kw, M] int8 one-channel depthwise taps -> the layout td_dwconv2d_c1_s8_dsp.c reads
    (the same bytes): per group of four channels and kernel row, kw // 4 blocks [4 channels]
    [4 taps], then for kw % 4 >= 2 taps 4F, 4F+1 as [c0 t0, c1 t0, c0 t1, c1 t1][c2 t0, c3 t0,
    c2 t1, c3 t1], then for an odd kw % 4 the last tap [c0..c3]; the last M % 4 channels as
    [channel][kh][kw]."""
    taps = np.asarray(taps, dtype=np.int8)
    kh, kw, m = taps.shape
    f4 = kw & ~3
    parts = []
    for g in range(m // 4):
        t = taps[:, :, 4 * g:4 * g + 4]                          # [kh][kw][4]
        for ky in range(kh):
            row = t[ky]                                          # [kw][4]
            parts.append(row[:f4].reshape(-1, 4, 4).transpose(0, 2, 1).reshape(-1))
            if kw - f4 >= 2:
                pair = row[f4:f4 + 2]                            # [2 taps][4 channels]
                parts.append(pair.reshape(2, 2, 2).transpose(1, 0, 2).reshape(-1))
            if (kw - f4) & 1:
                parts.append(row[kw - 1])
    rest = taps[:, :, 4 * (m // 4):]
    parts.append(np.ascontiguousarray(rest.transpose(2, 0, 1)).reshape(-1))
    return np.concatenate(parts).astype(np.int8)


def _dw_c1_prepare(graph: Graph, op: Operator) -> KernelCall:
    call = DWCONV2D_S8_REF.prepare(graph, op)
    m = int(call.param("out_c"))
    kh, kw = int(call.param("filter_h")), int(call.param("filter_w"))
    taps = call.const("filter").values.astype(np.int8).reshape(kh, kw, m)
    rows = np.ascontiguousarray(taps.reshape(-1, m).T)          # [M][kh * kw]
    dsp = as_dsp_call(call, "td_dwconv2d_c1_s8_dsp", rows, 0, group_c1_taps(taps))
    per_mac, per_pixel = DW_C1_COST
    return replace(dsp, instructions=int(round(output_pixels(call) * (m * kh * kw * per_mac
                                                                      + per_pixel))))


# td_dwconv2d_c1_s8_dsp per MAC and per output pixel (all M channels): fitted on
# micro_speech's 10x8/2 x8 layer (~0.9 M of its 939,760) and person_detect's 3x3/2 x8 on
# 96x96 (2,161,083 measured), where a flat 2.9 per MAC was 4.5x low
DW_C1_COST = (1.62, 822.0)


DWCONV2D_C1_S8_DSP = register(KernelVariant(
    op="DEPTHWISE_CONV_2D", impl="dsp", symbol="td_dwconv2d_c1_s8_dsp",
    sources=(f"{ARM_DIR}/td_dwconv2d_c1_s8_dsp.c", SIMD_HEADER, DW_HEADER, DOT4_HEADER),
    requires=DSP,
    accepts=_dw_as_conv_accepts, prepare=_dw_c1_prepare, priority=30,
    access=dwconv_ref_order,
    code_bytes=2700))


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
    dsp = as_dsp_gemm_call(call, "td_fully_connected_s8_dsp", depth, 0)
    if not any(c.name == "bias" for c in dsp.consts):
        return fc_interleaved(replace(dsp, instructions=fc_instructions(dsp, False)))
    dsp = replace(dsp, instructions=fc_instructions(dsp, True))
    # With a bias, the input offset is folded into it (the same bytes): the kernel's
    # unrolled loop then widens the input without an offset register.
    rows = dsp.const("filter").values.astype(np.int8).reshape(-1, depth)
    folded = fold_bias(rows, dsp.const("bias").values, int(dsp.param("input_offset")))
    consts = tuple(ConstArray("bias", "int32_t", folded) if c.name == "bias" else c
                   for c in dsp.consts)
    params = tuple((k, 0 if k == "input_offset" else v) for k, v in dsp.params)
    return fc_interleaved(replace(dsp, consts=consts, params=params))


# td_fully_connected_s8_dsp per MAC, per output, per MAC and per row of the out_c % 4 rows
# left (one at a time), and per call beyond `choose.CALL_INSTRUCTIONS`; two loops, fitted
# apart (least relative error, within 1 %): with a bias the input offset is folded into it
# (MLPerf AD01's 640 -> 128: 134,040 measured, 128 -> 128: 31,640, 128 -> 8: 2,080,
# 8 -> 128: 7,640, 128 -> 640: 159,160; VWW's 256 -> 2: 1,620; streaming wake-word's
# 32 -> 3: 480); without one the loop adds it (mlp's 20 -> 32: 2,560, 32 -> 16: 1,640,
# 16 -> 4: 400; the DS-CNNs' 64 -> 12: 1,880 and 16 -> 12: 960; residual's 16 -> 5: 600)
FC_COST_FOLDED = (1.567, 46.39, 1.258, -11.17, 103.1 - 250)
FC_COST_OFFSET = (1.594, 44.30, 0.0, 130.1, 120.9 - 250)


def fc_instructions(call: KernelCall, folded: bool) -> int:
    """The dsp FC's estimate for ``call`` (`FC_COST_FOLDED` when the input offset is folded
    into the bias, else `FC_COST_OFFSET`)."""
    per_mac, per_out, per_left_mac, per_left, fixed = FC_COST_FOLDED if folded else FC_COST_OFFSET
    depth, oc = int(call.param("accum_depth")), int(call.param("out_c"))
    left = oc % 4
    per_batch = oc * (depth * per_mac + per_out) + left * (depth * per_left_mac + per_left)
    return max(1, int(round(int(call.param("batches")) * per_batch + fixed)))


def interleave_fc_rows(rows: np.ndarray) -> np.ndarray:
    """[out_c, depth] int8 (depth % 4 == 0) -> the dsp FC's layout: whole groups of four rows
    as [out_c/4][depth/4][4 rows][4 values], then the last out_c % 4 rows as they are."""
    oc, depth = rows.shape
    g = oc // 4
    head = rows[:4 * g].reshape(g, 4, depth // 4, 4).transpose(0, 2, 1, 3).reshape(-1)
    return np.concatenate([head, rows[4 * g:].reshape(-1)]).astype(np.int8)


def fc_interleaved(call: KernelCall) -> KernelCall:
    """``call`` with its filter interleaved when the kernel reads it so: a depth that is a
    multiple of 4 (td_fully_connected_s8_dsp.c)."""
    depth = int(call.param("accum_depth"))
    if depth % 4 or depth == 0:
        return call
    rows = call.const("filter").values.astype(np.int8).reshape(-1, depth)
    consts = tuple(ConstArray("filter", "int8_t", interleave_fc_rows(rows))
                   if c.name == "filter" else c for c in call.consts)
    return replace(call, consts=consts)


FULLY_CONNECTED_S8_DSP = register(KernelVariant(
    op="FULLY_CONNECTED", impl="dsp", symbol="td_fully_connected_s8_dsp",
    sources=(f"{ARM_DIR}/td_fully_connected_s8_dsp.c", *GEMM_FILES, SIMD_HEADER,
             DOT4_HEADER),
    requires=DSP, accepts=_fc_accepts, prepare=_fc_prepare, priority=20,
    code_bytes=1170))


# --- AVERAGE_POOL_2D over the whole image --------------------------------------------------

def _avgpool_global_accepts(graph: Graph, op: Operator) -> str | None:
    why = AVGPOOL2D_S8_REF.accepts(graph, op)
    if why is not None:
        return why
    call = AVGPOOL2D_S8_REF.prepare(graph, op)
    p = dict(call.params)
    if (p["out_h"], p["out_w"]) != (1, 1) or p["pad_h"] or p["pad_w"]:
        return "not a global pool (one output pixel, no padding)"
    if int(p["filter_h"]) < int(p["in_h"]) or int(p["filter_w"]) < int(p["in_w"]):
        return "the window does not cover the input"
    return None


def _avgpool_global_prepare(graph: Graph, op: Operator) -> KernelCall:
    call = AVGPOOL2D_S8_REF.prepare(graph, op)
    pixels = int(call.param("in_h")) * int(call.param("in_w"))
    channels = int(call.param("channels")) * int(call.param("batches"))
    per_input, per_channel, fixed = AVGPOOL_GLOBAL_COST
    return replace(call, symbol="td_avgpool2d_global_s8_dsp",
                   instructions=max(1, round(pixels * channels * per_input
                                             + channels * per_channel + fixed)))


# td_avgpool2d_global_s8_dsp per input element, per channel (its division) and per call
# beyond `choose.CALL_INSTRUCTIONS`, fitted on the DS-CNN's 25x5x64 pool (15,440 measured),
# the small DS-CNN's 25x5x16 (3,920) and person_detect's 3x3x256 (9,554)
AVGPOOL_GLOBAL_COST = (1.75, 21.3, -170.0)


AVGPOOL2D_GLOBAL_S8_DSP = register(KernelVariant(
    op="AVERAGE_POOL_2D", impl="dsp", symbol="td_avgpool2d_global_s8_dsp",
    sources=(f"{ARM_DIR}/td_avgpool2d_global_s8_dsp.c", SIMD_HEADER), requires=DSP,
    accepts=_avgpool_global_accepts, prepare=_avgpool_global_prepare, priority=20,
    code_bytes=560))
