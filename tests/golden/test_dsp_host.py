"""Golden tier for the Cortex-M DSP kernels (tinydeploy/kernels/arm_dsp.py), on the host.

Single-op models are compiled with the kernels that `select_kernels` picks for a board with
the "dsp" feature (the host harness builds them with gcc and sanitizers, where td_simd.h's
portable twins stand in for the SIMD instructions) and compared byte for byte with the
tflite-micro oracle. Every case also asserts that the dsp variant was the one selected, so a
case that silently fell back to the reference kernel fails instead of passing vacuously.

Cases are declared as data: odd channel counts (not multiples of 4), odd pixel counts, SAME
and VALID padding, strides, dilation, zero points at the int8 extremes, per-channel scales
spanning many octaves, fused activations, large biases.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pytest

from tinydeploy.boards import get_board
from tinydeploy.kernels import arm_dsp
from tinydeploy.kernels.registry import Selection, select_kernels, variant_by_symbol
from tinydeploy.model.ir import (
    Activation,
    Conv2DOptions,
    DepthwiseConv2DOptions,
    FullyConnectedOptions,
    Graph,
    Padding,
    Pool2DOptions,
)
from tinydeploy.model.loader import load_tflite
from tinydeploy.oracle import run_oracle
from tinydeploy.testing.builder import ModelBuilder
from tinydeploy.testing.harness import FIRMWARE_DIR, HostCase, cache_dir, run_host

DSP_BOARD = get_board("mps2-an386")


@dataclass(frozen=True)
class Spec:
    """One single-op model. ``kind`` is "conv", "dw" or "fc"; shapes are NHWC (fc: rows x
    depth), ``k`` the filter size (kh, kw), ``zp`` the (input, output) zero points."""

    id: str
    kind: str
    in_shape: tuple[int, ...]
    out_c: int
    k: tuple[int, int] = (1, 1)
    stride: tuple[int, int] = (1, 1)
    dilation: tuple[int, int] = (1, 1)
    padding: Padding = Padding.SAME
    zp: tuple[int, int] = (0, 0)
    act: Activation = Activation.NONE
    bias: bool = True
    bias_scale: int = 1 << 12
    octaves: int = 6
    seed: int = 0
    expect: str = ""        # the dsp symbol that must be selected
    out_scale: float = 0.0  # 0: the default (0.07, fc 0.3); tiny values give shifts >= 0


def build_model(s: Spec) -> bytes:
    """The .tflite bytes of ``s`` with random weights (seeded) and per-channel scales."""
    rng = np.random.default_rng(s.seed)
    b = ModelBuilder(f"dsp golden {s.id}")
    in_scale, out_scale = 0.05, 0.07 if s.kind != "fc" else 0.3
    out_scale = s.out_scale or out_scale
    x = b.tensor("x", s.in_shape, "int8", scale=in_scale, zero_point=s.zp[0])
    if s.kind == "gap":   # AVERAGE_POOL_2D over the whole image (output quant = input's)
        n, h, wd, c = s.in_shape
        y = b.tensor("y", (n, 1, 1, c), "int8", scale=in_scale, zero_point=s.zp[0])
        b.op("AVERAGE_POOL_2D", [x], [y],
             Pool2DOptions(s.padding, wd, h, wd, h, s.act))
        return b.build(inputs=[x], outputs=[y])
    oc = s.out_c
    # per-channel filter scales spanning 2^-octaves .. 1 (times a base)
    scales = 0.004 * 2.0 ** rng.uniform(-s.octaves, 0, size=oc)
    if s.kind == "conv":
        cin = s.in_shape[3]
        wshape: tuple[int, ...] = (oc, s.k[0], s.k[1], cin)
        axis = 0
    elif s.kind == "dw":
        wshape = (1, s.k[0], s.k[1], oc)
        axis = 3
    else:
        wshape = (oc, s.in_shape[-1])
        axis = 0
    wdata = rng.integers(-127, 128, size=wshape)
    w = b.tensor("w", wshape, "int8", scale=list(scales), zero_point=0, axis=axis, data=wdata)
    bias_t = -1
    if s.bias:
        bdata = rng.integers(-s.bias_scale, s.bias_scale + 1, size=oc)
        bias_t = b.tensor("b", (oc,), "int32", scale=list(in_scale * scales), zero_point=0,
                          axis=0, data=bdata)
    if s.kind == "conv":
        n, h, wd, _ = s.in_shape
        oh = _out(s.padding, h, s.k[0], s.stride[0], s.dilation[0])
        ow = _out(s.padding, wd, s.k[1], s.stride[1], s.dilation[1])
        y = b.tensor("y", (n, oh, ow, oc), "int8", scale=out_scale, zero_point=s.zp[1])
        b.op("CONV_2D", [x, w, bias_t], [y],
             Conv2DOptions(padding=s.padding, stride_w=s.stride[1], stride_h=s.stride[0],
                           activation=s.act, dilation_w=s.dilation[1],
                           dilation_h=s.dilation[0]), version=3)
    elif s.kind == "dw":
        n, h, wd, c = s.in_shape
        oh = _out(s.padding, h, s.k[0], s.stride[0], s.dilation[0])
        ow = _out(s.padding, wd, s.k[1], s.stride[1], s.dilation[1])
        y = b.tensor("y", (n, oh, ow, oc), "int8", scale=out_scale, zero_point=s.zp[1])
        b.op("DEPTHWISE_CONV_2D", [x, w, bias_t], [y],
             DepthwiseConv2DOptions(padding=s.padding, stride_w=s.stride[1],
                                    stride_h=s.stride[0], depth_multiplier=oc // c,
                                    activation=s.act, dilation_w=s.dilation[1],
                                    dilation_h=s.dilation[0]), version=3)
    else:
        y = b.tensor("y", (s.in_shape[0], oc), "int8", scale=out_scale, zero_point=s.zp[1])
        b.op("FULLY_CONNECTED", [x, w, bias_t], [y],
             FullyConnectedOptions(activation=s.act), version=4)
    return b.build(inputs=[x], outputs=[y])


def _out(padding: Padding, size: int, k: int, stride: int, dilation: int) -> int:
    eff = (k - 1) * dilation + 1
    if padding == Padding.SAME:
        return (size + stride - 1) // stride
    return (size + stride - eff) // stride


def input_sets(graph: Graph, seed: int) -> list[tuple[str, np.ndarray]]:
    """Random int8 inputs plus the two extremes (all -128, all 127)."""
    t = graph.inputs[0]
    rng = np.random.default_rng(seed + 1000)
    return [("random", rng.integers(-128, 128, size=t.shape).astype(np.int8)),
            ("all_min", np.full(t.shape, -128, np.int8)),
            ("all_max", np.full(t.shape, 127, np.int8))]


C1 = "td_conv2d_1x1_s8_dsp"
CG = "td_conv2d_s8_dsp"
CC1 = "td_conv2d_c1_s8_dsp"
CW = "td_conv2d_window_s8_dsp"
CWF = "td_conv2d_window_frame_s8_dsp"
DW = "td_dwconv2d_3x3_s8_dsp"
DWL = "td_dwconv2d_3x3_lines_s8_dsp"
DWG = "td_dwconv2d_s8_dsp"
DW1 = "td_dwconv2d_c1_s8_dsp"
FC = "td_fully_connected_s8_dsp"
GAP = "td_avgpool2d_global_s8_dsp"


def conv_symbol(in_c: int, k: tuple[int, int], dilation_w: int) -> str:
    """The CONV_2D kernel the dsp board must get (any shape but 1x1): kernel rows of whole
    blocks of four values and a depth of at most 64 the window kernel; else one input channel
    and four taps wide the one-channel kernel; else whole blocks up to the frame's depth the
    window kernel with fewer rows; else the im2col one."""
    blockwise, depth = (k[1] * in_c) % 4 == 0, k[0] * k[1] * in_c
    if blockwise and depth <= arm_dsp.PW_STACK_DEPTH:
        return CW
    if in_c == 1 and k[1] == 4 and dilation_w == 1:
        return CC1
    return CWF if blockwise and depth <= arm_dsp.WINDOW_FRAME_DEPTH else CG


def dw_symbol(in_c: int, k: tuple[int, int], multiplier: int) -> str:
    """The depthwise kernel the dsp board must get without the 3x3 lines kernel (see
    `lines_or`): one input channel the scratch-free one-channel kernel (any multiplier), 3x3
    on a multiple of 4 channels the unrolled kernel, else the general one; other multipliers
    go to the portable optimised kernel."""
    if in_c == 1:
        return DW1
    if multiplier != 1:
        return "td_dwconv2d_s8_opt"
    return DW if k == (3, 3) and in_c % 4 == 0 else DWG


def lines_or(s: Spec) -> Spec:
    """``s`` expecting the 3x3 lines kernel where it accepts the op (3x3, strides up to 2,
    no dilation, the rounding form, and its cost model below the kernel ``s`` expects)."""
    if s.kind != "dw" or s.k != (3, 3):
        return s
    g = load_tflite(build_model(s))
    if arm_dsp.DWCONV2D_3X3_LINES_S8_DSP.accepts(g, g.operators[0]) is None:
        return replace(s, expect=DWL)
    return s


SPECS: tuple[Spec, ...] = (
    # pointwise CONV_2D: DS-CNN's shape, odd channels, odd pixel counts, strides, batches
    Spec("pw_dscnn", "conv", (1, 25, 5, 64), 64, zp=(-2, 5), expect=C1),
    Spec("pw_odd_c", "conv", (1, 3, 5, 7), 5, zp=(17, -9), expect=C1),
    Spec("pw_c1", "conv", (1, 4, 4, 1), 3, expect=C1),
    Spec("pw_c3_oc1", "conv", (1, 1, 1, 3), 1, zp=(-128, 127), expect=C1),
    Spec("pw_zp_lo", "conv", (1, 5, 3, 13), 6, zp=(-128, -128), expect=C1),
    Spec("pw_zp_hi", "conv", (1, 5, 3, 13), 6, zp=(127, 127), expect=C1),
    Spec("pw_stride2", "conv", (1, 7, 6, 9), 4, stride=(2, 2), zp=(3, 0), expect=C1),
    Spec("pw_stride_3x2_valid", "conv", (1, 8, 7, 4), 3, stride=(3, 2),
         padding=Padding.VALID, expect=C1),
    Spec("pw_batch3", "conv", (3, 2, 3, 10), 7, zp=(-50, 20), expect=C1),
    Spec("pw_relu", "conv", (1, 6, 6, 16), 8, zp=(-128, -128), act=Activation.RELU,
         expect=C1),
    Spec("pw_relu6", "conv", (1, 5, 5, 20), 9, zp=(1, -100), act=Activation.RELU6,
         expect=C1),
    Spec("pw_nobias", "conv", (1, 3, 3, 11), 3, zp=(60, 0), bias=False, expect=C1),
    Spec("pw_bigbias", "conv", (1, 3, 3, 32), 4, zp=(-128, 0), bias_scale=1 << 24,
         octaves=12, expect=C1),
    # deeper than the 1x1 kernel's 64-channel stack buffer: the general kernel, no im2col
    Spec("pw_deep", "conv", (1, 2, 3, 259), 3, zp=(-7, 2), expect=CG),
    Spec("pw_c64_odd_px", "conv", (1, 3, 3, 64), 5, zp=(-128, 1), expect=C1),
    Spec("pw_c65_stride2", "conv", (1, 5, 5, 65), 6, stride=(2, 2), zp=(9, -4), expect=CG),
    # the assembly channel loop (depth a multiple of 4, all of int8, a bias): every entry
    # block (1, 2, 3, 4, 5, 15 blocks), partial groups of 1-3 pixels, one output channel,
    # heavy saturation, shifts and multipliers across 16 octaves, extreme zero points
    Spec("pw_asm_k4_oc1", "conv", (1, 3, 3, 4), 1, zp=(-128, 127), expect=C1),
    Spec("pw_asm_k8_px6", "conv", (1, 2, 3, 8), 5, zp=(127, -128), expect=C1),
    Spec("pw_asm_k12_px7", "conv", (1, 7, 1, 12), 3, zp=(4, 0), expect=C1),
    Spec("pw_asm_k16_b2", "conv", (2, 3, 2, 16), 17, zp=(-1, 1), expect=C1),
    Spec("pw_asm_k20_stride", "conv", (1, 7, 5, 20), 9, stride=(2, 3), zp=(50, -3), expect=C1),
    Spec("pw_asm_k60_sat", "conv", (1, 5, 5, 60), 16, zp=(-128, 0), out_scale=0.002,
         expect=C1),
    Spec("pw_asm_k64_octaves", "conv", (1, 3, 5, 64), 12, zp=(-7, 0), octaves=16,
         bias_scale=1 << 16, expect=C1),
    Spec("pw_asm_k32_shift26", "conv", (1, 4, 3, 32), 7, zp=(0, 0), octaves=3,
         out_scale=3000.0, bias_scale=1 << 28, expect=C1),
    # one channel per call on a row copy before the rows in use (depth 55: 14 blocks), and
    # the C product where the copy would not fit there (depth 61; depth 64 without bias)
    Spec("pw_copy_k55", "conv", (1, 2, 3, 55), 6, zp=(-128, 5), expect=C1),
    Spec("pw_copy_k61", "conv", (1, 3, 2, 61), 5, zp=(3, -2), expect=C1),
    Spec("pw_nobias_k64", "conv", (1, 3, 3, 64), 4, zp=(-20, 0), bias=False, expect=C1),
    # general CONV_2D (im2col): DS-CNN's first layer, odd sizes, padding, dilation
    Spec("cv_dscnn0", "conv", (1, 49, 10, 1), 64, k=(10, 4), stride=(2, 2), zp=(-2, -128),
         act=Activation.RELU, expect=CW),
    # one input channel, four taps wide (the window kernel; the one-channel kernel for
    # taller filters, and in place of the window kernel in C1_SPECS below): borders on every
    # side, strides larger than the kernel, vertical dilation, odd channel counts, every
    # requantization path
    Spec("c1_odd_oc_valid", "conv", (1, 9, 7, 1), 7, k=(3, 4), padding=Padding.VALID,
         zp=(127, -3), expect=CW),
    Spec("c1_stride_gt_k", "conv", (2, 13, 11, 1), 5, k=(2, 4), stride=(5, 6), zp=(-128, 9),
         act=Activation.RELU6, expect=CW),
    Spec("c1_dilated_h", "conv", (1, 12, 5, 1), 9, k=(3, 4), dilation=(3, 1), zp=(31, 0),
         expect=CW),
    Spec("c1_narrow_pad", "conv", (1, 4, 4, 1), 4, k=(6, 4), zp=(-7, 1), expect=CW),
    Spec("c1_w2_tall", "conv", (1, 40, 2, 1), 6, k=(19, 4), stride=(2, 1), zp=(-100, 2),
         expect=CC1),
    Spec("c1_oc1_stride1", "conv", (1, 6, 9, 1), 1, k=(1, 4), zp=(0, 127), bias=False,
         expect=CW),
    Spec("c1_shift_pos", "conv", (1, 7, 6, 1), 6, k=(2, 4), zp=(5, -5), out_scale=0.00001,
         octaves=1, expect=CW),
    Spec("c1_bigbias", "conv", (1, 8, 8, 1), 12, k=(4, 4), stride=(1, 3), zp=(-128, 0),
         bias_scale=1 << 24, octaves=12, expect=CW),
    # the window kernel: blocks across a border of two-channel taps, whole-pad blocks of a
    # four-channel row, the deepest window (64), batches with stride 2, a dilated row and
    # image rows narrower than a block (tap by tap), no bias (one channel per call), a
    # clamped activation (the C product), saturating outputs
    Spec("cw_c2_borders", "conv", (1, 7, 6, 2), 5, k=(3, 2), zp=(-128, 3), expect=CW),
    Spec("cw_c4_3x3", "conv", (1, 6, 5, 4), 7, k=(3, 3), zp=(9, -9), expect=CW),
    Spec("cw_c4_w1", "conv", (1, 4, 1, 4), 3, k=(3, 3), zp=(-70, 2), expect=CW),
    Spec("cw_k64", "conv", (1, 5, 6, 4), 9, k=(4, 4), zp=(-1, 0), expect=CW),
    Spec("cw_c8_s2_b2", "conv", (2, 7, 7, 8), 6, k=(2, 2), stride=(2, 2), zp=(127, -128),
         expect=CW),
    Spec("cw_dilated_w", "conv", (1, 8, 9, 1), 4, k=(2, 4), dilation=(1, 2), zp=(-5, 5),
         expect=CW),
    Spec("cw_narrow_row", "conv", (1, 5, 1, 2), 3, k=(3, 2), zp=(20, -1), expect=CW),
    Spec("cw_w2_c1", "conv", (1, 3, 2, 1), 5, k=(2, 4), zp=(-128, 0), expect=CW),
    Spec("cw_nobias", "conv", (1, 6, 6, 1), 3, k=(5, 4), stride=(1, 2), bias=False,
         zp=(13, 0), expect=CW),
    Spec("cw_relu6", "conv", (1, 9, 8, 1), 8, k=(4, 4), act=Activation.RELU6, zp=(-3, -100),
         expect=CW),
    Spec("cw_exact_w4", "conv", (1, 5, 4, 1), 3, k=(3, 4), zp=(100, 1), expect=CW),
    Spec("cw_saturating", "conv", (1, 6, 5, 4), 6, k=(2, 3), zp=(-128, 0), out_scale=0.004,
         expect=CW),
    # the window kernel with fewer rows (depths above 64): three rows (2x2x32), two (3x3x16
    # with batches), one (3x3x32), a dilated 3x3x8 (four rows, tap by tap), no bias
    Spec("cwf_2x2x32_r3", "conv", (1, 5, 6, 32), 6, k=(2, 2), zp=(-128, 5), expect=CWF),
    Spec("cwf_3x3x16_b2", "conv", (2, 6, 5, 16), 7, k=(3, 3), zp=(19, -19), expect=CWF),
    Spec("cwf_3x3x32_r1", "conv", (1, 5, 4, 32), 5, k=(3, 3), zp=(127, 0), bias=False,
         expect=CWF),
    Spec("cwf_dilated", "conv", (1, 9, 9, 8), 4, k=(3, 3), dilation=(2, 2), zp=(-7, 7),
         expect=CWF),
    Spec("cv_3x3_c3", "conv", (1, 7, 7, 3), 5, k=(3, 3), zp=(-128, 3), expect=CG),
    Spec("cv_3x3_valid", "conv", (1, 6, 5, 6), 4, k=(3, 3), padding=Padding.VALID,
         zp=(127, -20), expect=CG),
    Spec("cv_even_same", "conv", (1, 6, 7, 2), 3, k=(2, 4), zp=(40, 1), expect=CW),
    Spec("cv_stride_gt_k", "conv", (1, 9, 9, 5), 2, k=(2, 2), stride=(3, 3), zp=(-1, 0),
         expect=CG),
    Spec("cv_dilated", "conv", (1, 8, 9, 3), 3, k=(3, 3), dilation=(2, 2), zp=(-128, 5),
         expect=CG),
    Spec("cv_dilated_valid", "conv", (1, 9, 8, 2), 5, k=(3, 2), dilation=(2, 3),
         padding=Padding.VALID, expect=CW),
    Spec("cv_1xn", "conv", (1, 1, 12, 4), 7, k=(1, 5), zp=(9, 9), expect=CW),
    Spec("cv_batch2_relu6", "conv", (2, 5, 4, 3), 6, k=(3, 3), stride=(2, 1),
         act=Activation.RELU6, zp=(-60, -30), expect=CG),
    Spec("cv_nobias", "conv", (1, 4, 4, 8), 3, k=(3, 3), bias=False, zp=(100, 0),
         expect=CWF),
    # DEPTHWISE_CONV_2D 3x3
    Spec("dw_dscnn", "dw", (1, 25, 5, 64), 64, k=(3, 3), zp=(-128, 0), act=Activation.RELU,
         expect=DWL),
    Spec("dw_c5", "dw", (1, 6, 7, 5), 5, k=(3, 3), zp=(3, -4), expect=DWL),
    Spec("dw_c1", "dw", (1, 4, 4, 1), 1, k=(3, 3), zp=(-128, 127), expect=DW1),
    Spec("dw_c7_valid", "dw", (1, 5, 6, 7), 7, k=(3, 3), padding=Padding.VALID,
         zp=(127, 0), expect=DWL),
    Spec("dw_stride2", "dw", (1, 9, 8, 12), 12, k=(3, 3), stride=(2, 2), zp=(-9, 9),
         expect=DW),
    Spec("dw_stride3_1", "dw", (2, 7, 5, 9), 9, k=(3, 3), stride=(3, 1), zp=(20, 1),
         act=Activation.RELU6, expect=DWG),
    Spec("dw_dilated", "dw", (1, 9, 8, 6), 6, k=(3, 3), dilation=(2, 3), zp=(-128, 4),
         expect=DWG),
    Spec("dw_dilated_valid", "dw", (1, 9, 9, 4), 4, k=(3, 3), dilation=(3, 2), stride=(2, 1),
         padding=Padding.VALID, zp=(11, 0), expect=DW),
    Spec("dw_c64_stride2", "dw", (1, 10, 9, 64), 64, k=(3, 3), stride=(2, 2), zp=(-128, -1),
         act=Activation.RELU6, expect=DW),
    Spec("dw_tiny", "dw", (1, 1, 2, 6), 6, k=(3, 3), zp=(-128, -128), expect=DWG),
    # the unrolled 3x3 kernel (its asm path on the device: the rounding form into all of
    # int8): stride above the kernel, every tap but the centre padded, zero points at both
    # ends, a clamped activation (the C path), batches with dilation, one-pixel-high input,
    # saturating outputs (those the lines kernel's cost model now takes run on the unrolled
    # kernel again in `test_displaced_cases_on_their_own_kernels`)
    Spec("dw3_stride_gt_k", "dw", (1, 11, 10, 8), 8, k=(3, 3), stride=(4, 4), zp=(-5, 7),
         expect=DW),
    Spec("dw3_all_padding", "dw", (1, 1, 1, 4), 4, k=(3, 3), zp=(60, -60), expect=DW),
    Spec("dw3_zp_hi", "dw", (1, 4, 6, 12), 12, k=(3, 3), zp=(127, 127), expect=DWL),
    Spec("dw3_zp_lo", "dw", (1, 5, 4, 20), 20, k=(3, 3), zp=(-128, -128), expect=DWL),
    Spec("dw3_relu6_c16", "dw", (1, 6, 5, 16), 16, k=(3, 3), zp=(3, -20),
         act=Activation.RELU6, expect=DWL),
    Spec("dw3_batch2_dil", "dw", (2, 7, 6, 12), 12, k=(3, 3), dilation=(2, 1), zp=(-40, 2),
         expect=DW),
    Spec("dw3_row", "dw", (1, 1, 9, 8), 8, k=(3, 3), stride=(1, 2), zp=(0, 0), expect=DW),
    Spec("dw3_saturating", "dw", (1, 5, 5, 8), 8, k=(3, 3), zp=(-128, 0), out_scale=0.004,
         expect=DWL),
    # (no bias-less depthwise case: the tflite-micro oracle crashes on one)
    Spec("dw_smallbias", "dw", (1, 5, 5, 8), 8, k=(3, 3), bias_scale=3, zp=(-30, 0),
         expect=DWL),
    # DEPTHWISE_CONV_2D, any kernel (general kernel) and one input channel (as a conv)
    Spec("dw_5x5", "dw", (1, 6, 6, 4), 4, k=(5, 5), zp=(-3, 2), expect=DWG),
    Spec("dw_1x7_c10", "dw", (1, 5, 9, 10), 10, k=(1, 7), stride=(1, 2), zp=(50, -7),
         act=Activation.RELU, expect=DWG),
    Spec("dw_4x2_stride_gt_k", "dw", (1, 11, 9, 8), 8, k=(4, 2), stride=(5, 3), zp=(-1, 1),
         expect=DWG),
    Spec("dw_2x3_dilated_c13", "dw", (1, 9, 10, 13), 13, k=(2, 3), dilation=(3, 2),
         padding=Padding.VALID, zp=(-128, 9), expect=DWG),
    Spec("dw_microspeech", "dw", (1, 49, 40, 1), 8, k=(10, 8), stride=(2, 2), zp=(-128, -128),
         act=Activation.RELU, expect=DW1),
    Spec("dw_c1_mult3_dilated", "dw", (1, 8, 7, 1), 3, k=(3, 2), dilation=(2, 2),
         padding=Padding.VALID, zp=(5, -2), expect=DW1),
    Spec("dw_c1_mult5_stride3", "dw", (2, 9, 8, 1), 5, k=(2, 2), stride=(3, 3), zp=(127, 0),
         expect=DW1),
    # one-channel kernel: row tails of 1, 2 and 3 taps, whole and partial channel groups,
    # dilation along either axis, stride above the kernel, saturating multipliers
    Spec("dw_c1_m8_k5x10", "dw", (1, 12, 23, 1), 8, k=(5, 10), zp=(-7, 3), expect=DW1),
    Spec("dw_c1_m4_k3x7_s2", "dw", (1, 9, 11, 1), 4, k=(3, 7), stride=(1, 2), zp=(100, -5),
         act=Activation.RELU6, expect=DW1),
    Spec("dw_c1_m6_k4x9_valid", "dw", (1, 10, 13, 1), 6, k=(4, 9), padding=Padding.VALID,
         zp=(-128, 127), act=Activation.RELU, expect=DW1),
    Spec("dw_c1_m12_k3x5_dil_h", "dw", (1, 11, 9, 1), 12, k=(3, 5), dilation=(3, 1),
         zp=(1, -1), expect=DW1),
    Spec("dw_c1_m8_k2x6_dil_w", "dw", (2, 7, 15, 1), 8, k=(2, 6), dilation=(1, 2),
         stride=(2, 1), zp=(-60, 60), expect=DW1),
    Spec("dw_c1_m4_stride_gt_k", "dw", (1, 13, 17, 1), 4, k=(2, 3), stride=(4, 5),
         zp=(33, 0), expect=DW1),
    Spec("dw_c1_m8_shift_pos", "dw", (1, 6, 9, 1), 8, k=(3, 4), zp=(-128, 0),
         out_scale=0.00003, octaves=2, expect=DW1),
    Spec("dw_c1_m4_k1x1", "dw", (1, 3, 5, 1), 4, k=(1, 1), zp=(-128, -128), expect=DW1),
    # the general requantization (shifts >= 0: multipliers above 1) and huge biases
    Spec("pw_shift_pos", "conv", (1, 3, 4, 12), 6, zp=(-9, 3), out_scale=0.00005, octaves=1,
         expect=C1),
    Spec("cv_shift_pos", "conv", (1, 5, 5, 2), 4, k=(3, 3), zp=(4, -4), out_scale=0.00001,
         octaves=1, expect=CG),
    Spec("dw_shift_pos", "dw", (1, 5, 5, 8), 8, k=(3, 3), zp=(-128, 0), out_scale=0.00003,
         octaves=2, expect=DW),
    Spec("dwg_shift_pos", "dw", (1, 5, 5, 6), 6, k=(2, 2), zp=(17, 0), out_scale=0.00003,
         octaves=2, expect=DWG),
    # the 3x3 lines kernel where its cost model picks it: VALID on odd sizes with batches,
    # lines along the columns with a clamped activation, the longest line that fits its
    # stack (61 outputs: 64 values) and one longer (the unrolled kernel); shifts >= 0 (no
    # rounding form: not the lines kernel) on 5 channels
    Spec("dwl_valid_b2", "dw", (2, 7, 9, 3), 3, k=(3, 3), padding=Padding.VALID,
         zp=(-128, 5), expect=DWL),
    Spec("dwl_relu6_cols", "dw", (1, 9, 6, 10), 10, k=(3, 3), zp=(3, -20),
         act=Activation.RELU6, expect=DWL),
    Spec("dwl_longest_line", "dw", (1, 2, 61, 4), 4, k=(3, 3), zp=(7, 7), expect=DWL),
    Spec("dwl_too_long", "dw", (1, 2, 62, 4), 4, k=(3, 3), zp=(7, 7), expect=DW),
    Spec("dwl_shift_pos_c5", "dw", (1, 7, 3, 5), 5, k=(3, 3), zp=(-128, 0),
         out_scale=0.00003, octaves=2, expect=DWG),
    Spec("fc_shift_pos", "fc", (1, 40), 5, zp=(-128, 0), out_scale=0.00001, octaves=1,
         expect=FC),
    Spec("pw_bias_2p30", "conv", (1, 2, 2, 8), 4, zp=(0, 0), bias_scale=3 << 29,
         expect=C1),
    # AVERAGE_POOL_2D over the whole image: runs of 255 pixels, channel tails, activations
    Spec("gap_dscnn", "gap", (1, 25, 5, 64), 64, padding=Padding.VALID, zp=(-128, -128),
         expect=GAP),
    Spec("gap_big_odd_c", "gap", (2, 20, 19, 7), 7, padding=Padding.SAME, zp=(5, 5),
         act=Activation.RELU, expect=GAP),
    Spec("gap_c3_relu6", "gap", (1, 3, 1, 3), 3, padding=Padding.VALID, zp=(-1, -1),
         act=Activation.RELU6, expect=GAP),
    # FULLY_CONNECTED
    Spec("fc_microspeech", "fc", (1, 4000), 4, zp=(-128, 0), expect=FC),
    Spec("fc_odd_depth_deep", "fc", (2, 1023), 3, zp=(77, -1), expect=FC),
    Spec("fc_dscnn", "fc", (1, 64), 12, zp=(-128, 3), expect=FC),
    Spec("fc_odd", "fc", (1, 13), 7, zp=(127, -128), expect=FC),
    Spec("fc_batch3", "fc", (3, 22), 5, zp=(-5, 7), expect=FC),
    Spec("fc_batch2_relu", "fc", (2, 8), 4, zp=(-128, -128), act=Activation.RELU, expect=FC),
    Spec("fc_depth1", "fc", (4, 1), 3, zp=(10, 0), expect=FC),
    Spec("fc_nobias", "fc", (1, 300), 2, bias=False, zp=(-100, 0), expect=FC),
    # no bias (the offset stays in the kernel's widening) with whole groups of four rows,
    # batches, a partial group and extreme zero points; a bias near the int32 limits
    Spec("fc_nobias_groups", "fc", (2, 64), 10, bias=False, zp=(127, 5), expect=FC),
    Spec("fc_nobias_zp_min", "fc", (1, 128), 8, bias=False, zp=(-128, -128),
         act=Activation.RELU, expect=FC),
    Spec("fc_bigbias_groups", "fc", (1, 96), 8, zp=(-128, 0), bias_scale=1 << 24,
         octaves=12, expect=FC),
)


# ---- harness plumbing ---------------------------------------------------------------------

def host_selection(sel: Selection) -> Selection:
    """``sel`` with header files dropped from the variants' sources: the firmware project
    copies them, the host harness compiles every listed source as a translation unit."""
    return Selection(tuple(
        replace(c, variant=replace(c.variant, sources=tuple(
            s for s in c.variant.sources if s.endswith(".c"))))
        for c in sel.choices))


def arm_headers_digest() -> str:
    h = hashlib.sha256()
    for p in sorted((FIRMWARE_DIR / "kernels" / "arm").glob("*.h")):
        h.update(p.name.encode() + p.read_bytes())
    return h.hexdigest()[:16]


@pytest.fixture(scope="module")
def harness_cache() -> Iterator[Path]:
    """A harness object cache keyed by the kernels/arm headers too (the harness keys objects
    by the source and the shared headers only), so an edited td_simd.h is never stale."""
    old = os.environ.get("TD_HARNESS_CACHE")
    path = cache_dir() / f"arm-{arm_headers_digest()}"
    path.mkdir(parents=True, exist_ok=True)
    os.environ["TD_HARNESS_CACHE"] = str(path)
    yield path
    if old is None:
        del os.environ["TD_HARNESS_CACHE"]
    else:
        os.environ["TD_HARNESS_CACHE"] = old


@dataclass
class _Results:
    models: dict[str, bytes]
    selections: dict[str, Selection]
    outputs: dict[str, list[tuple[str, np.ndarray, np.ndarray]]]


@pytest.fixture(scope="module")
def results(harness_cache: Path) -> _Results:
    """Every spec built, selected for the dsp board and run on the host in one program."""
    models, sels, flat = {}, {}, []
    for s in SPECS:
        model = build_model(s)
        g = load_tflite(model)
        sel = select_kernels(g, DSP_BOARD)
        models[s.id], sels[s.id] = model, sel
        for name, arr in input_sets(g, s.seed):
            flat.append((s.id, name, arr, HostCase(g, (arr,), host_selection(sel))))
    outs = run_host([f[3] for f in flat])
    res: dict[str, list[tuple[str, np.ndarray, np.ndarray]]] = {}
    for (sid, name, arr, _), o in zip(flat, outs, strict=True):
        res.setdefault(sid, []).append((name, arr, o[0]))
    return _Results(models, sels, res)


def mismatch(actual: np.ndarray, expected: np.ndarray) -> str:
    diff = np.argwhere(actual != expected)
    lines = [f"{len(diff)} of {actual.size} values differ (position: actual / expected):"]
    for pos in diff[:8]:
        p = tuple(int(i) for i in pos)
        lines.append(f"  {p}: {actual[p]} / {expected[p]}")
    return "\n".join(lines)


@pytest.mark.parametrize("spec", SPECS, ids=[s.id for s in SPECS])
def test_dsp_kernel_matches_oracle(spec: Spec, results: _Results) -> None:
    sel = results.selections[spec.id]
    chosen = sel.choices[0].variant
    assert chosen.symbol == spec.expect, (
        f"{spec.id}: selected {chosen.symbol}, expected {spec.expect}")
    failures = []
    for name, arr, got in results.outputs[spec.id]:
        expected = run_oracle(results.models[spec.id], [arr])[0]
        if got.shape != expected.shape or not np.array_equal(got, expected):
            failures.append(f"input set '{name}': {mismatch(got, expected)}")
    assert not failures, f"{spec.id} ({spec})\n" + "\n".join(failures)


# ---- selection and host-side folding ------------------------------------------------------

def test_fallback_to_reference_for_unhandled_shapes() -> None:
    """Shapes outside the dsp kernels' range get the portable optimised kernel (the dsp
    variants decline with the reason)."""
    cases = [
        (Spec("dw_mult2", "dw", (1, 5, 5, 3), 6, k=(3, 3)), "td_dwconv2d_s8_opt",
         "depth multiplier"),
    ]
    for spec, symbol, reason in cases:
        g = load_tflite(build_model(spec))
        assert select_kernels(g, DSP_BOARD).choices[0].variant.symbol == symbol, spec.id
        why = arm_dsp.DWCONV2D_3X3_S8_DSP.accepts(g, g.operators[0])
        assert why is not None and reason in why, (spec.id, why)


def test_requant_form_follows_the_proof() -> None:
    """The rounding form is chosen exactly where every channel shifts right and the
    accumulator bound fits (fixedpoint.rounding_form_holds); the shift >= 0 and 2^30-bias
    cases keep the general path, the DS-CNN-like shapes get the rounding form."""
    by_id = {s.id: s for s in SPECS}
    general = ("pw_shift_pos", "cv_shift_pos", "dw_shift_pos", "dwg_shift_pos",
               "fc_shift_pos", "pw_bias_2p30", "c1_shift_pos")
    rounding = ("pw_dscnn", "cv_dscnn0", "c1_odd_oc_valid", "dw_dscnn", "fc_dscnn",
                "dw_microspeech", "dw_5x5", "fc_microspeech")
    for sid in general + rounding:
        g = load_tflite(build_model(by_id[sid]))
        call = select_kernels(g, DSP_BOARD).choices[0].call
        assert call is not None
        assert call.param("requant_form") == (0 if sid in general else 1), sid


def test_no_dsp_feature_selects_portable_or_reference() -> None:
    g = load_tflite(build_model(SPECS[0]))
    assert select_kernels(g, get_board("microbit-v1")).choices[0].variant.impl == "opt"
    assert select_kernels(g, None).choices[0].variant.impl == "ref"


def test_folded_bias_is_exact_modulo_2_32() -> None:
    """bias + off * sum(w) (the folded bias of the mve kernels and the dsp FC) equals the
    reference's per-tap offset sum for every input."""
    rng = np.random.default_rng(7)
    for off in (-127, 128, 0, 37):
        w = rng.integers(-128, 128, size=(5, 300))
        bias = rng.integers(-(1 << 31), 1 << 31, size=5)
        folded = arm_dsp.fold_bias(w.astype(np.int8), bias, off).astype(np.int64)
        x = rng.integers(-128, 128, size=300)
        ref = ((x + off) * w).sum(axis=1) + bias
        ours = (x * w).sum(axis=1) + folded
        assert np.array_equal(arm_dsp.wrap_int32(ref), arm_dsp.wrap_int32(ours)), off


def test_dsp_weights_are_the_models_bytes(results: _Results) -> None:
    """Every dsp call stores exactly the reference's filter bytes (int8, no widening, no
    padding): the weight flash of the default build equals the model's int8 weights."""
    for spec in SPECS:
        if spec.kind == "gap":
            continue
        graph = load_tflite(build_model(spec))
        ref = select_kernels(graph, None).choices[0].call
        dsp = select_kernels(graph, DSP_BOARD).choices[0].call
        assert ref is not None and dsp is not None
        a, b = ref.const("filter").values, dsp.const("filter").values
        assert b.dtype == np.int8 and a.size == b.size, spec.id
        assert sorted(a.tolist()) == sorted(b.tolist()), spec.id
        # the declared budget: no more constant bytes than the reference, an estimate
        assert dsp.const_bytes == ref.const_bytes, spec.id
        assert dsp.instructions > 0, spec.id


# ---- randomized sweep (--sweep) -----------------------------------------------------------

def random_specs(n: int, seed: int) -> list[Spec]:
    """``n`` random single-op specs that the dsp kernels accept (shapes, strides, dilation,
    padding, zero points, activations, bias ranges all drawn at random)."""
    rng = np.random.default_rng(seed)
    acts = (Activation.NONE, Activation.RELU, Activation.RELU6, Activation.RELU_N1_TO_1)
    specs = []
    for i in range(n):
        kind = ("pw", "conv", "dw", "fc")[i % 4]
        zp = (int(rng.choice([-128, 127, int(rng.integers(-128, 128))])),
              int(rng.integers(-128, 128)))
        common = dict(zp=zp, act=acts[int(rng.integers(0, 4))], seed=1000 + i,
                      bias=bool(rng.random() < 0.85) or kind == "dw",
                      bias_scale=int(2 ** rng.integers(2, 25)),
                      octaves=int(rng.integers(0, 14)))
        pad = Padding.SAME if rng.random() < 0.6 else Padding.VALID
        if kind == "fc":
            specs.append(Spec(f"rnd{i}_fc", "fc", (int(rng.integers(1, 5)),
                                                   int(rng.integers(1, 140))),
                              int(rng.integers(1, 20)), expect=FC, **common))  # type: ignore
            continue
        n_, c = int(rng.integers(1, 3)), int(rng.integers(1, 40))
        h, w = int(rng.integers(1, 13)), int(rng.integers(1, 13))
        stride = (int(rng.integers(1, 4)), int(rng.integers(1, 4)))
        if kind == "pw":
            specs.append(Spec(f"rnd{i}_pw", "conv", (n_, h, w, c), int(rng.integers(1, 40)),
                              stride=stride, padding=pad, expect=C1, **common))  # type: ignore
            continue
        k = (int(rng.integers(1, 6)), int(rng.integers(1, 6)))
        if kind == "dw" and rng.random() < 0.5:
            k = (3, 3)
        mult = 1
        if kind == "dw" and rng.random() < 0.25:
            c, mult = 1, int(rng.integers(1, 9))
        if kind == "conv" and k == (1, 1):
            k = (1, 2)
        if kind == "conv" and i % 8 == 1:   # every other conv: the one-channel kernel
            c, k = 1, (k[0], 4)
        dil = (int(rng.integers(1, 3)), int(rng.integers(1, 3))) if rng.random() < 0.3 \
            else (1, 1)
        if pad == Padding.VALID:   # keep the output non-empty
            h = max(h, (k[0] - 1) * dil[0] + 1)
            w = max(w, (k[1] - 1) * dil[1] + 1)
        oc = c * mult if kind == "dw" else int(rng.integers(1, 24))
        specs.append(Spec(f"rnd{i}_{kind}", "conv" if kind == "conv" else "dw",
                          (n_, h, w, c), oc, k=k, stride=stride, dilation=dil, padding=pad,
                          expect=conv_symbol(c, k, dil[1]) if kind == "conv"
                          else dw_symbol(c, k, mult),
                          **common))  # type: ignore
    return [lines_or(sp) for sp in specs]


def check_specs(specs: list[Spec], select: Callable[[Graph], Selection] | None = None
                ) -> None:
    """Select (``select``, default: the dsp board's selection, which must take each spec's
    expected kernel), run on the host in one program, compare with the oracle; report all
    failures."""
    flat, models = [], {}
    for s in specs:
        model = build_model(s)
        g = load_tflite(model)
        if select is None:
            sel = select_kernels(g, DSP_BOARD)
            assert sel.choices[0].variant.symbol == s.expect, s
        else:
            sel = select(g)
        models[s.id] = model
        for name, arr in input_sets(g, s.seed):
            flat.append((s, name, arr, HostCase(g, (arr,), host_selection(sel))))
    outs = run_host([f[3] for f in flat])
    failures = []
    for (s, name, arr, _), o in zip(flat, outs, strict=True):
        expected = run_oracle(models[s.id], [arr])[0]
        if not np.array_equal(o[0], expected):
            failures.append(f"{s.id} {name} ({s}):\n{mismatch(o[0], expected)}")
    assert not failures, f"{len(failures)} failures:\n" + "\n".join(failures[:10])


def test_dsp_random_cases(harness_cache: Path) -> None:
    check_specs(random_specs(40, seed=7))


@pytest.mark.slow
def test_dsp_random_sweep(harness_cache: Path) -> None:
    check_specs(random_specs(400, seed=2024))


# ---- the 3x3 lines kernel on shapes its cost model leaves to other kernels -----------------

# edge shapes, run with the lines kernel put in place of the selected one: one-pixel and
# two-pixel widths, lines along the columns, stride 2 along and across, odd sizes, VALID, a
# single pixel (every tap but the centre padded), zero points at both ends, a clamped
# activation, saturating outputs, small biases; plus the declared specs of those kinds
LINES_EDGE_SPECS: tuple[Spec, ...] = (
    Spec("dwl_w1", "dw", (1, 7, 1, 5), 5, k=(3, 3), zp=(-60, 3)),
    Spec("dwl_w2_s2", "dw", (1, 2, 9, 6), 6, k=(3, 3), stride=(1, 2), zp=(90, -2)),
    Spec("dwl_tall_s21", "dw", (1, 11, 3, 7), 7, k=(3, 3), stride=(2, 1), zp=(-1, 0)),
    Spec("dwl_s2_valid_odd", "dw", (1, 8, 7, 9), 9, k=(3, 3), stride=(2, 2),
         padding=Padding.VALID, zp=(127, -128), act=Activation.RELU),
    Spec("dwl_h1_s2_b2", "dw", (2, 1, 5, 3), 3, k=(3, 3), stride=(2, 2), zp=(-128, 127)),
    # the longest stride-2 line (30 outputs: 62 values), the largest shifts (e up to 26) with
    # biases near 2^28, multipliers over 10 octaves with the input zero point at 127
    Spec("dwl_s2_longest", "dw", (1, 3, 60, 4), 4, k=(3, 3), stride=(2, 2), zp=(5, -9)),
    Spec("dwl_shift_big", "dw", (1, 6, 13, 8), 8, k=(3, 3), zp=(-128, 3), out_scale=3000.0,
         octaves=3, bias_scale=1 << 28),
    Spec("dwl_octaves", "dw", (1, 9, 10, 12), 12, k=(3, 3), zp=(127, -128), octaves=10),
) + tuple(s for s in SPECS if s.id in (
    "dw_c7_valid", "dw_stride2", "dw_c64_stride2", "dw_tiny", "dw3_all_padding", "dw3_zp_hi",
    "dw3_zp_lo", "dw3_relu6_c16", "dw3_row", "dw3_saturating", "dw_smallbias"))


def lines_selection(g: Graph) -> Selection:
    """The dsp board's selection of the one-op ``g`` with the lines kernel in its place."""
    return selection_with(DWL)(g)


def test_lines_kernel_on_edge_shapes_matches_oracle(harness_cache: Path) -> None:
    for s in LINES_EDGE_SPECS:
        g = load_tflite(build_model(s))
        why = arm_dsp.DWCONV2D_3X3_LINES_S8_DSP.accepts(g, g.operators[0])
        assert why is None or why.startswith("estimated"), (s.id, why)
    check_specs(list(LINES_EDGE_SPECS), lines_selection)


# declared cases of the unrolled and the general kernel whose selection the lines kernel's
# cost model now takes: run again with the kernel they were written for in its place
DISPLACED: dict[str, str] = {"dw_c7_valid": DWG, "dw3_zp_hi": DW, "dw3_zp_lo": DW,
                             "dw3_relu6_c16": DW, "dw3_saturating": DW, "dw_smallbias": DW}


def selection_with(symbol: str) -> Callable[[Graph], Selection]:
    """The dsp board's selection of a one-op graph with the variant ``symbol`` in the
    selected one's place."""
    def select(g: Graph) -> Selection:
        sel = select_kernels(g, DSP_BOARD)
        c = sel.choices[0]
        v = variant_by_symbol(c.variant.op, symbol)
        return Selection((replace(c, variant=v, call=v.prepare(g, g.operators[0])),))
    return select


def test_displaced_cases_on_their_own_kernels(harness_cache: Path) -> None:
    for symbol in sorted(set(DISPLACED.values())):
        specs = [s for s in SPECS if DISPLACED.get(s.id) == symbol]
        assert len(specs) == sum(v == symbol for v in DISPLACED.values()), symbol
        for s in specs:
            assert s.expect == DWL, s.id
        check_specs(specs, selection_with(symbol))


def test_lines_kernel_where_its_cost_model_is_lower() -> None:
    """The DS-CNN's 25x5x64 layer, long lines and the VWW-like 6x6x128 and 24x24x32
    stride-2 layers get the lines kernel; VWW's 3x3x256 layer and a 6x6x128 stride-2 one
    (short lines: the per-channel cost dominates) keep the unrolled kernel, with the two
    estimates in the reason."""
    cases = (((1, 25, 5, 64), (1, 1), DWL), ((1, 48, 48, 8), (1, 1), DWL),
             ((1, 6, 6, 128), (1, 1), DWL), ((1, 24, 24, 32), (2, 2), DWL),
             ((1, 3, 3, 256), (1, 1), DW), ((1, 6, 6, 128), (2, 2), DW))
    for shape, stride, want in cases:
        s = Spec("dwl_cost", "dw", shape, shape[3], k=(3, 3), stride=stride, zp=(-128, 0))
        g = load_tflite(build_model(s))
        assert select_kernels(g, DSP_BOARD).choices[0].variant.symbol == want, shape
        why = arm_dsp.DWCONV2D_3X3_LINES_S8_DSP.accepts(g, g.operators[0])
        assert (why is None) == (want == DWL), (shape, why)
        if why is not None:
            assert "the unrolled kernel's" in why, why


# ---- the 3x3 kernel on widened weights (td_dwconv2d_3x3_wide_s8_dsp) ----------------------

DWW = "td_dwconv2d_3x3_wide_s8_dsp"
# Chosen by cost alone, under --optimize speed (its constants exceed the reference's), so put
# in place of the selected kernel: 1 to 3 output rows, widths 1 to 7, 4 to 128 channels,
# VALID and SAME (the asm's left and right border columns; the C loop for padded rows and
# maps too narrow for both), batches with stride 2, dilation, a clamped activation (ReLU6,
# ReLU), zero points at both ends, the largest shifts with large biases, saturation,
# multipliers over 10 octaves
WIDE_SPECS: tuple[Spec, ...] = (
    Spec("dww_row5_c64", "dw", (1, 3, 7, 64), 64, k=(3, 3), padding=Padding.VALID,
         zp=(-128, 0), act=Activation.RELU),
    Spec("dww_row1_c4", "dw", (1, 3, 3, 4), 4, k=(3, 3), padding=Padding.VALID,
         zp=(127, -128)),
    Spec("dww_rows2_w7_c128", "dw", (1, 4, 9, 128), 128, k=(3, 3), padding=Padding.VALID,
         zp=(-3, 5), act=Activation.RELU6),
    Spec("dww_rows3_w6_c8", "dw", (1, 5, 8, 8), 8, k=(3, 3), padding=Padding.VALID,
         zp=(60, -60)),
    Spec("dww_row3_c12", "dw", (1, 3, 5, 12), 12, k=(3, 3), padding=Padding.VALID,
         zp=(0, 0)),
    Spec("dww_same_3x5_c64", "dw", (1, 3, 5, 64), 64, k=(3, 3), zp=(-128, -128),
         act=Activation.RELU),
    Spec("dww_same_w1", "dw", (1, 3, 1, 12), 12, k=(3, 3), zp=(9, 0)),
    Spec("dww_same_w2_c16", "dw", (1, 2, 2, 16), 16, k=(3, 3), zp=(-1, 1)),
    Spec("dww_same_s2_b2", "dw", (2, 5, 7, 12), 12, k=(3, 3), stride=(2, 2), zp=(-9, 9),
         act=Activation.RELU6),
    Spec("dww_dilated", "dw", (1, 7, 7, 8), 8, k=(3, 3), dilation=(2, 2), zp=(40, -3)),
    Spec("dww_shift_big", "dw", (1, 3, 6, 8), 8, k=(3, 3), padding=Padding.VALID,
         zp=(-128, 3), out_scale=3000.0, octaves=3, bias_scale=1 << 28),
    Spec("dww_saturating", "dw", (1, 3, 7, 16), 16, k=(3, 3), padding=Padding.VALID,
         zp=(-128, 0), out_scale=0.004),
    Spec("dww_octaves", "dw", (1, 4, 5, 20), 20, k=(3, 3), zp=(127, -128), octaves=10),
)
# without a bias (the tflite-micro oracle crashes on a bias-less depthwise): compared with
# the reference kernel instead
WIDE_NOBIAS_SPECS: tuple[Spec, ...] = (
    Spec("dww_nobias_row5", "dw", (1, 3, 7, 32), 32, k=(3, 3), padding=Padding.VALID,
         zp=(-128, 0), bias=False),
    Spec("dww_nobias_same", "dw", (1, 4, 5, 8), 8, k=(3, 3), zp=(17, -2), bias=False,
         act=Activation.RELU),
)
wide_selection = selection_with(DWW)


def test_wide_kernel_in_place_matches_oracle(harness_cache: Path) -> None:
    for s in WIDE_SPECS + WIDE_NOBIAS_SPECS:
        g = load_tflite(build_model(s))
        assert arm_dsp.DWCONV2D_3X3_WIDE_S8_DSP.accepts(g, g.operators[0]) is None, s.id
    widths = {load_tflite(build_model(s)).outputs[0].shape[2] for s in WIDE_SPECS}
    assert widths >= {1, 2, 3, 4, 5, 6, 7}, widths
    check_specs(list(WIDE_SPECS), wide_selection)


def test_wide_kernel_without_bias_matches_reference(harness_cache: Path) -> None:
    cases = []
    for s in WIDE_NOBIAS_SPECS:
        g = load_tflite(build_model(s))
        for _, arr in input_sets(g, s.seed):
            ref = select_kernels(g)      # no board: the reference kernels
            cases += [HostCase(g, (arr,), host_selection(ref)),
                      HostCase(g, (arr,), host_selection(wide_selection(g)))]
    outs = run_host(cases)
    for k in range(0, len(outs), 2):
        assert np.array_equal(outs[k + 1][0], outs[k][0]), mismatch(outs[k + 1][0], outs[k][0])


def test_wide_kernel_table_layout() -> None:
    """The host's table (`arm_dsp.wide_dw_table`), decoded as td_dwconv2d_3x3_wide_s8_dsp.c
    reads it, gives the model's weights doubled, the folded bias and the requantization."""
    rng = np.random.default_rng(3)
    c = 8
    taps = rng.integers(-128, 128, size=(9, c)).astype(np.int8)
    bias = rng.integers(-1000, 1000, size=c).astype(np.int32)
    mult = rng.integers(1 << 30, (1 << 31) - 1, size=c).astype(np.int32)
    shift = -rng.integers(1, 24, size=c).astype(np.int8)
    raw = arm_dsp.wide_dw_table(taps, bias, 37, mult, shift, -5)
    taps = taps.astype(np.int64)
    words = raw.view("<i4").reshape(c // 4, arm_dsp.DWW_GROUP_WORDS)
    lanes = raw.view("<i2").reshape(c // 4, 2 * arm_dsp.DWW_GROUP_WORDS)
    order = arm_dsp.DWW_TAPS
    for g in range(c // 4):
        for j in range(4):
            ch = 4 * g + j
            assert words[g, j] == 2 * (int(bias[ch]) + 37 * int(taps[:, ch].astype(int).sum()))
            for i in range(4):
                assert lanes[g, 2 * (4 + 4 * i + j)] == 2 * taps[order[2 * i], ch]
                assert lanes[g, 2 * (4 + 4 * i + j) + 1] == 2 * taps[order[2 * i + 1], ch]
            assert lanes[g, 2 * (20 + (j & 1)) + (j >> 1)] == 2 * taps[order[8], ch]
            e = -int(shift[ch])
            assert words[g, 22 + 2 * j] == mult[ch]
            assert words[g, 23 + 2 * j] == (2 * -5 + 1) * (1 << (e - 1))
            assert raw[g * 4 * arm_dsp.DWW_GROUP_WORDS + 120 + j] == e - 1


def test_wide_kernel_where_speed_takes_it() -> None:
    """Under --optimize speed the wide kernel takes the maps it is estimated fastest on: a
    streamed row (3x7x64 VALID, 12,200 instructions measured on the unrolled kernel, 8,640
    on it) and a 25x5x64 SAME layer whose ReLU clamps (output zero point 0: 240,920 on it,
    255,640 on the lines kernel), not the DS-CNN's 25x5x64 layer, whose ReLU is all of int8
    (output zero point -128: the lines kernel 161,720, 231,720 on it); balanced never takes
    it (its constants exceed the reference's); and it refuses with a reason what it cannot
    run."""
    from tinydeploy.plan.choose import choose_kernels

    cases = (((1, 3, 7, 64), Padding.VALID, 0, DWW), ((1, 5, 7, 32), Padding.VALID, 0, DWW),
             ((1, 25, 5, 64), Padding.SAME, 0, DWW), ((1, 25, 5, 64), Padding.SAME, -128, DWL))
    for shape, pad, zp_out, want in cases:
        s = Spec("dww_cost", "dw", shape, shape[3], k=(3, 3), padding=pad, zp=(-128, zp_out),
                 act=Activation.RELU)
        g = load_tflite(build_model(s))
        speed = choose_kernels(g, DSP_BOARD, "speed").selection.choices[0].variant.symbol
        assert speed == want, (shape, speed)
        balanced = choose_kernels(g, DSP_BOARD, "balanced").selection.choices[0].variant
        assert balanced.symbol != DWW, shape
    refused = ((Spec("dww_c6", "dw", (1, 3, 7, 6), 6, k=(3, 3)), "multiple of 4"),
               (Spec("dww_5x5", "dw", (1, 5, 7, 8), 8, k=(5, 5)), "3x3 required"),
               (Spec("dww_shift_pos", "dw", (1, 3, 7, 8), 8, k=(3, 3), out_scale=0.00001,
                     octaves=1), "rounding form"))
    for s, why in refused:
        g = load_tflite(build_model(s))
        reason = arm_dsp.DWCONV2D_3X3_WIDE_S8_DSP.accepts(g, g.operators[0])
        assert reason is not None and why in reason, (s.id, reason)


# ---- the one-channel kernel on the shapes the window kernel now takes -----------------------

# the declared one-input-channel, four-taps-wide specs (and the DS-CNN's first layer), run with
# the one-channel kernel put in place of the selected (window) kernel
C1_SPECS: tuple[Spec, ...] = tuple(s for s in SPECS if s.id == "cv_dscnn0"
                                   or s.id.startswith("c1_"))
c1_selection = selection_with(CC1)


def test_c1_kernel_in_place_matches_oracle(harness_cache: Path) -> None:
    for s in C1_SPECS:
        g = load_tflite(build_model(s))
        assert arm_dsp.CONV2D_C1_S8_DSP.accepts(g, g.operators[0]) is None, s.id
    assert len(C1_SPECS) >= 9
    check_specs(list(C1_SPECS), c1_selection)


# ---- partial groups of the pointwise product (every group size) ---------------------------

# Pixel counts whose last group of TD_GEMM_ROWS (6) is every size from 1 to 6 (13 = 2 x 6 + 1,
# 11 = 6 + 5): a partial group runs the five-row product (td_pw_rows_for) under the
# branch-free requantization, the six-row one otherwise.
PARTIAL_PIXELS = (1, 2, 3, 4, 5, 6, 7, 11, 13)


def partial_group_specs() -> tuple[Spec, ...]:
    """Per pixel count of `PARTIAL_PIXELS`: the pointwise kernel at the DS-CNN's depth (the
    assembly loop over every channel), at depth 13 (one channel per call on a row copy;
    without bias every other count), at depth 61 (the copy fits before five rows, not six:
    the C product for full groups) and with a clamped activation (the C product), pixels
    along a row, a column or batches; and the window kernel on the DS-CNN's first layer
    (10x4 on one channel, VALID: one output row of n pixels) and a 2x2x4 window."""
    specs = []
    for i, n in enumerate(PARTIAL_PIXELS):
        specs += [
            Spec(f"pg_pw64_px{n}", "conv", (1, 1, n, 64), 64 if n == 5 else 9,
                 zp=(-2 - 14 * i, 5 + i), seed=n, expect=C1),
            Spec(f"pg_pw13_px{n}", "conv", (1, n, 1, 13), 6, zp=(-128, 3), bias=n % 2 == 1,
                 seed=n, expect=C1),
            Spec(f"pg_pw61_px{n}", "conv", (n, 1, 1, 61), 5, zp=(127 - i, -1), seed=n,
                 expect=C1),
            Spec(f"pg_pw_relu6_px{n}", "conv", (1, 1, n, 8), 4, act=Activation.RELU6,
                 zp=(3, -100), seed=n, expect=C1),
            Spec(f"pg_cw40_px{n}", "conv", (1, 10, n + 3, 1), 8 if n != 5 else 64, k=(10, 4),
                 padding=Padding.VALID, zp=(-128 + 9 * i, -128), act=Activation.RELU,
                 seed=n, expect=CW),
            Spec(f"pg_cw16_px{n}", "conv", (1, 2, n + 1, 4), 7, k=(2, 2),
                 padding=Padding.VALID, zp=(60, -3), bias=n != 4, seed=n, expect=CW),
        ]
    return tuple(specs)


PARTIAL_SPECS = partial_group_specs()


def test_partial_groups_match_oracle(harness_cache: Path) -> None:
    """Every group size of the pointwise and window kernels' product against the oracle
    (the host's C twin of the channel loops; the device tier runs the assembly)."""
    sizes = set()
    for s in PARTIAL_SPECS:
        g = load_tflite(build_model(s))
        call = select_kernels(g, DSP_BOARD).choices[0].call
        assert call is not None
        pixels = arm_dsp.output_pixels(call)
        assert pixels in PARTIAL_PIXELS, s.id
        sizes.add(pixels % arm_dsp.GEMM_ROWS or arm_dsp.GEMM_ROWS)
    assert sizes == set(range(1, arm_dsp.GEMM_ROWS + 1))
    check_specs(list(PARTIAL_SPECS))


def test_cost_model_twins_equal_the_c_constants() -> None:
    """The row counts and depth the cost models assume are td_gemm_s8_dsp.h's."""
    header = (FIRMWARE_DIR / "kernels" / "arm" / "td_gemm_s8_dsp.h").read_text()
    defined = {m[1]: int(m[2]) for m in re.finditer(r"^#define (TD_\w+) (\d+)$", header, re.M)}
    assert defined["TD_GEMM_ROWS"] == arm_dsp.GEMM_ROWS
    assert defined["TD_PW_SHORT_ROWS"] == arm_dsp.PW_SHORT_ROWS
    assert defined["TD_IM2COL_ROWS"] == arm_dsp.GEMM_ROWS_IM2COL
    assert defined["TD_GEMM_STACK_DEPTH"] == arm_dsp.PW_STACK_DEPTH


def test_pointwise_estimate_follows_partial_groups() -> None:
    """The cost model prices a call of fewer than six pixels at its five rows: a 5-pixel
    pointwise call (a streamed DS-CNN row, 64 -> 64) about 5/6 of a 6-pixel one, 1 pixel as
    5 (its row widened five times); 11 pixels as two groups of six (a larger call's last
    group runs the six-row loop: builds with only such calls leave the five-row loop out);
    the C product (a clamped activation) stays linear in the pixels."""
    def est(n: int, act: Activation = Activation.NONE) -> int:
        s = Spec("est", "conv", (1, 1, n, 64), 64, zp=(-2, 5), act=act)
        g = load_tflite(build_model(s))
        call = select_kernels(g, DSP_BOARD).choices[0].call
        assert call is not None and call.symbol == C1
        return call.instructions

    five, six = est(5), est(6)
    assert 0.80 < five / six < 0.87, (five, six)
    assert est(11) == 2 * six - 300     # a larger call's last group: the six-row loop
    assert est(1) == five
    relu6 = [est(n, Activation.RELU6) - 300 for n in (5, 6)]
    assert relu6[0] * 6 == relu6[1] * 5


# ---- the frame-only matrix product (td_conv2d_frame_s8_dsp) ------------------------------

# layers whose four rows of work need scratch, run with the frame kernel (three, two or one
# row per pass, no scratch) put in place of the selected one: pointwise depths that leave
# three rows (100, 128), two (160) and one (259), im2col windows of three rows (3x3x8, and
# 3x3x9 with a partial last block) and one (3x3x16, a ResNet layer), odd pixel counts,
# batches, stride 2, a clamped activation, no bias, positive shifts, zero points at both ends
FRAME_SPECS: tuple[Spec, ...] = (
    Spec("fr_pw100", "conv", (1, 3, 5, 100), 7, zp=(-128, 3), expect=CWF),
    Spec("fr_pw128_b2", "conv", (2, 5, 1, 128), 9, zp=(11, -128), expect=CWF),
    Spec("fr_pw128_square", "conv", (1, 4, 5, 128), 128, zp=(3, -3), expect=CWF),
    Spec("fr_pw160_s2", "conv", (1, 5, 6, 160), 5, stride=(2, 2), zp=(127, 0), expect=CWF),
    Spec("fr_3x3x8", "conv", (1, 7, 6, 8), 6, k=(3, 3), zp=(-9, 9), act=Activation.RELU6,
         expect=CWF),
    Spec("fr_3x3x9_valid", "conv", (1, 6, 7, 9), 4, k=(3, 3), padding=Padding.VALID,
         zp=(60, -2), bias=False, expect=CG),
    Spec("fr_3x3x16_s2", "conv", (1, 9, 8, 16), 5, k=(3, 3), stride=(2, 2), zp=(-128, 127),
         expect=CWF),
    Spec("fr_shift_pos", "conv", (1, 4, 3, 130), 3, zp=(2, -1), out_scale=0.00002, octaves=1,
         expect=CG),
) + tuple(s for s in SPECS if s.id == "pw_deep")
frame_selection = selection_with("td_conv2d_frame_s8_dsp")


def test_frame_kernel_in_place_matches_oracle(harness_cache: Path) -> None:
    rows = set()
    for s in FRAME_SPECS:
        g = load_tflite(build_model(s))
        op = g.operators[0]
        assert select_kernels(g, DSP_BOARD).choices[0].variant.symbol == s.expect, s.id
        assert arm_dsp.CONV2D_FRAME_S8_DSP.accepts(g, op) is None, s.id
        call = arm_dsp.CONV2D_FRAME_S8_DSP.prepare(g, op)
        assert call.scratch_bytes == 0
        rows.add(arm_dsp.conv_frame_rows(*arm_dsp._conv_shape(call)))
    assert rows == {1, 2, 3}
    check_specs(list(FRAME_SPECS), frame_selection)
