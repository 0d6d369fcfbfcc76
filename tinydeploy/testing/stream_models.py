"""Models that slide over time, for the streaming tests: MLPerf Tiny's DS-CNN architecture
(input 49x10x1, Conv 10x4 stride 2 x64, 4 x [depthwise 3x3, pointwise 1x1 x64], average pool
over the whole map, FC 12, softmax) with random int8 weights, written with `ModelBuilder`
(no TensorFlow, milliseconds).

``padding="same"`` is the shape of the shipped model (SAME everywhere); ``"valid"`` has no
padding along time: each convolution is VALID and a PAD op pads the feature axis only, so
that the feature width stays that of the SAME model (5 columns after the first layer).
Scales are chosen so that activations spread over the int8 range rather than saturate.
"""

from __future__ import annotations

import math

import numpy as np

from tinydeploy.model.ir import (
    Activation,
    Conv2DOptions,
    DepthwiseConv2DOptions,
    FullyConnectedOptions,
    Padding,
    Pool2DOptions,
    SoftmaxOptions,
)
from tinydeploy.testing.builder import ModelBuilder


def _weights(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    return rng.integers(-127, 128, size=shape).astype(np.int8)


def dscnn_model(padding: str = "same", *, seed: int = 0, window: int = 49, mfcc: int = 10,
                filters: int = 64, blocks: int = 4, classes: int = 12) -> bytes:
    """A DS-CNN-shaped int8 model (see the module docstring)."""
    if padding not in ("same", "valid"):
        raise ValueError(f"padding must be 'same' or 'valid', not {padding!r}")
    same = padding == "same"
    rng = np.random.default_rng(seed)
    b = ModelBuilder(f"stream test DS-CNN ({padding}, seed {seed})")
    scale, zp = 0.25, -10
    x = b.tensor("input", (1, window, mfcc, 1), scale=scale, zero_point=zp)
    cur, cur_shape = x, (1, window, mfcc, 1)
    wstd = 73.0    # std of int8 weights uniform over [-127, 127]
    xstd = 40.0    # the spread the scales aim at

    def pad_features(name: str, left: int, right: int) -> None:
        nonlocal cur, cur_shape
        n, h, w, c = cur_shape
        pads = b.tensor(f"{name}_pads", (4, 2), "int32",
                        data=np.array([[0, 0], [0, 0], [left, right], [0, 0]], np.int32))
        shape = (n, h, w + left + right, c)
        y = b.tensor(name, shape, scale=scale, zero_point=zp)
        b.op("PAD", [cur, pads], [y])
        cur, cur_shape = y, shape

    def conv(name: str, kh: int, kw: int, stride: int, out_c: int, depthwise: bool) -> None:
        nonlocal cur, cur_shape, scale, zp
        n, h, w, c = cur_shape
        pad = Padding.SAME if same else Padding.VALID
        if same:
            oh, ow = -(-h // stride), -(-w // stride)
        else:
            oh, ow = (h - kh) // stride + 1, (w - kw) // stride + 1
        fan = kh * kw * (1 if depthwise else c)
        oc = c if depthwise else out_c
        fshape = (1, kh, kw, oc) if depthwise else (oc, kh, kw, c)
        fscales = [float(v) for v in 0.01 * np.exp(rng.uniform(-0.5, 0.5, size=oc))]
        w_t = b.tensor(f"{name}_w", fshape, scale=fscales, zero_point=0,
                       axis=3 if depthwise else 0, data=_weights(rng, fshape))
        bias_scales = [scale * f for f in fscales]
        bias = (rng.normal(0, math.sqrt(fan) * xstd * wstd * 0.3, size=oc)).astype(np.int32)
        b_t = b.tensor(f"{name}_b", (oc,), "int32", scale=bias_scales, data=bias)
        acc_std = math.sqrt(fan) * xstd * wstd
        out_scale = float(scale * 0.01 * acc_std / xstd)
        out_zp = -128     # ReLU: outputs >= 0, the whole int8 range (as trained models have)
        y = b.tensor(name, (n, oh, ow, oc), scale=out_scale, zero_point=out_zp)
        if depthwise:
            b.op("DEPTHWISE_CONV_2D", [cur, w_t, b_t], [y], DepthwiseConv2DOptions(
                padding=pad, stride_h=stride, stride_w=stride, depth_multiplier=1,
                activation=Activation.RELU))
        else:
            b.op("CONV_2D", [cur, w_t, b_t], [y], Conv2DOptions(
                padding=pad, stride_h=stride, stride_w=stride, activation=Activation.RELU))
        cur, cur_shape, scale, zp = y, (n, oh, ow, oc), out_scale, out_zp

    if not same:
        pad_features("input_padded", 1, 1)
    conv("conv0", 10, 4, 2, filters, False)
    for k in range(blocks):
        if not same:
            pad_features(f"dw{k}_padded", 1, 1)
        conv(f"dw{k}", 3, 3, 1, filters, True)
        conv(f"pw{k}", 1, 1, 1, filters, False)
    n, h, w, c = cur_shape
    pooled = b.tensor("pool", (n, 1, 1, c), scale=scale, zero_point=zp)
    b.op("AVERAGE_POOL_2D", [cur], [pooled], Pool2DOptions(
        padding=Padding.VALID, stride_h=1, stride_w=1, filter_h=h, filter_w=w))
    flat = b.tensor("flat", (1, c), scale=scale, zero_point=zp)
    shape_t = b.tensor("flat_shape", (2,), "int32", data=np.array([1, c], np.int32))
    b.op("RESHAPE", [pooled, shape_t], [flat])
    # logits of a few units (softmax not saturated), about 30 steps of int8 apart
    fc_scale = float(2.0 / (scale * math.sqrt(c) * xstd * wstd))
    fc_w = b.tensor("fc_w", (classes, c), scale=[fc_scale], zero_point=0,
                    data=_weights(rng, (classes, c)))
    fc_b = b.tensor("fc_b", (classes,), "int32", scale=[scale * fc_scale],
                    data=rng.integers(-2000, 2000, size=classes).astype(np.int32))
    logit_scale = 2.0 / 30.0
    logits = b.tensor("logits", (1, classes), scale=logit_scale, zero_point=0)
    b.op("FULLY_CONNECTED", [flat, fc_w, fc_b], [logits], FullyConnectedOptions())
    probs = b.tensor("probs", (1, classes), scale=1.0 / 256, zero_point=-128)
    b.op("SOFTMAX", [logits], [probs], SoftmaxOptions(beta=1.0))
    return b.build(inputs=[x], outputs=[probs])


def image_model(seed: int = 0) -> bytes:
    """A small 2-D image model (a 3x3 convolution, then a 2x2 max pool and FC): nothing in it
    reduces a time axis, so it cannot be streamed."""
    rng = np.random.default_rng(seed)
    b = ModelBuilder("stream test image model")
    x = b.tensor("image", (1, 8, 8, 3), scale=0.5, zero_point=0)
    w = b.tensor("w", (4, 3, 3, 3), scale=[0.02] * 4, data=_weights(rng, (4, 3, 3, 3)))
    y = b.tensor("y", (1, 8, 8, 4), scale=0.5, zero_point=-128)
    b.op("CONV_2D", [x, w, -1], [y], Conv2DOptions(activation=Activation.RELU))
    p = b.tensor("p", (1, 4, 4, 4), scale=0.5, zero_point=-128)
    b.op("MAX_POOL_2D", [y], [p], Pool2DOptions(stride_h=2, stride_w=2, filter_h=2,
                                                filter_w=2))
    return b.build(inputs=[x], outputs=[p])


def random_chain(seed: int) -> bytes:
    """A random time-convolutional chain for the streaming contract test: a window of 16 to
    48 frames of 1 to 6 features and 1 to 4 channels, 1 to 4 layers (CONV_2D or
    DEPTHWISE_CONV_2D with kernel heights 1 to 5, strides 1 or 2, dilation 1 or 2, SAME or
    VALID; a PAD of the feature axis now and then), a global average pool and an FC. Layers
    that would not fit the rows left are skipped; the result can still be too short to
    stream (the test then expects the refusal)."""
    rng = np.random.default_rng(seed)
    b = ModelBuilder(f"stream contract chain {seed}")
    h, w, c = int(rng.integers(16, 49)), int(rng.integers(1, 7)), int(rng.integers(1, 5))
    scale, zp = 0.1, int(rng.integers(-20, 20))
    cur = b.tensor("x", (1, h, w, c), scale=scale, zero_point=zp)
    shape = (1, h, w, c)
    for k in range(int(rng.integers(1, 5))):
        n, h, w, c = shape
        if rng.random() < 0.25:
            left, right = int(rng.integers(0, 2)), int(rng.integers(0, 2))
            pads = b.tensor(f"p{k}_pads", (4, 2), "int32",
                            data=np.array([[0, 0], [0, 0], [left, right], [0, 0]], np.int32))
            shape = (n, h, w + left + right, c)
            y = b.tensor(f"p{k}", shape, scale=scale, zero_point=zp)
            b.op("PAD", [cur, pads], [y])
            cur = y
            n, h, w, c = shape
        depthwise = rng.random() < 0.5
        kh, kw = int(rng.integers(1, 6)), int(rng.integers(1, min(w, 3) + 1))
        stride = int(rng.integers(1, 3))
        dil = int(rng.integers(1, 3)) if kh > 1 and stride == 1 else 1
        same = rng.random() < 0.5
        eff = (kh - 1) * dil + 1
        if same:
            oh, ow = -(-h // stride), w
        else:
            oh, ow = (h - eff) // stride + 1, w - kw + 1
        if oh < 2 or ow < 1:
            continue
        oc = c if depthwise else int(rng.integers(1, 9))
        fshape = (1, kh, kw, oc) if depthwise else (oc, kh, kw, c)
        fan = kh * kw * (1 if depthwise else c)
        fscales = [float(v) for v in 0.01 * np.exp(rng.uniform(-0.5, 0.5, size=oc))]
        wt = b.tensor(f"w{k}", fshape, scale=fscales, zero_point=0,
                      axis=3 if depthwise else 0, data=_weights(rng, fshape))
        bt = b.tensor(f"b{k}", (oc,), "int32", scale=[scale * f for f in fscales],
                      data=rng.integers(-3000, 3000, size=oc).astype(np.int32))
        out_scale = float(scale * 0.01 * math.sqrt(fan) * 60.0 * 73.0 / 40.0)
        relu = rng.random() < 0.5
        out_zp = -128 if relu else int(rng.integers(-10, 10))
        oshape = (n, oh, ow if not same else -(-w // 1), oc)
        y = b.tensor(f"y{k}", oshape, scale=out_scale, zero_point=out_zp)
        act = Activation.RELU if relu else Activation.NONE
        pad = Padding.SAME if same else Padding.VALID
        if depthwise:
            b.op("DEPTHWISE_CONV_2D", [cur, wt, bt], [y], DepthwiseConv2DOptions(
                padding=pad, stride_h=stride, stride_w=1, depth_multiplier=1,
                dilation_h=dil, dilation_w=1, activation=act))
        else:
            b.op("CONV_2D", [cur, wt, bt], [y], Conv2DOptions(
                padding=pad, stride_h=stride, stride_w=1, dilation_h=dil, dilation_w=1,
                activation=act))
        cur, shape, scale, zp = y, oshape, out_scale, out_zp
    n, h, w, c = shape
    pooled = b.tensor("pool", (n, 1, 1, c), scale=scale, zero_point=zp)
    b.op("AVERAGE_POOL_2D", [cur], [pooled], Pool2DOptions(
        padding=Padding.VALID, filter_h=h, filter_w=w))
    flat = b.tensor("flat", (1, c), scale=scale, zero_point=zp)
    b.op("RESHAPE", [pooled, b.tensor("shape", (2,), "int32", data=np.array([1, c]))], [flat])
    classes = 4
    fw = b.tensor("fc_w", (classes, c), scale=[0.02], zero_point=0,
                  data=_weights(rng, (classes, c)))
    logits = b.tensor("logits", (1, classes), scale=float(scale * 0.02 * math.sqrt(c) * 2.0),
                      zero_point=0)
    b.op("FULLY_CONNECTED", [flat, fw, -1], [logits], FullyConnectedOptions())
    return b.build(inputs=[0], outputs=[logits])
