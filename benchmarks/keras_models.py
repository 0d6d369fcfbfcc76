"""Test models with the layer shapes of four published TinyML models, built by the project.

Nothing here is a downloaded model: each is a Keras model written from the published layer
shapes, with random (seeded) weights, calibrated on random inputs and quantized to full INT8
by `tinydeploy.quantize`. Speed, flash and RAM depend on the shapes, not on trained values.

* ``dscnn``: MLPerf Tiny KWS DS-CNN: 49x10x1 -> CONV 10x4 / 2 x64 -> 4 x (DW 3x3 + CONV 1x1
  x64) -> average pool -> FC 12 -> softmax.
* ``micro_speech``: TFLM's micro_speech: 49x40x1 -> DEPTHWISE 10x8 / 2, depth multiplier 8
  (one input channel) -> 25x20x8 -> FC 4000 -> 4 -> softmax.
* ``ad01``: MLPerf Tiny anomaly detection: FC autoencoder 640 -> 128 x4 -> 8 -> 128 x4 -> 640
  (~270 KB of weights).
* ``vww``: MLPerf Tiny visual wake words: MobileNet-v1 alpha 0.25, 96x96x3, 2 classes (Keras
  applications' layer layout, written out, random weights).

Models are cached outside the repository (``$TD_BENCH_MODELS``, default
``$XDG_CACHE_HOME/tinydeploy/bench-models``) under a name that includes `BUILDER_VERSION`,
so a changed builder never reuses a stale file. TensorFlow is imported only when a model has
to be built.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

BUILDER_VERSION = 4
CALIBRATION_SAMPLES = 24
MODELS = ("dscnn", "micro_speech", "ad01", "vww")


def cache_dir() -> Path:
    d = os.environ.get("TD_BENCH_MODELS")
    if d:
        path = Path(d)
    else:
        base = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
        path = base / "tinydeploy" / "bench-models"
    path.mkdir(parents=True, exist_ok=True)
    return path


def _dscnn(tf: Any) -> Any:
    k = tf.keras.layers
    x = inp = k.Input((49, 10, 1))
    x = k.Conv2D(64, (10, 4), strides=2, padding="same", activation="relu")(x)
    for _ in range(4):
        x = k.DepthwiseConv2D(3, padding="same", activation="relu")(x)
        x = k.Conv2D(64, 1, activation="relu")(x)
    x = k.AveragePooling2D((25, 5))(x)
    x = k.Flatten()(x)
    x = k.Dense(12, activation="softmax")(x)
    return tf.keras.Model(inp, x)


def _micro_speech(tf: Any) -> Any:
    k = tf.keras.layers
    x = inp = k.Input((49, 40, 1))
    x = k.DepthwiseConv2D((10, 8), strides=2, padding="same", depth_multiplier=8,
                          activation="relu")(x)
    x = k.Flatten()(x)
    x = k.Dense(4, activation="softmax")(x)
    return tf.keras.Model(inp, x)


def _ad01(tf: Any) -> Any:
    k = tf.keras.layers
    x = inp = k.Input((640,))
    for units in (128, 128, 128, 128, 8, 128, 128, 128, 128):
        x = k.Dense(units, activation="relu")(x)
    x = k.Dense(640)(x)
    return tf.keras.Model(inp, x)


def _vww(tf: Any) -> Any:
    """MobileNet-v1 alpha 0.25 (Keras applications' blocks: CONV 3x3/2 x8, 13 x (DW 3x3 +
    CONV 1x1), global average pool, classifier, softmax), written out so that every layer
    has a bias and a variance-preserving initialisation, ReLU after the pointwise layers
    only (random weights of Keras' own model, clipped or per-channel activations make the
    classifier's inputs constant, which cannot be quantized); the cost of the layers does
    not depend on their activation."""
    k = tf.keras.layers
    init = tf.keras.initializers.HeNormal(seed=3)
    linear = tf.keras.initializers.RandomNormal(stddev=1.0 / 3.0, seed=4)   # 9 taps
    x = inp = k.Input((96, 96, 3))
    x = k.Conv2D(8, 3, strides=2, padding="same", kernel_initializer=init)(x)
    x = k.ReLU()(x)
    blocks = ((1, 16), (2, 32), (1, 32), (2, 64), (1, 64), (2, 128), (1, 128), (1, 128),
              (1, 128), (1, 128), (1, 128), (2, 256), (1, 256))
    for stride, filters in blocks:
        x = k.DepthwiseConv2D(3, strides=stride, padding="same",
                              depthwise_initializer=linear)(x)
        x = k.Conv2D(filters, 1, kernel_initializer=init)(x)
        x = k.ReLU()(x)
    x = k.GlobalAveragePooling2D()(x)
    x = k.Dense(2, activation="softmax")(x)
    return tf.keras.Model(inp, x)


BUILDERS: dict[str, Callable[[Any], Any]] = {
    "dscnn": _dscnn, "micro_speech": _micro_speech, "ad01": _ad01, "vww": _vww}


def model_path(name: str) -> Path:
    return cache_dir() / f"{name}-v{BUILDER_VERSION}-int8.tflite"


def build_model(name: str, *, quiet: bool = True) -> Path:
    """The INT8 `.tflite` of test model ``name`` (built and cached on first use)."""
    if name not in BUILDERS:
        raise KeyError(f"unknown benchmark model '{name}' (known: {', '.join(MODELS)})")
    out = model_path(name)
    if out.exists():
        return out
    if quiet:
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import tensorflow as tf

    from tinydeploy.quantize.quantizer import quantize_model

    tf.keras.utils.set_random_seed(len(name))
    model = BUILDERS[name](tf)
    keras_path = cache_dir() / f"{name}-v{BUILDER_VERSION}.keras"
    model.save(keras_path)
    rng = np.random.default_rng(7)
    shape = (CALIBRATION_SAMPLES, *model.input_shape[1:])
    x = rng.normal(0.0, 1.0, size=shape).astype(np.float32)
    tmp = out.with_suffix(".part.tflite")
    quantize_model(keras_path, x, tmp, force=True, sqnr_samples=0)
    tmp.replace(out)
    return out
