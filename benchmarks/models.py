"""Test models of the layer shapes of the reference benchmarks, built by the project.

The four shapes the kernel work is judged on (see README "Benchmarks"): the MLPerf Tiny KWS
DS-CNN is the shipped `models/kws/dscnn_int8.tflite`; the other three are built here with
`ModelBuilder` from their published layer shapes, with seeded random int8 weights and
per-channel scales chosen so that activations stay in range (their accuracy is irrelevant;
their shapes, quantization layout and sizes are those of the originals):

* ``micro_speech``: TFLM's micro_speech model: a 49x40x1 spectrogram, DEPTHWISE_CONV_2D
  8x10, stride 2, SAME, depth multiplier 8 (one input channel), RELU; RESHAPE to 4000;
  FULLY_CONNECTED 4000 -> 4; SOFTMAX.
* ``ad01``: MLPerf Tiny anomaly detection (AD01, FC autoencoder): 640 -> 128 x4 -> 8 ->
  128 x4 -> 640, RELU between layers (264,192 weights).
* ``vww``: MLPerf Tiny visual wake words (MobileNet-v1 alpha 0.25, 96x96x3): CONV_2D 3x3/2
  x8, 13 depthwise-separable blocks (DW 3x3 + 1x1 conv) up to 256 channels, 3x3 average
  pool, FULLY_CONNECTED 256 -> 2, SOFTMAX.

    .venv/bin/python benchmarks/models.py OUT_DIR     # writes <name>.tflite for each
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tinydeploy.model import ir  # noqa: E402
from tinydeploy.testing.builder import ModelBuilder  # noqa: E402

ACT_SCALE = 0.05


class _Net:
    """A builder of one chain of int8 layers with shared activation quantization."""

    def __init__(self, name: str, seed: int) -> None:
        self.b = ModelBuilder(name)
        self.rng = np.random.default_rng(seed)
        self.n = 0

    def _name(self, kind: str) -> str:
        self.n += 1
        return f"{kind}{self.n}"

    def _weights(self, shape: tuple[int, ...], channels: int, depth: int, axis: int
                 ) -> tuple[int, int, np.ndarray]:
        name = self._name("w")
        # per-channel scales ~ 1 / sqrt(depth): outputs of the same order as the inputs
        scales = (2.0 / np.sqrt(depth) / 127.0) * 2.0 ** self.rng.uniform(-1, 0, channels)
        w = self.b.tensor(name, shape, scale=list(scales), axis=axis,
                          data=self.rng.integers(-127, 128, shape))
        bias = self.b.tensor(name + "/b", (channels,), "int32", scale=list(ACT_SCALE * scales),
                             data=self.rng.integers(-2000, 2000, channels))
        return w, bias, scales

    def act(self, shape: tuple[int, ...], relu: bool) -> int:
        return self.b.tensor(self._name("a"), shape, scale=ACT_SCALE,
                             zero_point=-128 if relu else 0)

    def conv(self, x: int, shape: tuple[int, int, int, int], oc: int, k: tuple[int, int],
             stride: int, relu: bool = True) -> tuple[int, tuple[int, int, int, int]]:
        n, h, w, c = shape
        oh, ow = (h + stride - 1) // stride, (w + stride - 1) // stride
        wt, bt, _ = self._weights((oc, k[0], k[1], c), oc, k[0] * k[1] * c, 0)
        out_shape = (n, oh, ow, oc)
        y = self.act(out_shape, relu)
        act = ir.Activation.RELU if relu else ir.Activation.NONE
        self.b.op("CONV_2D", [x, wt, bt], [y],
                  ir.Conv2DOptions(ir.Padding.SAME, stride, stride, act), version=3)
        return y, out_shape

    def dw(self, x: int, shape: tuple[int, int, int, int], k: tuple[int, int], stride: int,
           multiplier: int = 1, relu: bool = True) -> tuple[int, tuple[int, int, int, int]]:
        n, h, w, c = shape
        oh, ow = (h + stride - 1) // stride, (w + stride - 1) // stride
        oc = c * multiplier
        wt, bt, _ = self._weights((1, k[0], k[1], oc), oc, k[0] * k[1], 3)
        out_shape = (n, oh, ow, oc)
        y = self.act(out_shape, relu)
        act = ir.Activation.RELU if relu else ir.Activation.NONE
        self.b.op("DEPTHWISE_CONV_2D", [x, wt, bt], [y],
                  ir.DepthwiseConv2DOptions(ir.Padding.SAME, stride, stride, multiplier, act),
                  version=3)
        return y, out_shape

    def fc(self, x: int, depth: int, oc: int, relu: bool) -> int:
        wt, bt, _ = self._weights((oc, depth), oc, depth, 0)
        y = self.act((1, oc), relu)
        act = ir.Activation.RELU if relu else ir.Activation.NONE
        self.b.op("FULLY_CONNECTED", [x, wt, bt], [y], ir.FullyConnectedOptions(act),
                  version=4)
        return y

    def softmax(self, x: int, n: int) -> int:
        y = self.b.tensor("softmax", (1, n), scale=1 / 256, zero_point=-128)
        self.b.op("SOFTMAX", [x], [y], ir.SoftmaxOptions(1.0))
        return y


def micro_speech(seed: int = 1) -> bytes:
    net = _Net("micro_speech-shaped (DW 8x10/2 x8 on 1 channel, FC 4000->4)", seed)
    x = net.b.tensor("input", (1, 49, 40, 1), scale=ACT_SCALE, zero_point=-128)
    y, shape = net.dw(x, (1, 49, 40, 1), (8, 10), 2, multiplier=8)
    flat = net.b.tensor("flat", (1, 4000), scale=ACT_SCALE, zero_point=-128)
    dims = net.b.tensor("flat/shape", (2,), "int32", data=[1, 4000])
    net.b.op("RESHAPE", [y, dims], [flat], ir.ReshapeOptions((1, 4000)))
    logits = net.fc(flat, 4000, 4, relu=False)
    return net.b.build(inputs=[x], outputs=[net.softmax(logits, 4)])


def ad01(seed: int = 2) -> bytes:
    net = _Net("MLPerf AD01-shaped (FC autoencoder 640-128x4-8-128x4-640)", seed)
    x = net.b.tensor("input", (1, 640), scale=ACT_SCALE, zero_point=0)
    widths = [640, 128, 128, 128, 128, 8, 128, 128, 128, 128, 640]
    y = x
    for i in range(1, len(widths)):
        y = net.fc(y, widths[i - 1], widths[i], relu=i < len(widths) - 1)
    return net.b.build(inputs=[x], outputs=[y])


def vww(seed: int = 3) -> bytes:
    net = _Net("MLPerf VWW-shaped (MobileNet-v1 0.25, 96x96x3)", seed)
    x = net.b.tensor("input", (1, 96, 96, 3), scale=ACT_SCALE, zero_point=0)
    y, shape = net.conv(x, (1, 96, 96, 3), 8, (3, 3), 2)
    blocks = [(1, 16), (2, 32), (1, 32), (2, 64), (1, 64), (2, 128)] + [(1, 128)] * 5 + \
        [(2, 256), (1, 256)]
    for stride, oc in blocks:
        y, shape = net.dw(y, shape, (3, 3), stride)
        y, shape = net.conv(y, shape, oc, (1, 1), 1)
    pooled = net.act((1, 1, 1, 256), relu=True)
    net.b.op("AVERAGE_POOL_2D", [y], [pooled], ir.Pool2DOptions(ir.Padding.VALID, 3, 3, 3, 3))
    flat = net.b.tensor("flat", (1, 256), scale=ACT_SCALE, zero_point=-128)
    dims = net.b.tensor("flat/shape", (2,), "int32", data=[1, 256])
    net.b.op("RESHAPE", [pooled, dims], [flat], ir.ReshapeOptions((1, 256)))
    logits = net.fc(flat, 256, 2, relu=False)
    return net.b.build(inputs=[x], outputs=[net.softmax(logits, 2)])


MODELS: dict[str, Callable[[], bytes]] = {"micro_speech": micro_speech, "ad01": ad01,
                                          "vww": vww}


def main(argv: list[str]) -> int:
    out = Path(argv[0]) if argv else ROOT / "build" / "bench-models"
    out.mkdir(parents=True, exist_ok=True)
    for name, build in MODELS.items():
        path = out / f"{name}.tflite"
        path.write_bytes(build())
        print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
