"""Golden cases of the core ops (CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED, AVERAGE_POOL_2D,
MAX_POOL_2D, SOFTMAX, RESHAPE, SQUEEZE), declared as data.

Each spec is a frozen dataclass; `build_*` turns it into a single-op model with
`tinydeploy.testing.builder` (weights and bias from the spec's seed, quantization exactly as
declared). Output scales are chosen from the expected accumulator spread so that most
outputs land inside int8 and the requantization, not only the clamp, is exercised; the
extreme input sets (all -128, all 127) exercise the clamp and the zero-point corners.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, replace

import numpy as np
from framework import GoldenCase, make_case

from tinydeploy.model.ir import (
    Activation,
    Conv2DOptions,
    DepthwiseConv2DOptions,
    FullyConnectedOptions,
    Padding,
    Pool2DOptions,
    ReshapeOptions,
    SoftmaxOptions,
    SqueezeOptions,
)
from tinydeploy.testing.builder import ModelBuilder

ACC_STD = 74.0 * 73.0     # std of one int8 x int8 product of uniform values


def _out_size(padding: str, size: int, k: int, stride: int, dilation: int) -> int:
    eff = (k - 1) * dilation + 1
    return (size + stride - 1) // stride if padding == "SAME" else (size + stride - eff) // stride


def _filter_scales(rng: np.random.Generator, channels: int, octaves: float,
                   per_channel: bool) -> list[float]:
    """Per-channel scales log-spread over ``octaves`` octaves (shuffled), or one scale."""
    base = 2.0 ** -8
    if not per_channel:
        return [base * float(rng.uniform(0.6, 1.6))]
    if channels == 1:
        return [base]
    ex = np.linspace(-octaves / 2, octaves / 2, channels)
    rng.shuffle(ex)
    return [float(base * 2.0 ** e * rng.uniform(0.9, 1.1)) for e in ex]


def _bias(rng: np.random.Generator, n: int, k: int) -> np.ndarray:
    spread = int(ACC_STD * math.sqrt(k) * 0.5) + 1
    return rng.integers(-spread, spread + 1, n).astype(np.int32)


# --- CONV_2D -------------------------------------------------------------------------------

@dataclass(frozen=True)
class ConvSpec:
    h: int
    w: int
    c: int
    oc: int
    kh: int
    kw: int
    stride: tuple[int, int] = (1, 1)
    dilation: tuple[int, int] = (1, 1)
    padding: str = "SAME"
    act: str = "NONE"
    in_zp: int = 0
    out_zp: int = 0
    octaves: float = 4.0
    per_channel: bool = True
    bias: bool = True
    batches: int = 1
    groups: int = 1
    seed: int = 0

    @property
    def id(self) -> str:
        return (f"conv_{self.batches}x{self.h}x{self.w}x{self.c}_k{self.kh}x{self.kw}"
                f"_o{self.oc}_s{self.stride[0]}{self.stride[1]}_d{self.dilation[0]}"
                f"{self.dilation[1]}_{self.padding}_{self.act}_z{self.in_zp},{self.out_zp}"
                f"_oct{self.octaves:g}{'' if self.per_channel else '_pt'}"
                f"{'' if self.bias else '_nobias'}_g{self.groups}_{self.seed}")


def build_conv(s: ConvSpec) -> bytes:
    rng = np.random.default_rng(s.seed)
    fc = s.c // s.groups
    oh = _out_size(s.padding, s.h, s.kh, s.stride[0], s.dilation[0])
    ow = _out_size(s.padding, s.w, s.kw, s.stride[1], s.dilation[1])
    in_scale = float(rng.uniform(0.01, 0.1))
    fs = _filter_scales(rng, s.oc, s.octaves, s.per_channel)
    k = s.kh * s.kw * fc
    out_scale = in_scale * float(np.median(fs)) * ACC_STD * math.sqrt(k) / 50.0
    b = ModelBuilder()
    x = b.tensor("input", (s.batches, s.h, s.w, s.c), "int8", scale=in_scale, zero_point=s.in_zp)
    w = b.tensor("filter", (s.oc, s.kh, s.kw, fc), "int8", scale=fs, axis=0,
                 data=rng.integers(-127, 128, s.oc * s.kh * s.kw * fc))
    inputs = [x, w]
    if s.bias:
        bs = [in_scale * f for f in fs]
        inputs.append(b.tensor("bias", (s.oc,), "int32", scale=bs, data=_bias(rng, s.oc, k)))
    else:
        inputs.append(-1)
    y = b.tensor("output", (s.batches, oh, ow, s.oc), "int8", scale=out_scale,
                 zero_point=s.out_zp)
    b.op("CONV_2D", inputs, [y], Conv2DOptions(
        padding=Padding[s.padding], stride_h=s.stride[0], stride_w=s.stride[1],
        activation=Activation[s.act], dilation_h=s.dilation[0], dilation_w=s.dilation[1]))
    return b.build([x], [y])


def conv_specs() -> list[ConvSpec]:
    S = ConvSpec
    specs = [
        S(1, 1, 1, 1, 1, 1),                                     # 1x1 everything
        S(1, 9, 3, 4, 1, 3),                                     # 1xN input, 1xN kernel
        S(1, 9, 3, 4, 1, 3, padding="VALID"),
        S(5, 1, 2, 3, 3, 1),                                     # Nx1
        S(8, 8, 3, 8, 3, 3),
        S(8, 8, 3, 8, 3, 3, padding="VALID"),
        S(7, 5, 5, 6, 2, 2),                                     # SAME with even kernel
        S(7, 5, 5, 6, 4, 2, stride=(2, 2)),
        S(6, 6, 4, 5, 2, 4, stride=(2, 1), padding="SAME"),
        S(9, 9, 3, 4, 2, 2, stride=(3, 3)),                      # stride > kernel
        S(9, 9, 3, 4, 1, 1, stride=(4, 3), padding="VALID"),
        S(9, 7, 3, 4, 3, 3, dilation=(2, 2)),
        S(10, 9, 2, 3, 3, 2, dilation=(3, 1), padding="VALID"),
        S(10, 9, 2, 3, 2, 3, dilation=(1, 2), stride=(2, 2)),
        S(6, 6, 7, 9, 3, 3),                                     # channels not multiple of 4
        S(5, 5, 13, 11, 1, 1),                                   # pointwise
        S(4, 4, 33, 17, 1, 1, padding="VALID"),
        S(6, 6, 3, 5, 3, 3, act="RELU"),
        S(6, 6, 3, 5, 3, 3, act="RELU6"),
        S(6, 6, 3, 5, 3, 3, act="RELU_N1_TO_1"),
        S(6, 6, 3, 5, 3, 3, act="RELU", out_zp=-128),
        S(6, 6, 3, 5, 3, 3, act="RELU6", out_zp=127),
        S(6, 6, 3, 5, 3, 3, in_zp=-128, out_zp=-128),
        S(6, 6, 3, 5, 3, 3, in_zp=127, out_zp=127),
        S(6, 6, 3, 5, 3, 3, in_zp=-128, out_zp=127),
        S(6, 6, 3, 5, 3, 3, in_zp=127, out_zp=-128),
        S(6, 6, 3, 16, 3, 3, octaves=20.0),                      # scales over 20 octaves
        S(6, 6, 3, 16, 3, 3, octaves=28.0, in_zp=-128),
        S(5, 5, 4, 6, 3, 3, per_channel=False),
        S(5, 5, 4, 6, 3, 3, per_channel=False, in_zp=10, out_zp=-5, act="RELU"),
        S(5, 5, 4, 6, 3, 3, bias=False),
        S(5, 5, 4, 6, 3, 3, batches=3),
        S(5, 5, 4, 6, 3, 3, batches=2, stride=(2, 2), padding="VALID"),
        S(6, 6, 4, 6, 3, 3, groups=2),                           # grouped convolution
        S(6, 6, 6, 9, 1, 3, groups=3, stride=(1, 2)),
        S(3, 3, 2, 2, 5, 5),                                     # kernel larger than input
        S(2, 3, 2, 2, 4, 4, stride=(2, 3)),
        S(12, 10, 8, 12, 5, 5, stride=(2, 2)),
        S(16, 16, 1, 8, 3, 3, stride=(2, 2), act="RELU6", in_zp=-128),
    ]
    rng = np.random.default_rng(1234)
    for i in range(12):   # a few random ones in the default run
        kh, kw = int(rng.integers(1, 5)), int(rng.integers(1, 5))
        specs.append(S(int(rng.integers(kh, 10)), int(rng.integers(kw, 10)),
                       int(rng.integers(1, 9)), int(rng.integers(1, 9)), kh, kw,
                       stride=(int(rng.integers(1, 4)), int(rng.integers(1, 4))),
                       dilation=(int(rng.integers(1, 3)), 1),
                       padding=str(rng.choice(["SAME", "VALID"])),
                       act=str(rng.choice(["NONE", "RELU", "RELU6"])),
                       in_zp=int(rng.integers(-128, 128)), out_zp=int(rng.integers(-128, 128)),
                       octaves=float(rng.uniform(0, 16)), seed=100 + i))
    return [s for s in specs if _valid_conv(s)]


def _valid_conv(s: ConvSpec) -> bool:
    return (_out_size(s.padding, s.h, s.kh, s.stride[0], s.dilation[0]) > 0
            and _out_size(s.padding, s.w, s.kw, s.stride[1], s.dilation[1]) > 0)


# --- DEPTHWISE_CONV_2D ---------------------------------------------------------------------

@dataclass(frozen=True)
class DwSpec:
    h: int
    w: int
    c: int
    mult: int
    kh: int
    kw: int
    stride: tuple[int, int] = (1, 1)
    dilation: tuple[int, int] = (1, 1)
    padding: str = "SAME"
    act: str = "NONE"
    in_zp: int = 0
    out_zp: int = 0
    octaves: float = 4.0
    per_channel: bool = True
    bias: bool = True
    batches: int = 1
    seed: int = 0

    @property
    def id(self) -> str:
        return (f"dw_{self.batches}x{self.h}x{self.w}x{self.c}_m{self.mult}_k{self.kh}x{self.kw}"
                f"_s{self.stride[0]}{self.stride[1]}_d{self.dilation[0]}{self.dilation[1]}"
                f"_{self.padding}_{self.act}_z{self.in_zp},{self.out_zp}_oct{self.octaves:g}"
                f"{'' if self.per_channel else '_pt'}{'' if self.bias else '_nobias'}"
                f"_{self.seed}")


def build_dw(s: DwSpec) -> bytes:
    rng = np.random.default_rng(s.seed)
    oc = s.c * s.mult
    oh = _out_size(s.padding, s.h, s.kh, s.stride[0], s.dilation[0])
    ow = _out_size(s.padding, s.w, s.kw, s.stride[1], s.dilation[1])
    in_scale = float(rng.uniform(0.01, 0.1))
    fs = _filter_scales(rng, oc, s.octaves, s.per_channel)
    k = s.kh * s.kw
    out_scale = in_scale * float(np.median(fs)) * ACC_STD * math.sqrt(k) / 50.0
    b = ModelBuilder()
    x = b.tensor("input", (s.batches, s.h, s.w, s.c), "int8", scale=in_scale, zero_point=s.in_zp)
    w = b.tensor("filter", (1, s.kh, s.kw, oc), "int8", scale=fs, axis=3,
                 data=rng.integers(-127, 128, s.kh * s.kw * oc))
    inputs = [x, w]
    if s.bias:
        inputs.append(b.tensor("bias", (oc,), "int32", scale=[in_scale * f for f in fs],
                               data=_bias(rng, oc, k)))
    else:
        inputs.append(-1)
    y = b.tensor("output", (s.batches, oh, ow, oc), "int8", scale=out_scale, zero_point=s.out_zp)
    b.op("DEPTHWISE_CONV_2D", inputs, [y], DepthwiseConv2DOptions(
        padding=Padding[s.padding], stride_h=s.stride[0], stride_w=s.stride[1],
        depth_multiplier=s.mult, activation=Activation[s.act],
        dilation_h=s.dilation[0], dilation_w=s.dilation[1]))
    return b.build([x], [y])


def dw_specs() -> list[DwSpec]:
    S = DwSpec
    specs = [
        S(1, 1, 1, 1, 1, 1),
        S(1, 8, 3, 1, 1, 3),
        S(6, 1, 5, 2, 3, 1, padding="VALID"),
        S(8, 8, 8, 1, 3, 3),
        S(8, 8, 8, 1, 3, 3, padding="VALID"),
        S(7, 6, 3, 2, 3, 3),                                     # depth multiplier 2
        S(7, 6, 3, 4, 2, 2),                                     # even kernel, multiplier 4
        S(7, 7, 5, 3, 3, 3, stride=(2, 2)),
        S(9, 9, 3, 1, 2, 2, stride=(3, 3)),                      # stride > kernel
        S(10, 8, 4, 1, 3, 3, dilation=(2, 2)),
        S(10, 8, 4, 2, 3, 2, dilation=(3, 2), padding="VALID"),
        S(6, 6, 7, 1, 3, 3, act="RELU"),
        S(6, 6, 7, 1, 3, 3, act="RELU6", out_zp=-128),
        S(6, 6, 7, 1, 3, 3, act="RELU_N1_TO_1"),
        S(6, 6, 6, 1, 3, 3, in_zp=-128, out_zp=127),
        S(6, 6, 6, 1, 3, 3, in_zp=127, out_zp=-128),
        S(6, 6, 6, 1, 3, 3, in_zp=-128, out_zp=-128),
        S(6, 6, 6, 2, 3, 3, octaves=24.0),
        S(5, 5, 16, 1, 3, 3, octaves=30.0, in_zp=-128),
        S(5, 5, 4, 1, 3, 3, per_channel=False),
        # no case without bias: this tflite-micro build crashes on a depthwise op whose
        # optional bias is absent, so there is no oracle for it
        S(5, 5, 4, 1, 3, 3, batches=2),
        S(3, 3, 2, 1, 5, 5),
        S(25, 5, 8, 1, 10, 4, stride=(2, 2)),                    # DS-CNN-like first layer
        S(13, 13, 10, 1, 3, 3, stride=(2, 2), act="RELU"),
    ]
    rng = np.random.default_rng(4321)
    for i in range(10):
        kh, kw = int(rng.integers(1, 5)), int(rng.integers(1, 5))
        specs.append(S(int(rng.integers(kh, 10)), int(rng.integers(kw, 10)),
                       int(rng.integers(1, 9)), int(rng.integers(1, 4)), kh, kw,
                       stride=(int(rng.integers(1, 4)), int(rng.integers(1, 4))),
                       dilation=(1, int(rng.integers(1, 3))),
                       padding=str(rng.choice(["SAME", "VALID"])),
                       act=str(rng.choice(["NONE", "RELU", "RELU6"])),
                       in_zp=int(rng.integers(-128, 128)), out_zp=int(rng.integers(-128, 128)),
                       octaves=float(rng.uniform(0, 16)), seed=200 + i))
    return [s for s in specs
            if _out_size(s.padding, s.h, s.kh, s.stride[0], s.dilation[0]) > 0
            and _out_size(s.padding, s.w, s.kw, s.stride[1], s.dilation[1]) > 0]


# --- FULLY_CONNECTED -----------------------------------------------------------------------

@dataclass(frozen=True)
class FcSpec:
    in_shape: tuple[int, ...]
    out: int
    act: str = "NONE"
    in_zp: int = 0
    out_zp: int = 0
    per_channel: bool = False
    octaves: float = 6.0
    bias: bool = True
    keep_num_dims: bool = False
    seed: int = 0

    @property
    def id(self) -> str:
        shape = "x".join(map(str, self.in_shape))
        return (f"fc_{shape}_o{self.out}_{self.act}_z{self.in_zp},{self.out_zp}"
                f"{'_pc' if self.per_channel else '_pt'}{'' if self.bias else '_nobias'}"
                f"{'_keep' if self.keep_num_dims else ''}_{self.seed}")


def build_fc(s: FcSpec) -> bytes:
    rng = np.random.default_rng(s.seed)
    depth = s.in_shape[-1]
    batches = int(np.prod(s.in_shape[:-1])) if len(s.in_shape) > 1 else 1
    in_scale = float(rng.uniform(0.01, 0.1))
    fs = _filter_scales(rng, s.out, s.octaves, s.per_channel)
    out_scale = in_scale * float(np.median(fs)) * ACC_STD * math.sqrt(depth) / 50.0
    b = ModelBuilder()
    x = b.tensor("input", s.in_shape, "int8", scale=in_scale, zero_point=s.in_zp)
    w = b.tensor("weights", (s.out, depth), "int8", scale=fs, axis=0,
                 data=rng.integers(-127, 128, s.out * depth))
    inputs = [x, w]
    if s.bias:
        inputs.append(b.tensor("bias", (s.out,), "int32", scale=[in_scale * f for f in fs],
                               data=_bias(rng, s.out, depth)))
    else:
        inputs.append(-1)
    out_shape = (*s.in_shape[:-1], s.out) if s.keep_num_dims else (batches, s.out)
    y = b.tensor("output", out_shape, "int8", scale=out_scale, zero_point=s.out_zp)
    b.op("FULLY_CONNECTED", inputs, [y], FullyConnectedOptions(
        activation=Activation[s.act], keep_num_dims=s.keep_num_dims))
    return b.build([x], [y])


def fc_specs() -> list[FcSpec]:
    S = FcSpec
    specs = [
        S((1, 1), 1), S((1, 10), 4), S((1, 10), 4, per_channel=True),
        S((1, 250), 12), S((1, 250), 12, per_channel=True, octaves=20.0),
        S((3, 7), 5), S((3, 7), 5, per_channel=True),
        S((2, 3, 8), 6, keep_num_dims=True), S((2, 3, 8), 6),
        S((1, 16), 3, act="RELU"), S((1, 16), 3, act="RELU6", out_zp=-128),
        S((1, 16), 3, act="RELU_N1_TO_1"),
        S((1, 33), 9, in_zp=-128, out_zp=127), S((1, 33), 9, in_zp=127, out_zp=-128),
        S((1, 33), 9, in_zp=-128, out_zp=-128, per_channel=True),
        S((1, 33), 9, in_zp=127, out_zp=127, per_channel=True, octaves=28.0),
        S((1, 20), 7, bias=False), S((4, 20), 7, bias=False, per_channel=True),
        S((1, 64), 1), S((5, 1), 3),
    ]
    rng = np.random.default_rng(99)
    for i in range(8):
        specs.append(S((int(rng.integers(1, 4)), int(rng.integers(1, 80))),
                       int(rng.integers(1, 20)), act=str(rng.choice(["NONE", "RELU"])),
                       in_zp=int(rng.integers(-128, 128)), out_zp=int(rng.integers(-128, 128)),
                       per_channel=bool(rng.integers(0, 2)), seed=300 + i))
    return specs


# --- pooling -------------------------------------------------------------------------------

@dataclass(frozen=True)
class PoolSpec:
    kind: str   # "AVERAGE_POOL_2D" or "MAX_POOL_2D"
    h: int
    w: int
    c: int
    kh: int
    kw: int
    stride: tuple[int, int] = (1, 1)
    padding: str = "SAME"
    act: str = "NONE"
    zp: int = 0
    batches: int = 1
    seed: int = 0

    @property
    def id(self) -> str:
        k = "avg" if self.kind.startswith("AVERAGE") else "max"
        return (f"{k}pool_{self.batches}x{self.h}x{self.w}x{self.c}_k{self.kh}x{self.kw}"
                f"_s{self.stride[0]}{self.stride[1]}_{self.padding}_{self.act}_z{self.zp}"
                f"_{self.seed}")


def build_pool(s: PoolSpec) -> bytes:
    rng = np.random.default_rng(s.seed)
    scale = float(rng.uniform(0.01, 0.2))
    oh = _out_size(s.padding, s.h, s.kh, s.stride[0], 1)
    ow = _out_size(s.padding, s.w, s.kw, s.stride[1], 1)
    b = ModelBuilder()
    x = b.tensor("input", (s.batches, s.h, s.w, s.c), "int8", scale=scale, zero_point=s.zp)
    y = b.tensor("output", (s.batches, oh, ow, s.c), "int8", scale=scale, zero_point=s.zp)
    b.op(s.kind, [x], [y], Pool2DOptions(
        padding=Padding[s.padding], stride_h=s.stride[0], stride_w=s.stride[1],
        filter_h=s.kh, filter_w=s.kw, activation=Activation[s.act]))
    return b.build([x], [y])


def pool_specs() -> list[PoolSpec]:
    specs = []
    for kind in ("AVERAGE_POOL_2D", "MAX_POOL_2D"):
        S = PoolSpec
        specs += [
            S(kind, 1, 1, 1, 1, 1),
            S(kind, 1, 9, 3, 1, 3),
            S(kind, 8, 8, 3, 2, 2, stride=(2, 2)),
            S(kind, 8, 8, 3, 2, 2, stride=(2, 2), padding="VALID"),
            S(kind, 7, 5, 5, 3, 3),                               # SAME, odd sizes
            S(kind, 7, 5, 5, 2, 4, stride=(2, 1)),                # SAME with even kernel
            S(kind, 9, 9, 2, 2, 2, stride=(3, 3)),                # stride > kernel
            S(kind, 6, 6, 7, 3, 3, stride=(2, 2), act="RELU", zp=-20),
            S(kind, 6, 6, 7, 3, 3, act="RELU6", zp=-128),
            S(kind, 6, 6, 4, 3, 3, act="RELU_N1_TO_1", zp=127),
            S(kind, 5, 4, 6, 5, 4, padding="VALID"),              # global pooling
            S(kind, 25, 5, 8, 25, 5, padding="VALID"),
            S(kind, 5, 5, 3, 3, 3, batches=3, stride=(2, 2)),
            S(kind, 4, 4, 3, 6, 6),                               # kernel larger than input
        ]
    rng = np.random.default_rng(77)
    for i in range(6):
        kind = ("AVERAGE_POOL_2D", "MAX_POOL_2D")[i % 2]
        kh, kw = int(rng.integers(1, 5)), int(rng.integers(1, 5))
        specs.append(PoolSpec(kind, int(rng.integers(kh, 12)), int(rng.integers(kw, 12)),
                              int(rng.integers(1, 9)), kh, kw,
                              stride=(int(rng.integers(1, 4)), int(rng.integers(1, 4))),
                              padding=str(rng.choice(["SAME", "VALID"])),
                              zp=int(rng.integers(-128, 128)), seed=400 + i))
    return specs


# --- SOFTMAX -------------------------------------------------------------------------------

@dataclass(frozen=True)
class SoftmaxSpec:
    shape: tuple[int, ...]
    in_scale: float
    in_zp: int = 0
    beta: float = 1.0

    @property
    def id(self) -> str:
        return (f"softmax_{'x'.join(map(str, self.shape))}_sc{self.in_scale:g}"
                f"_z{self.in_zp}_b{self.beta:g}")


def build_softmax(s: SoftmaxSpec) -> bytes:
    b = ModelBuilder()
    x = b.tensor("input", s.shape, "int8", scale=s.in_scale, zero_point=s.in_zp)
    y = b.tensor("output", s.shape, "int8", scale=1.0 / 256, zero_point=-128)
    b.op("SOFTMAX", [x], [y], SoftmaxOptions(beta=s.beta))
    return b.build([x], [y])


def softmax_specs() -> list[SoftmaxSpec]:
    S = SoftmaxSpec
    specs = [S((1, 1), 0.1), S((1, 2), 0.1), S((1, 12), 0.0625), S((1, 12), 0.1, in_zp=-128),
             S((4, 10), 0.05, in_zp=127), S((2, 3, 7), 0.2), S((1, 1000), 0.03),
             S((1, 12), 0.5), S((1, 12), 1.0), S((1, 12), 4.0), S((1, 12), 0.001),
             S((3, 16), 0.1, beta=0.5), S((3, 16), 0.1, beta=2.0), S((1, 35), 0.17, beta=0.8),
             S((1, 6000), 0.25)]
    for sc, z in itertools.product((0.004, 0.037, 0.25), (-70, 33)):
        specs.append(S((2, 9), sc, in_zp=z))
    return specs


# --- RESHAPE / SQUEEZE ---------------------------------------------------------------------

@dataclass(frozen=True)
class ShapeSpec:
    op: str
    in_shape: tuple[int, ...]
    out_shape: tuple[int, ...]
    squeeze_dims: tuple[int, ...] = ()
    with_shape_tensor: bool = True

    @property
    def id(self) -> str:
        return (f"{self.op.lower()}_{'x'.join(map(str, self.in_shape))}_to_"
                f"{'x'.join(map(str, self.out_shape))}"
                f"{'' if self.with_shape_tensor else '_noshape'}")


def build_shape(s: ShapeSpec) -> bytes:
    b = ModelBuilder()
    x = b.tensor("input", s.in_shape, "int8", scale=0.1, zero_point=-3)
    y = b.tensor("output", s.out_shape, "int8", scale=0.1, zero_point=-3)
    if s.op == "RESHAPE":
        ins = [x]
        if s.with_shape_tensor:
            ins.append(b.tensor("shape", (len(s.out_shape),), "int32", data=list(s.out_shape)))
        b.op("RESHAPE", ins, [y], ReshapeOptions(new_shape=s.out_shape))
    else:
        b.op("SQUEEZE", [x], [y], SqueezeOptions(squeeze_dims=s.squeeze_dims))
    return b.build([x], [y])


def shape_specs() -> list[ShapeSpec]:
    return [ShapeSpec("RESHAPE", (1, 4, 5, 3), (1, 60)),
            ShapeSpec("RESHAPE", (2, 6), (3, 4), with_shape_tensor=False),
            ShapeSpec("RESHAPE", (1, 49, 10), (1, 49, 10, 1)),
            ShapeSpec("SQUEEZE", (1, 1, 1, 12), (1, 12), squeeze_dims=(1, 2)),
            ShapeSpec("SQUEEZE", (1, 7, 1, 3), (7, 3))]


# --- all cases -----------------------------------------------------------------------------

def core_cases() -> list[GoldenCase]:
    cases: list[GoldenCase] = []
    for specs, build in ((conv_specs(), build_conv), (dw_specs(), build_dw),
                         (fc_specs(), build_fc), (pool_specs(), build_pool),
                         (softmax_specs(), build_softmax), (shape_specs(), build_shape)):
        for i, s in enumerate(specs):
            case = make_case(s.id, build(s), s, seed=10_000 + len(cases) + i)
            if isinstance(s, SoftmaxSpec) and s.shape[-1] >= 512:
                # TFLM aborts on rows with >= 512 equal maxima (its reciprocal exponent
                # exceeds 31), so the constant input sets have no oracle: random only
                case = replace(case, input_sets=case.input_sets[:1])
            cases.append(case)
    ids = [c.id for c in cases]
    dup = {i for i in ids if ids.count(i) > 1}
    if dup:
        raise ValueError(f"duplicate golden case ids: {sorted(dup)}")
    return cases


def sweep_cases(n: int = 400, seed: int = 2026) -> list[GoldenCase]:
    """A larger random sweep over conv/depthwise/FC/pool/softmax parameters (--sweep)."""
    rng = np.random.default_rng(seed)
    cases: list[GoldenCase] = []
    seen: set[str] = set()
    while len(cases) < n:
        kind = int(rng.integers(0, 5))
        kh, kw = int(rng.integers(1, 6)), int(rng.integers(1, 6))
        h, w = int(rng.integers(1, 14)), int(rng.integers(1, 14))
        pad = str(rng.choice(["SAME", "VALID"]))
        stride = (int(rng.integers(1, 4)), int(rng.integers(1, 4)))
        act = str(rng.choice(["NONE", "RELU", "RELU6", "RELU_N1_TO_1"]))
        zi, zo = (int(v) for v in rng.choice([-128, 127, 0, *rng.integers(-128, 128, 3)], 2))
        sd = int(rng.integers(0, 1 << 30))
        spec: object
        if kind == 0:
            spec = ConvSpec(h, w, int(rng.integers(1, 12)), int(rng.integers(1, 12)), kh, kw,
                            stride, (int(rng.integers(1, 3)), int(rng.integers(1, 3))), pad,
                            act, zi, zo, float(rng.uniform(0, 24)),
                            bool(rng.integers(0, 4)), bool(rng.integers(0, 5)),
                            int(rng.integers(1, 3)), 1, sd)
            if not _valid_conv(spec):
                continue
            model = build_conv(spec)
        elif kind == 1:
            spec = DwSpec(h, w, int(rng.integers(1, 12)), int(rng.integers(1, 4)), kh, kw,
                          stride, (int(rng.integers(1, 3)), int(rng.integers(1, 3))), pad, act,
                          zi, zo, float(rng.uniform(0, 24)), bool(rng.integers(0, 4)),
                          True, int(rng.integers(1, 3)), sd)
            if (_out_size(pad, h, kh, stride[0], spec.dilation[0]) <= 0
                    or _out_size(pad, w, kw, stride[1], spec.dilation[1]) <= 0):
                continue
            model = build_dw(spec)
        elif kind == 2:
            spec = FcSpec((int(rng.integers(1, 5)), int(rng.integers(1, 300))),
                          int(rng.integers(1, 40)), act, zi, zo, bool(rng.integers(0, 2)),
                          float(rng.uniform(0, 24)), bool(rng.integers(0, 5)), False, sd)
            model = build_fc(spec)
        elif kind == 3:
            spec = PoolSpec(str(rng.choice(["AVERAGE_POOL_2D", "MAX_POOL_2D"])), max(h, kh),
                            max(w, kw), int(rng.integers(1, 12)), kh, kw, stride, pad, act, zi,
                            int(rng.integers(1, 3)), sd)
            model = build_pool(spec)
        else:
            spec = SoftmaxSpec((int(rng.integers(1, 4)), int(rng.integers(1, 60))),
                               float(2.0 ** rng.uniform(-9, 2)), zi,
                               float(rng.choice([1.0, 1.0, 0.5, 2.0])))
            model = build_softmax(spec)
        sid = f"sweep{len(cases)}_{spec.id}"  # type: ignore[attr-defined]
        if sid in seen:
            continue
        seen.add(sid)
        cases.append(make_case(sid, model, spec, seed=sd))
    return cases
