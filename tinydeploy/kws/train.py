"""Train the keyword spotter: data -> features (the C front end) -> DS-CNN (Keras) -> full-INT8
`.tflite` (tinydeploy.quantize) -> accuracy on unseen speakers (float in Keras, INT8 on the
tflite-micro interpreter fed with the int8 features the device computes).

TensorFlow is imported inside the functions that need it. Runs are reproducible: fixed seeds
for data, weight initialisation and shuffling, and TensorFlow's deterministic ops.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from tinydeploy.errors import InputDataError
from tinydeploy.kws.data import LABELS, Dataset, Split, SynthConfig, generate_synthetic
from tinydeploy.kws.frontend import HostFrontend, Quant
from tinydeploy.kws.frontend_config import FrontendConfig

Log = Callable[[str], None]


@dataclass(frozen=True)
class TrainConfig:
    epochs: int = 12
    batch: int = 100
    learning_rate: float = 2e-3
    seed: int = 0
    bn_momentum: float = 0.9
    filters: int = 64
    calibration_samples: int = 500
    threads: int = 2


@dataclass(frozen=True)
class TrainResult:
    model_path: Path
    sha256: str
    size_bytes: int
    frontend: FrontendConfig
    input_quant: Quant
    float_accuracy: dict[str, float]           # split -> accuracy
    int8_accuracy: dict[str, float]            # split -> accuracy (tflite-micro)
    per_class_int8: dict[str, float]           # label -> test accuracy
    counts: dict[str, dict[str, int]]
    params: int
    seconds: dict[str, float] = field(default_factory=dict)


def synthetic_dataset(cfg: SynthConfig, cache_dir: Path | None, log: Log) -> Dataset:
    """The synthetic set for ``cfg``, cached as .npz under ``cache_dir`` when given."""
    if cache_dir is not None:
        key = hashlib.sha256(repr(cfg).encode()).hexdigest()[:12]
        path = cache_dir / f"synth-{cfg.per_class}-{cfg.seed}-{key}.npz"
        if path.exists():
            log(f"data: {path} (cached)")
            return Dataset.load(path)
    t0 = time.time()
    log(f"data: rendering {cfg.per_class * len(LABELS)} clips with espeak-ng "
        f"on {cfg.workers} processes ...")
    ds = generate_synthetic(cfg)
    log(f"data: {len(ds)} clips in {time.time() - t0:.0f} s")
    if cache_dir is not None:
        cache_dir.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp.npz")
        ds.save(tmp)
        os.replace(tmp, path)
    return ds


def make_features(ds: Dataset, base: FrontendConfig | None = None
                  ) -> tuple[FrontendConfig, np.ndarray]:
    """Normalised float features [n, frames, n_out] from the C front end; the per-output mean
    and std come from the training split and are folded into the returned config."""
    base = base or FrontendConfig()
    raw = HostFrontend(base).features(ds.audio).astype(np.float64)
    train = raw[ds.split == int(Split.TRAIN)]
    if train.size == 0:
        raise InputDataError("dataset has no training clips")
    cfg = base.with_normalisation(train.mean(axis=(0, 1)), train.std(axis=(0, 1)))
    return cfg, HostFrontend(cfg).features(ds.audio)


def build_dscnn(tf: Any, input_shape: tuple[int, int], classes: int, cfg: TrainConfig) -> Any:
    """MLPerf Tiny DS-CNN: Conv 64 10x4 /2, BN, ReLU, 4 x [DW 3x3, BN, ReLU, Conv 1x1 64, BN,
    ReLU], average pool, Reshape (not Flatten: a free batch dimension would convert to
    SHAPE/STRIDED_SLICE/PACK ops), Dense, softmax. BN momentum 0.9 (0.99 stalls short runs)."""
    k = tf.keras
    L = k.layers
    inp = k.Input(shape=(*input_shape, 1), name="mfcc")
    x = L.Conv2D(cfg.filters, (10, 4), strides=(2, 2), padding="same", use_bias=False)(inp)
    x = L.BatchNormalization(momentum=cfg.bn_momentum)(x)
    x = L.ReLU()(x)
    for _ in range(4):
        x = L.DepthwiseConv2D((3, 3), padding="same", use_bias=False)(x)
        x = L.BatchNormalization(momentum=cfg.bn_momentum)(x)
        x = L.ReLU()(x)
        x = L.Conv2D(cfg.filters, (1, 1), use_bias=False)(x)
        x = L.BatchNormalization(momentum=cfg.bn_momentum)(x)
        x = L.ReLU()(x)
    x = L.AveragePooling2D(pool_size=(int(x.shape[1]), int(x.shape[2])))(x)
    x = L.Reshape((cfg.filters,))(x)
    x = L.Dense(classes)(x)
    out = L.Softmax(name="probs")(x)
    return k.Model(inp, out, name="dscnn")


def int8_predict(model_bytes: bytes, x_s8: np.ndarray) -> np.ndarray:
    """Argmax of the INT8 model on the tflite-micro interpreter (the project's oracle)."""
    from tflite_micro.python.tflite_micro import runtime

    it = runtime.Interpreter.from_bytes(model_bytes)
    preds = np.empty(x_s8.shape[0], dtype=np.int64)
    for i in range(x_s8.shape[0]):
        it.set_input(x_s8[i][None, :, :, None], 0)
        it.invoke()
        preds[i] = int(np.argmax(it.get_output(0)[0]))
    return preds


def input_quant_of(model_bytes: bytes) -> Quant:
    from tinydeploy.model.loader import load_tflite

    g = load_tflite(model_bytes)
    t = g.inputs[0]
    if t.quant is None:
        raise InputDataError("model input is not quantized")
    return Quant(float(t.quant.scale[0]),
                 int(t.quant.zero_point[0]))


def quantize_keras(keras_path: Path, calib: np.ndarray, out: Path) -> None:
    """Full-INT8 conversion through tinydeploy.quantize (batch 1, int8 in/out)."""
    from tinydeploy.quantize import quantize_model

    quantize_model(keras_path, calib, out, force=True, labels=list(LABELS),
                   max_calibration_samples=calib.shape[0], sqnr_samples=0)


def train_kws(ds: Dataset, out_dir: Path, cfg: TrainConfig | None = None,
              log: Log = print) -> TrainResult:
    """Train, quantize and evaluate; writes ``dscnn_int8.tflite``, ``labels.txt`` and
    ``frontend.json`` into ``out_dir``."""
    tc = cfg or TrainConfig()
    secs: dict[str, float] = {}
    t0 = time.time()
    fcfg, feats = make_features(ds)
    secs["features"] = time.time() - t0
    log(f"features: {feats.shape} in {secs['features']:.1f} s")
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")    # one summation order, reproducible
    import tensorflow as tf

    tf.config.threading.set_intra_op_parallelism_threads(tc.threads)
    tf.config.threading.set_inter_op_parallelism_threads(1)
    tf.keras.utils.set_random_seed(tc.seed)
    tf.config.experimental.enable_op_determinism()

    x = feats[..., None].astype(np.float32)
    y = ds.labels.astype(np.int64)
    tr, va, te = (ds.split == int(s) for s in (Split.TRAIN, Split.VALIDATION, Split.TEST))
    model = build_dscnn(tf, fcfg.shape, len(LABELS), tc)
    steps = int(np.ceil(tr.sum() / tc.batch)) * tc.epochs
    sched = tf.keras.optimizers.schedules.CosineDecay(tc.learning_rate, steps, alpha=0.02)
    model.compile(optimizer=tf.keras.optimizers.Adam(sched),
                  loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    t0 = time.time()

    class _Progress(tf.keras.callbacks.Callback):
        def on_epoch_end(self, epoch: int, logs: dict | None = None) -> None:
            logs = logs or {}
            log(f"epoch {epoch + 1}/{tc.epochs}: loss {logs.get('loss', 0):.3f} "
                f"acc {logs.get('accuracy', 0):.3f} val_acc {logs.get('val_accuracy', 0):.3f}"
                f" ({time.time() - t0:.0f} s)")

    model.fit(x[tr], y[tr], batch_size=tc.batch, epochs=tc.epochs, shuffle=True,
              validation_data=(x[va], y[va]), verbose=0, callbacks=[_Progress()])
    secs["train"] = time.time() - t0
    float_acc = {}
    for name, m in (("validation", va), ("test", te)):
        p = np.argmax(model.predict(x[m], batch_size=256, verbose=0), axis=1)
        float_acc[name] = float(np.mean(p == y[m]))

    out_dir.mkdir(parents=True, exist_ok=True)
    model_path = out_dir / "dscnn_int8.tflite"
    rng = np.random.default_rng(tc.seed)
    calib_idx = np.sort(rng.choice(np.nonzero(tr)[0], size=min(tc.calibration_samples,
                                                                int(tr.sum())), replace=False))
    t0 = time.time()
    with tempfile.TemporaryDirectory(prefix="td-kws-") as tmp:
        keras_path = Path(tmp) / "dscnn.keras"
        model.save(keras_path)
        quantize_keras(keras_path, x[calib_idx], model_path)
    secs["quantize"] = time.time() - t0
    model_bytes = model_path.read_bytes()
    quant = input_quant_of(model_bytes)
    host = HostFrontend(fcfg)
    int8_acc, per_class = {}, {}
    t0 = time.time()
    for name, m in (("validation", va), ("test", te)):
        xs8 = host.features_s8(ds.audio[m], quant)
        p = int8_predict(model_bytes, xs8)
        int8_acc[name] = float(np.mean(p == y[m]))
        if name == "test":
            for i, lab in enumerate(LABELS):
                sel = y[m] == i
                if sel.any():
                    per_class[lab] = float(np.mean(p[sel] == i))
    secs["evaluate"] = time.time() - t0
    (out_dir / "labels.txt").write_text("".join(f"{lab}\n" for lab in LABELS))
    (out_dir / "frontend.json").write_text(fcfg.to_json())
    return TrainResult(model_path=model_path,
                       sha256=hashlib.sha256(model_bytes).hexdigest(),
                       size_bytes=len(model_bytes), frontend=fcfg, input_quant=quant,
                       float_accuracy=float_acc, int8_accuracy=int8_acc,
                       per_class_int8=per_class, counts=ds.counts(),
                       params=int(model.count_params()), seconds=secs)


def _pct(x: float) -> str:
    return f"{100 * x:.2f} %"


def readme_text(res: TrainResult, command: str, synth: SynthConfig | None,
                tcfg: TrainConfig) -> str:
    """models/kws/README.md: how the model was made, its accuracy and its digest."""
    c = res.counts
    rows = "\n".join(
        f"| {lab} | {c['train'][lab]} | {c['validation'][lab]} | {c['test'][lab]} | "
        f"{100 * res.per_class_int8.get(lab, float('nan')):.1f} % |" for lab in LABELS)
    data = (f"synthetic espeak-ng set, {synth.per_class} clips per label, seed {synth.seed}, "
            f"speakers split {synth.fractions} (test speakers unseen in training)"
            if synth else "Speech Commands tree")
    return f"""# DS-CNN keyword spotter (INT8)

`dscnn_int8.tflite`: MLPerf Tiny DS-CNN (Conv 64 10x4/2, 4 x [DW 3x3 + Conv 1x1 64], average
pool, Dense 12, softmax), {res.params:,} parameters, full-INT8 (int8 input and output),
{res.size_bytes:,} bytes.

- sha256: `{res.sha256}`
- labels: `labels.txt` ({len(LABELS)} lines, output index order)
- front end: `frontend.json` (49 x 10 MFCC, per-coefficient normalisation folded into the
  front end; `firmware/frontend/td_frontend_config.h` is rendered from it)
- input quantization: scale {res.input_quant.scale:.8g}, zero point {res.input_quant.zero_point}

## How it was made

```
{command}
```

Data: {data}. Training: {tcfg.epochs} epochs, batch {tcfg.batch}, Adam with cosine decay from
{tcfg.learning_rate}, BatchNormalization momentum {tcfg.bn_momentum}, seed {tcfg.seed},
deterministic TensorFlow ops. Quantization: `tinydeploy.quantize.quantize_model` with
{tcfg.calibration_samples} training clips as representative data.

## Accuracy

Float: the Keras model on float features of the C front end. INT8: the `.tflite` on the
tflite-micro interpreter, fed with the int8 features the device computes
(`td_frontend_clip_s8`).

| split | float | INT8 (tflite-micro) |
|---|---:|---:|
| validation | {_pct(res.float_accuracy['validation'])} | {_pct(res.int8_accuracy['validation'])} |
| test (unseen speakers) | {_pct(res.float_accuracy['test'])} | {_pct(res.int8_accuracy['test'])} |

Clips per label and INT8 test accuracy per label:

| label | train | validation | test | INT8 test accuracy |
|---|---:|---:|---:|---:|
{rows}

Timing on 2 shared cores: features {res.seconds.get('features', 0):.0f} s, training
{res.seconds.get('train', 0):.0f} s, quantization {res.seconds.get('quantize', 0):.0f} s,
evaluation {res.seconds.get('evaluate', 0):.0f} s.
"""
