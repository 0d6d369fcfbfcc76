"""Multi-op test models that together use every supported op, for the firmware tier.

Single-op models are the golden tier's job (tests/golden). Here a few chains exercise
codegen end to end (arena offsets, aliases, in-place ops, scratch, per-op params) on every
board. Quantization parameters follow TFLM's constraints (SOFTMAX and LOGISTIC output
1/256 and -128, TANH output 1/128 and 0, CONCATENATION inputs share the output's params).
"""

from __future__ import annotations

import numpy as np

from tinydeploy.model import ir
from tinydeploy.testing.builder import ModelBuilder


def _w(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    return rng.integers(-127, 128, shape).astype(np.int8)


def _b(rng: np.random.Generator, n: int) -> np.ndarray:
    return rng.integers(-2000, 2000, n).astype(np.int32)


def cnn_chain(seed: int = 11) -> bytes:
    """PAD, CONV_2D, DEPTHWISE_CONV_2D (multiplier 2), MAX_POOL_2D, AVERAGE_POOL_2D, ADD
    (broadcast), MUL, CONCATENATION, STRIDED_SLICE, MEAN, SQUEEZE, FULLY_CONNECTED, SOFTMAX."""
    rng = np.random.default_rng(seed)
    b = ModelBuilder("cnn chain")
    x = b.tensor("input", (1, 7, 6, 3), scale=0.05, zero_point=-3)
    pads = b.tensor("pads", (4, 2), "int32", data=[0, 0, 1, 1, 1, 1, 0, 0])
    xp = b.tensor("padded", (1, 9, 8, 3), scale=0.05, zero_point=-3)
    b.op("PAD", [x, pads, -1][:2], [xp])
    cs = rng.uniform(0.002, 0.02, 5)
    cw = b.tensor("conv/w", (5, 3, 3, 3), scale=cs, axis=0, data=_w(rng, (5, 3, 3, 3)))
    cb = b.tensor("conv/b", (5,), "int32", scale=cs * 0.05, data=_b(rng, 5))
    c = b.tensor("conv", (1, 7, 6, 5), scale=0.3, zero_point=-128)
    b.op("CONV_2D", [xp, cw, cb], [c], ir.Conv2DOptions(ir.Padding.VALID, 1, 1,
                                                        ir.Activation.RELU), version=3)
    ds = rng.uniform(0.005, 0.05, 10)
    dw = b.tensor("dw/w", (1, 3, 3, 10), scale=ds, axis=3, data=_w(rng, (1, 3, 3, 10)))
    db = b.tensor("dw/b", (10,), "int32", scale=ds * 0.3, data=_b(rng, 10))
    d = b.tensor("dw", (1, 4, 3, 10), scale=0.1, zero_point=4)
    b.op("DEPTHWISE_CONV_2D", [c, dw, db], [d],
         ir.DepthwiseConv2DOptions(ir.Padding.SAME, 2, 2, 2, ir.Activation.RELU6), version=3)
    mp = b.tensor("maxpool", (1, 2, 2, 10), scale=0.1, zero_point=4)
    b.op("MAX_POOL_2D", [d], [mp], ir.Pool2DOptions(ir.Padding.SAME, 2, 2, 2, 2))
    ap = b.tensor("avgpool", (1, 2, 2, 10), scale=0.1, zero_point=4)
    b.op("AVERAGE_POOL_2D", [mp], [ap], ir.Pool2DOptions(ir.Padding.SAME, 1, 1, 3, 2))
    k = b.tensor("bias_row", (1, 1, 1, 10), scale=0.07, zero_point=-10,
                 data=rng.integers(-128, 128, 10))
    ad = b.tensor("add", (1, 2, 2, 10), scale=0.15, zero_point=-20)
    b.op("ADD", [ap, k], [ad], ir.ActivationOptions(ir.Activation.NONE), version=2)
    mu = b.tensor("mul", (1, 2, 2, 10), scale=1.0, zero_point=7)
    b.op("MUL", [ad, ap], [mu], ir.ActivationOptions(ir.Activation.NONE), version=2)
    cat = b.tensor("concat", (1, 2, 2, 20), scale=1.0, zero_point=7)
    b.op("CONCATENATION", [mu, mu], [cat], ir.ConcatenationOptions(3))
    begin = b.tensor("begin", (4,), "int32", data=[0, 0, 1, 2])
    end = b.tensor("end", (4,), "int32", data=[1, 2, 2, 18])
    strides = b.tensor("strides", (4,), "int32", data=[1, 1, 1, 2])
    sl = b.tensor("slice", (1, 2, 1, 8), scale=1.0, zero_point=7)
    b.op("STRIDED_SLICE", [cat, begin, end, strides], [sl], ir.StridedSliceOptions())
    axes = b.tensor("axes", (2,), "int32", data=[1, 2])
    mean = b.tensor("mean", (1, 1, 1, 8), scale=0.5, zero_point=-60)
    b.op("MEAN", [sl, axes], [mean], ir.ReducerOptions(True), version=2)
    sq = b.tensor("squeeze", (1, 8), scale=0.5, zero_point=-60)
    b.op("SQUEEZE", [mean], [sq], ir.SqueezeOptions((1, 2)))
    fw = b.tensor("fc/w", (6, 8), scale=0.0002, data=_w(rng, (6, 8)))
    fb = b.tensor("fc/b", (6,), "int32", scale=0.0001, data=_b(rng, 6))
    fc = b.tensor("fc", (1, 6), scale=0.05, zero_point=3)
    b.op("FULLY_CONNECTED", [sq, fw, fb], [fc], ir.FullyConnectedOptions(), version=4)
    sm = b.tensor("softmax", (1, 6), scale=1 / 256, zero_point=-128)
    b.op("SOFTMAX", [fc], [sm], ir.SoftmaxOptions(1.0))
    return b.build(inputs=[x], outputs=[sm])


def activation_chain(seed: int = 12) -> bytes:
    """FULLY_CONNECTED (no bias), RESHAPE, RELU, LEAKY_RELU, HARD_SWISH, LOGISTIC, TANH, RELU6,
    QUANTIZE (int8 requantize) and DEQUANTIZE to a float32 output; a second int8 output."""
    rng = np.random.default_rng(seed)
    b = ModelBuilder("activation chain")
    x = b.tensor("input", (1, 24), scale=0.04, zero_point=5)
    fw = b.tensor("fc/w", (16, 24), scale=0.004, data=_w(rng, (16, 24)))
    fc = b.tensor("fc", (1, 16), scale=0.06, zero_point=-4)
    b.op("FULLY_CONNECTED", [x, fw, -1], [fc], ir.FullyConnectedOptions(), version=4)
    shape = b.tensor("shape", (2,), "int32", data=[4, 4])
    rs = b.tensor("reshape", (4, 4), scale=0.06, zero_point=-4)
    b.op("RESHAPE", [fc, shape], [rs], ir.ReshapeOptions((4, 4)))
    r = b.tensor("relu", (4, 4), scale=0.03, zero_point=-128)
    b.op("RELU", [rs], [r])
    lr = b.tensor("leaky", (4, 4), scale=0.04, zero_point=-30)
    b.op("LEAKY_RELU", [rs], [lr], ir.LeakyReluOptions(0.2))
    hs = b.tensor("hswish", (4, 4), scale=0.03, zero_point=-40)
    b.op("HARD_SWISH", [lr], [hs])
    lg = b.tensor("logistic", (4, 4), scale=1 / 256, zero_point=-128)
    b.op("LOGISTIC", [hs], [lg])
    th = b.tensor("tanh", (4, 4), scale=1 / 128, zero_point=0)
    b.op("TANH", [rs], [th])
    r6 = b.tensor("relu6", (4, 4), scale=6 / 255, zero_point=-128)
    b.op("RELU6", [th], [r6])
    q = b.tensor("requant", (4, 4), scale=0.03, zero_point=-100)
    b.op("QUANTIZE", [r6], [q])
    out_f = b.tensor("dequant", (4, 4), "float32")
    b.op("DEQUANTIZE", [lg], [out_f], version=2)
    return b.build(inputs=[x], outputs=[out_f, q])


OP_MODELS = {"cnn_chain": cnn_chain, "activation_chain": activation_chain}
