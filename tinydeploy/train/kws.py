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
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from tinydeploy.errors import InputDataError
from tinydeploy.frontend.config import FrontendConfig
from tinydeploy.frontend.native import HostFrontend, Quant, input_quant_of
from tinydeploy.kws.wav import read_wav
from tinydeploy.train.augment import AugmentConfig, augment_clip, spec_augment
from tinydeploy.train.data import (
    CLIP,
    KEYWORDS,
    LABELS,
    SILENCE,
    UNKNOWN,
    Dataset,
    RealClip,
    RealCorpus,
    Split,
    SynthConfig,
    extra_speakers,
    fit_clip,
    generate_synthetic,
    read_clip,
    split_noise,
)
from tinydeploy.train.teacher import Teacher

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
    time_padding: str = "same"   # "valid": no padding along time (streams exactly)


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
    """The synthetic set for ``cfg``, cached as .npz under ``cache_dir`` when given. With
    ``cfg.extra_fraction > 0`` the installed flite / festival voices speak that share of the
    training clips (none installed: espeak-ng only, and the log says so)."""
    extras = extra_speakers() if cfg.extra_fraction > 0 else ()
    if cfg.extra_fraction > 0 and not extras:
        log("data: flite/festival not installed; synthetic speech is espeak-ng only")
    if cache_dir is not None:
        key = hashlib.sha256(repr((cfg, extras)).encode()).hexdigest()[:12]
        path = cache_dir / f"synth-{cfg.per_class}-{cfg.seed}-{key}.npz"
        if path.exists():
            log(f"data: {path} (cached)")
            return Dataset.load(path)
    t0 = time.time()
    voices = "espeak-ng" + (f" + {len(extras)} flite/festival voices" if extras else "")
    log(f"data: rendering {cfg.per_class * len(LABELS)} clips with {voices} "
        f"on {cfg.workers} processes ...")
    ds = generate_synthetic(cfg, extras=extras)
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
    SHAPE/STRIDED_SLICE/PACK ops), Dense, softmax. BN momentum 0.9 (0.99 stalls short runs).

    ``cfg.time_padding`` "valid": the same layers, parameters and feature widths, but no
    padding along time: each convolution is VALID and a ZeroPadding2D (a PAD op) pads the
    feature axis only, by what SAME would have padded it. Time rows shrink (49 -> 20 after
    the first convolution, 18, 16, 14, 12 after the depthwise ones) and every row of every
    layer depends only on the input frames under it, so a streamed step computes exactly
    its new rows (docs/streaming.md)."""
    if cfg.time_padding not in ("same", "valid"):
        raise ValueError(f"time_padding must be 'same' or 'valid', not {cfg.time_padding!r}")
    k = tf.keras
    L = k.layers
    valid = cfg.time_padding == "valid"
    inp = k.Input(shape=(*input_shape, 1), name="mfcc")
    x = inp
    if valid:
        x = L.ZeroPadding2D(((0, 0), (1, 1)))(x)
    x = L.Conv2D(cfg.filters, (10, 4), strides=(2, 2), padding="valid" if valid else "same",
                 use_bias=False)(x)
    x = L.BatchNormalization(momentum=cfg.bn_momentum)(x)
    x = L.ReLU()(x)
    for _ in range(4):
        if valid:
            x = L.ZeroPadding2D(((0, 0), (1, 1)))(x)
        x = L.DepthwiseConv2D((3, 3), padding="valid" if valid else "same", use_bias=False)(x)
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


def quantize_keras(keras_path: Path, calib: np.ndarray, out: Path) -> None:
    """Full-INT8 conversion through tinydeploy.quantize (batch 1, int8 in/out)."""
    from tinydeploy.quantize import quantize_model

    quantize_model(keras_path, calib, out, force=True, labels=list(LABELS),
                   max_calibration_samples=calib.shape[0], sqnr_samples=0)



def _tensorflow(tc: TrainConfig, log: Log) -> Any:
    """TensorFlow set up for a reproducible run: ``tc.threads`` intra-op threads, one inter-op
    thread, seeded, deterministic ops. The thread counts can only be set before TensorFlow's
    runtime starts; in a process that already ran TensorFlow they stay as they are (said)."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")    # one summation order, reproducible
    import tensorflow as tf

    try:
        tf.config.threading.set_intra_op_parallelism_threads(tc.threads)
        tf.config.threading.set_inter_op_parallelism_threads(1)
    except RuntimeError:
        log("TensorFlow already running in this process: its thread counts are kept")
    tf.keras.utils.set_random_seed(tc.seed)
    tf.config.experimental.enable_op_determinism()
    return tf

def _compile(tf: Any, model: Any, tc: TrainConfig, steps: int, soft: bool = False) -> None:
    """Adam on a cosine-decayed learning rate over ``steps`` batches, cross-entropy on
    labels (sparse) or on ``soft`` targets (a distribution per clip); the metric is logged
    as ``accuracy`` either way."""
    sched = tf.keras.optimizers.schedules.CosineDecay(tc.learning_rate, steps, alpha=0.02)
    acc = (tf.keras.metrics.CategoricalAccuracy(name="accuracy") if soft
           else tf.keras.metrics.SparseCategoricalAccuracy(name="accuracy"))
    model.compile(optimizer=tf.keras.optimizers.Adam(sched),
                  loss="categorical_crossentropy" if soft else "sparse_categorical_crossentropy",
                  metrics=[acc])


def _progress(tf: Any, tc: TrainConfig, log: Log, t0: float, val_name: str,
              val_missing: float) -> Any:
    """A Keras callback that logs each epoch's loss and accuracies and the seconds since
    ``t0``; ``val_name`` labels the validation accuracy (``val_missing`` without one)."""

    class _Progress(tf.keras.callbacks.Callback):
        def on_epoch_end(self, epoch: int, logs: dict | None = None) -> None:
            logs = logs or {}
            log(f"epoch {epoch + 1}/{tc.epochs}: loss {logs.get('loss', 0):.3f} "
                f"acc {logs.get('accuracy', 0):.3f} {val_name} "
                f"{logs.get('val_accuracy', val_missing):.3f} ({time.time() - t0:.0f} s)")

    return _Progress()


def _quantize(model: Any, calibration: np.ndarray, model_path: Path) -> None:
    """The trained Keras ``model`` as a full-INT8 .tflite at ``model_path``."""
    with tempfile.TemporaryDirectory(prefix="td-kws-") as tmp:
        keras_path = Path(tmp) / "dscnn.keras"
        model.save(keras_path)
        quantize_keras(keras_path, calibration, model_path)


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
    tf = _tensorflow(tc, log)

    x = feats[..., None].astype(np.float32)
    y = ds.labels.astype(np.int64)
    tr, va, te = (ds.split == int(s) for s in (Split.TRAIN, Split.VALIDATION, Split.TEST))
    model = build_dscnn(tf, fcfg.shape, len(LABELS), tc)
    steps = int(np.ceil(tr.sum() / tc.batch)) * tc.epochs
    _compile(tf, model, tc, steps)
    t0 = time.time()
    model.fit(x[tr], y[tr], batch_size=tc.batch, epochs=tc.epochs, shuffle=True,
              validation_data=(x[va], y[va]), verbose=0,
              callbacks=[_progress(tf, tc, log, t0, "val_acc", 0)])
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
    _quantize(model, x[calib_idx], model_path)
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



def _readme_head(res: Any, command: str) -> str:
    """The part of ``models/kws/README.md`` both recipes write alike: the model, its files and
    how it was made (``res`` is a `TrainResult` or the mixed recipe's result)."""
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
"""

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
    return _readme_head(res, command) + f"""
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


# ---- real recordings mixed with the synthetic set -------------------------------------------

@dataclass(frozen=True)
class MixConfig:
    """How the training set is put together from real clips, synthetic clips and
    background noise. Real training clips are repeated with fresh augmentation: words with
    at least ``scarce_target`` clips ``real_copies`` times, rarer ones up to about
    ``scarce_target`` clips (the first copy of a clip is augmented with chance
    ``augment_first``, the others always). Real "unknown" words: at most
    ``unknown_real_max`` clips, once each, taken from every word alike (seeded). Silence:
    ``silence_real`` 1 s slices of the training part of the background recordings at a random
    gain. ``real_limit`` keeps only so many real training clips of the words it names (a
    seeded choice; 0 leaves them all out) for every use of them, splices included: an
    ablation of how a word fares with as few real recordings as on/off have, or none, when
    only synthetic voices speak it (``exclude_real`` names words limited to 0). ``splices``:
    clips made of the start of one real training clip and the end of another (partial
    keywords, word pairs, near words), augmented; only a teacher can label them
    (`Teacher`). ``unknown_word_target``: an other word with fewer real "unknown" clips
    than this is repeated, freshly augmented, up to about this many (0: every clip once).
    ``other_speech``: that many of the corpus's windows of other real speech
    (`RealCorpus.speech`, a seeded choice), trained as "unknown" with their own label: their
    transcripts name no keyword, so nothing is left for a teacher to judge."""

    real_copies: int = 3
    scarce_target: int = 400
    unknown_real_max: int = 2500
    silence_real: int = 1200
    synth_keep: float = 1.0     # share of the synthetic training clips used (seeded choice)
    synth_keep_scarce: float | None = None   # the share for keywords with few real clips
    augment_first: float = 0.0  # chance that the first copy of a real keyword is augmented
    splices: int = 0            # clips spliced from two real clips (targets: the teacher's)
    other_speech: int = 0       # windows of other real speech, as "unknown"
    unknown_word_target: int = 0   # rarer other words repeated up to about this many clips
    use_real: bool = True
    exclude_real: tuple[str, ...] = ()
    real_limit: tuple[tuple[str, int], ...] = ()   # (word, real training clips kept)
    augment: AugmentConfig = field(default_factory=AugmentConfig)
    seed: int = 0

    def limits(self) -> dict[str, int]:
        """Real training clips kept per limited word (``exclude_real``: 0)."""
        out = dict(self.real_limit)
        out.update((k, 0) for k in self.exclude_real)
        return out


def real_training_clips(corpus: RealCorpus, mix: MixConfig) -> list[tuple[int, RealClip]]:
    """The corpus's training-split clips as (index, clip), with every limited word cut
    to its limit (`MixConfig.limits`): a seeded choice, the same for every run of a seed."""
    train = [(i, c) for i, c in enumerate(corpus.clips) if c.split is Split.TRAIN]
    limits = mix.limits()
    if not limits:
        return train
    rng = np.random.default_rng([mix.seed, 29])
    keep: set[int] = set()
    for k in sorted(limits):
        idx = [i for i, c in train if c.word == k]
        keep.update(int(i) for i in rng.permutation(idx)[:limits[k]])
    return [(i, c) for i, c in train if c.word not in limits or i in keep]


@dataclass(frozen=True)
class _Job:
    kind: str          # "real", "synth", "noise", "splice" or "speech"
    ref: int           # index into corpus clips, the synthetic set, the noise or speech list
    label: int
    augment: bool
    ref2: int = -1     # "splice": the corpus clip its end comes from


class FeatureCache:
    """Raw (unnormalised) front-end features of the training set on disk: ``x.npy``
    float16 ``[n, frames, channels]`` (memory-mapped), ``y.npy`` int8 labels, ``real.npy``
    (1 for real recordings, 2 for clips spliced from two, 3 for windows of other real
    speech), and with a teacher ``soft.npy``
    float16 ``[n, labels]``, each row's training target. Written once, then read in
    shuffled batches, so a training set far larger than memory (the full Speech Commands set
    is ~3.4 GB as float audio, ~0.1 GB as float16 features) streams from disk. Invariant:
    row i of every file is the same clip; `batches` yields exactly the rows of `load`
    (normalised), in a seeded order."""

    def __init__(self, root: Path) -> None:
        self.root = root
        try:
            self.x = np.load(root / "x.npy", mmap_mode="r")
            self.y = np.load(root / "y.npy")
            self.real = np.load(root / "real.npy")
            soft = root / "soft.npy"
            self.soft = np.load(soft) if soft.exists() else None
        except (OSError, ValueError) as err:
            raise InputDataError(f"{root}: not a feature cache ({err})") from err

    def __len__(self) -> int:
        return int(self.y.shape[0])

    @classmethod
    def write(cls, root: Path, chunks: Iterator[tuple[np.ndarray, np.ndarray, np.ndarray,
                                                      np.ndarray | None]],
              n: int, shape: tuple[int, int]) -> FeatureCache:
        """Write ``n`` rows from ``chunks`` of (features [k, *shape], labels [k], real [k],
        soft targets [k, labels] or None)."""
        root.mkdir(parents=True, exist_ok=True)
        (root / "soft.npy").unlink(missing_ok=True)
        x = np.lib.format.open_memmap(root / "x.tmp.npy", mode="w+", dtype=np.float16,
                                      shape=(n, *shape))
        y = np.empty(n, np.int8)
        real = np.empty(n, np.int8)
        soft: np.ndarray | None = None
        i = 0
        for f, lab, r, t in chunks:
            x[i:i + len(f)] = f.astype(np.float16)
            y[i:i + len(f)] = lab
            real[i:i + len(f)] = r
            if t is not None:
                if soft is None:
                    soft = np.zeros((n, t.shape[1]), np.float16)
                soft[i:i + len(f)] = t
            i += len(f)
        if i != n:
            raise InputDataError(f"feature cache: {i} rows written, {n} expected")
        x.flush()
        del x
        np.save(root / "y.npy", y)
        np.save(root / "real.npy", real)
        if soft is not None:
            np.save(root / "soft.npy", soft)
        os.replace(root / "x.tmp.npy", root / "x.npy")
        return cls(root)

    def mean_std(self, chunk: int = 4096) -> tuple[np.ndarray, np.ndarray]:
        """Per-channel mean and std over all rows and frames, accumulated in float64 by
        chunks (never the whole array in memory)."""
        s = np.zeros(self.x.shape[-1])
        s2 = np.zeros(self.x.shape[-1])
        cnt = 0
        for i in range(0, len(self), chunk):
            b = np.asarray(self.x[i:i + chunk], dtype=np.float64)
            s += b.sum(axis=(0, 1))
            s2 += (b ** 2).sum(axis=(0, 1))
            cnt += b.shape[0] * b.shape[1]
        mean = s / cnt
        return mean, np.sqrt(np.maximum(s2 / cnt - mean ** 2, 1e-12))

    def order(self, epoch: int, seed: int) -> np.ndarray:
        return np.random.default_rng([seed, 11, epoch]).permutation(len(self))

    def batch(self, idx: np.ndarray, mean: np.ndarray, std: np.ndarray) -> np.ndarray:
        """Normalised float32 features of rows ``idx`` (read in sorted order from disk)."""
        srt = np.sort(idx)
        rows = np.asarray(self.x[srt], dtype=np.float32)
        rows = rows[np.searchsorted(srt, idx)]
        return ((rows - mean.astype(np.float32)) / std.astype(np.float32)).astype(np.float32)

    def targets(self, idx: np.ndarray) -> np.ndarray:
        """Training targets of rows ``idx``: soft float32 [k, labels] when the cache has
        them, else the int64 labels."""
        if self.soft is not None:
            return np.asarray(self.soft[idx], np.float32)
        return self.y[idx].astype(np.int64)

    def batches(self, size: int, epoch: int, seed: int, mean: np.ndarray, std: np.ndarray
                ) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        order = self.order(epoch, seed)
        for i in range(0, len(order), size):
            idx = order[i:i + size]
            yield self.batch(idx, mean, std), self.targets(idx)

    def load(self, mean: np.ndarray, std: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Everything in memory, normalised (for tests and small sets)."""
        return self.batch(np.arange(len(self)), mean, std), self.y.astype(np.int64)


def mix_jobs(synth: Dataset | None, corpus: RealCorpus | None, mix: MixConfig
             ) -> list[_Job]:
    """The training set as a list of jobs, in a fixed order (synthetic, real, noise)."""
    jobs: list[_Job] = []
    if synth is not None:
        pick = np.nonzero(synth.split == int(Split.TRAIN))[0]
        if mix.synth_keep < 1.0:
            share = np.full(len(LABELS), mix.synth_keep)
            if corpus is not None and mix.use_real and mix.synth_keep_scarce is not None:
                # where real clips are scarce, synthetic voices are most of what there is
                real = Counter(c.word for _, c in real_training_clips(corpus, mix))
                for k in KEYWORDS:
                    if real[k] < mix.scarce_target:
                        share[LABELS.index(k)] = mix.synth_keep_scarce
            draw = np.random.default_rng([mix.seed, 7]).random(pick.size)
            pick = pick[draw < share[synth.labels[pick]]]
        for i in pick:
            jobs.append(_Job("synth", int(i), int(synth.labels[i]), True))
    if corpus is not None and mix.use_real:
        rng = np.random.default_rng([mix.seed, 5])
        train = real_training_clips(corpus, mix)
        unknown = [i for i, c in train if LABELS[c.label] == UNKNOWN]
        if len(unknown) > mix.unknown_real_max:
            # every word alike: round-robin over the words (each in a seeded order), so
            # that the few words with thousands of clips do not crowd out the rest
            by_word: dict[str, list[int]] = {}
            for u in unknown:
                by_word.setdefault(corpus.clips[u].word, []).append(u)
            queues = [rng.permutation(by_word[w]).tolist() for w in sorted(by_word)]
            picked: list[int] = []
            while len(picked) < mix.unknown_real_max:
                for q in queues:
                    if q and len(picked) < mix.unknown_real_max:
                        picked.append(q.pop())
            unknown = sorted(picked)
        for u in unknown:
            jobs.append(_Job("real", u, LABELS.index(UNKNOWN), True))
        if mix.unknown_word_target:
            chosen: dict[str, list[int]] = {}
            for u in unknown:
                chosen.setdefault(corpus.clips[u].word, []).append(u)
            for w in sorted(chosen):
                extra = -(-mix.unknown_word_target // len(chosen[w])) - 1
                jobs.extend(_Job("real", u, LABELS.index(UNKNOWN), True)
                            for _ in range(extra) for u in chosen[w])
        for k in KEYWORDS:
            idx = [i for i, c in train if c.word == k]
            if not idx:
                continue
            copies = (mix.real_copies if len(idx) >= mix.scarce_target
                      else max(mix.real_copies, -(-mix.scarce_target // len(idx))))
            aug_rng = np.random.default_rng([mix.seed, 11, LABELS.index(k)])
            for copy in range(copies):
                jobs.extend(_Job("real", i, LABELS.index(k),
                                 copy > 0 or bool(aug_rng.random() < mix.augment_first))
                            for i in idx)
        if corpus.noise:
            jobs.extend(_Job("noise", j, LABELS.index(SILENCE), True)
                        for j in range(mix.silence_real))
        if mix.splices and len(train) >= 2:
            pairs: list[list[int]] = np.random.default_rng([mix.seed, 19]).integers(
                0, len(train), (mix.splices, 2)).tolist()
            for first, second in pairs:
                second = second if second != first else (first + 1) % len(train)
                jobs.append(_Job("splice", train[first][0], LABELS.index(UNKNOWN), True,
                                 train[second][0]))
        if mix.other_speech and corpus.speech:
            pick = np.random.default_rng([mix.seed, 31]).permutation(len(corpus.speech))
            jobs.extend(_Job("speech", int(j), LABELS.index(UNKNOWN), True)
                        for j in sorted(pick[:mix.other_speech].tolist()))
    return jobs


def _job_audio(job: _Job, n: int, synth: Dataset | None, corpus: RealCorpus | None,
               noises: Sequence[np.ndarray], mix: MixConfig) -> tuple[np.ndarray, np.ndarray]:
    """Job ``n``'s clip as (source, trained on): the source is the clip before
    augmentation (what a teacher judges: the word, not the noise put over it)."""
    rng = np.random.default_rng([mix.seed, 3, n])
    if job.kind == "noise":
        src = noises[int(rng.integers(len(noises)))]
        start = int(rng.integers(0, max(1, src.size - CLIP + 1)))
        x = src[start:start + CLIP].astype(np.float64)
        x = fit_clip(x) * 10 ** (rng.uniform(-40, 0) / 20)
        clip = np.clip(np.round(x), -32768, 32767).astype(np.int16)
        return clip, clip
    if job.kind == "synth":
        assert synth is not None
        clip = synth.audio[job.ref]
    elif job.kind == "splice":
        assert corpus is not None
        # the start of one clip, then the end of another, crossfaded over 10 ms
        cut = int(rng.integers(CLIP // 4, 3 * CLIP // 4))
        w = np.clip((np.arange(CLIP) - cut) / 160 + 0.5, 0.0, 1.0)
        mixed = (read_clip(corpus.clips[job.ref].path) * (1 - w)
                 + read_clip(corpus.clips[job.ref2].path) * w)
        clip = np.clip(np.round(mixed), -32768, 32767).astype(np.int16)
    elif job.kind == "speech":
        assert corpus is not None
        clip = read_clip(corpus.speech[job.ref])
    else:
        assert corpus is not None
        clip = read_clip(corpus.clips[job.ref].path)
    if not job.augment:
        return clip, clip
    return clip, augment_clip(clip, rng, mix.augment, noises, speech=job.label != 0)


# FeatureCache.real: where a row's clip came from
_ORIGIN = {"synth": 0, "real": 1, "noise": 1, "splice": 2, "speech": 3}


def _targets(part: list[_Job], t: np.ndarray, weight: float) -> np.ndarray:
    """Soft targets of a chunk: a real clip's (or real noise's) label mixed with the
    teacher's posteriors ``t`` at ``weight``; a synthetic clip keeps its own label (synthetic
    voices are not what the teacher was trained to judge), and so does a window of other
    speech (its transcript says it holds no keyword); a splice has only the teacher's."""
    hard = np.eye(len(LABELS), dtype=np.float32)[[j.label for j in part]]
    w = np.asarray([1.0 if j.kind == "splice" else 0.0 if j.kind in ("synth", "speech")
                    else weight
                    for j in part], np.float32)[:, None]
    return (1 - w) * hard + w * t


def build_feature_cache(root: Path, synth: Dataset | None, corpus: RealCorpus | None,
                        mix: MixConfig, base: FrontendConfig, log: Log,
                        chunk: int = 512, teacher: Teacher | None = None) -> FeatureCache:
    """Augment every job's clip (each from its own seeded stream, so the result does not
    depend on ``chunk``) and write its raw features to a `FeatureCache` at ``root``; a cache
    already there for the same inputs is reused (the key is in ``root/key.txt``). With a
    ``teacher`` every row also gets a soft target (`_targets`) from the teacher's posteriors
    of the clip before augmentation: augmentation here is harsher than the teacher's own
    training (it calls a quarter of the augmented real "up" clips silence), and its job is
    robustness, which the label already asks for."""
    jobs = mix_jobs(synth, corpus, mix)
    if not jobs:
        raise InputDataError("no training clips: neither synthetic nor real data")
    if teacher is None and any(j.kind == "splice" for j in jobs):
        raise InputDataError(f"{mix.splices} spliced clips need a teacher to label them",
                             hint="give --teacher, or --splices 0")
    key = hashlib.sha256(repr((mix, base.to_json(), [(j.kind, j.ref, j.label, j.augment)
                                                      for j in jobs],
                               corpus.file_list_sha256() if corpus else None,
                               None if synth is None else hashlib.sha256(
                                   synth.audio.tobytes()).hexdigest(),
                               None if teacher is None else teacher.key)).encode()).hexdigest()
    if (root / "key.txt").exists() and (root / "key.txt").read_text() == key:
        log(f"features: {root} (cached, {len(jobs)} clips)")
        return FeatureCache(root)
    noises = [split_noise(read_wav(p), Split.TRAIN) for p in corpus.noise] if corpus else []
    fe = HostFrontend(base)
    t0 = time.time()

    def chunks() -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]]:
        for s in range(0, len(jobs), chunk):
            part = jobs[s:s + chunk]
            source, audio = (np.stack(a) for a in zip(
                *(_job_audio(j, s + k, synth, corpus, noises, mix)
                  for k, j in enumerate(part)), strict=True))
            labels = np.asarray([j.label for j in part])
            soft = None
            if teacher is not None:
                t = teacher.probs(source)
                soft = _targets(part, t, teacher.weight)
                spliced = np.asarray([j.kind == "splice" for j in part])
                labels = np.where(spliced, t.argmax(axis=1), labels)
            yield (fe.features(audio), labels,
                   np.asarray([_ORIGIN[j.kind] for j in part]),
                   soft)
            if s // chunk % 10 == 0:
                log(f"features: {min(s + chunk, len(jobs))}/{len(jobs)} clips "
                    f"({time.time() - t0:.0f} s)")

    if (root / "key.txt").exists():
        (root / "key.txt").unlink()
    cache = FeatureCache.write(root, chunks(), len(jobs), base.shape)
    (root / "key.txt").write_text(key)
    return cache


@dataclass(frozen=True)
class RealEval:
    """Top-1 on the real validation split: clips per label, float and INT8 accuracy."""

    counts: dict[str, int]
    float_per_class: dict[str, float]
    int8_per_class: dict[str, float]
    float_overall: float
    int8_overall: float

    @property
    def float_balanced(self) -> float:
        """Mean of the per-label accuracies: every label weighs the same, as in the
        canonical Speech Commands test set (which has as many clips of every label)."""
        return float(np.mean(list(self.float_per_class.values())))

    @property
    def int8_balanced(self) -> float:
        return float(np.mean(list(self.int8_per_class.values())))


@dataclass(frozen=True)
class MixResult:
    model_path: Path
    sha256: str
    size_bytes: int
    params: int
    frontend: FrontendConfig
    input_quant: Quant
    real: RealEval | None
    synth_float: float | None          # unseen synthetic speakers (test split)
    synth_int8: float | None
    train_counts: dict[str, dict[str, int]]    # label -> {"real": n, "synthetic": n}
    seconds: dict[str, float]
    real_clips: dict[str, int] = field(default_factory=dict)   # label -> distinct real
    #                                                             training clips (no copies)


def real_validation_audio(corpus: RealCorpus, seed: int = 0, silence_fraction: float = 0.1
                          ) -> tuple[np.ndarray, np.ndarray]:
    """The real validation clips (keywords and unknown words of validation-split speakers)
    plus silence: 1 s slices of the held-out part of the background recordings, as many as
    ``silence_fraction`` of the whole. (int16 audio [n, CLIP], labels [n])."""
    val = corpus.select(Split.VALIDATION)
    audio = [read_clip(c.path) for c in val]
    labels = [c.label for c in val]
    noises = [split_noise(read_wav(p), Split.VALIDATION) for p in corpus.noise]
    noises = [x for x in noises if x.size >= CLIP]
    if noises:
        rng = np.random.default_rng([seed, 17])
        n_sil = int(round(len(val) * silence_fraction / (1 - silence_fraction)))
        for i in range(n_sil):
            src = noises[i % len(noises)]
            start = int(rng.integers(0, src.size - CLIP + 1))
            gain = 10 ** (rng.uniform(-30, 0) / 20)
            x = src[start:start + CLIP].astype(np.float64) * gain
            audio.append(np.clip(np.round(x), -32768, 32767).astype(np.int16))
            labels.append(LABELS.index(SILENCE))
    if not audio:
        return np.zeros((0, CLIP), np.int16), np.zeros(0, np.int64)
    return np.stack(audio), np.asarray(labels, np.int64)


def _per_class(pred: np.ndarray, y: np.ndarray) -> dict[str, float]:
    return {lab: float(np.mean(pred[y == i] == i)) for i, lab in enumerate(LABELS)
            if (y == i).any()}


class _Batches:
    """A Keras PyDataset over a FeatureCache with SpecAugment; the order is a seeded
    permutation per epoch and every batch's masks come from a stream seeded by (epoch,
    batch), so a run is repeatable."""

    def __new__(cls, tf: Any, cache: FeatureCache, size: int, seed: int, mean: np.ndarray,
                std: np.ndarray, aug: AugmentConfig) -> Any:
        base = tf.keras.utils.PyDataset

        class Batches(base):  # type: ignore[misc, valid-type]
            def __init__(self) -> None:
                super().__init__(workers=1, use_multiprocessing=False)
                self.epoch = 0
                self.order = cache.order(0, seed)

            def __len__(self) -> int:
                return int(np.ceil(len(cache) / size))

            def __getitem__(self, b: int) -> tuple[np.ndarray, np.ndarray]:
                idx = self.order[b * size:(b + 1) * size]
                x = cache.batch(idx, mean, std)
                x = spec_augment(x, np.random.default_rng([seed, 13, self.epoch, b]), aug)
                return x[..., None], cache.targets(idx)

            def on_epoch_end(self) -> None:
                self.epoch += 1
                self.order = cache.order(self.epoch, seed)

        return Batches()


def train_kws_mix(synth: Dataset | None, corpus: RealCorpus | None, out_dir: Path,
                  cache_dir: Path, cfg: TrainConfig | None = None,
                  mix: MixConfig | None = None, log: Log = print,
                  dropout: float = 0.1, teacher: Teacher | None = None) -> MixResult:
    """Train on synthetic and/or real clips (features cached on disk under ``cache_dir``
    and streamed), quantize, and measure: real validation split per class (float in
    Keras, INT8 on tflite-micro with the device's int8 features) and unseen synthetic
    speakers. Writes ``dscnn_int8.tflite``, ``labels.txt`` and ``frontend.json``. With a
    ``teacher``, targets are soft (`build_feature_cache`)."""
    tc = cfg or TrainConfig()
    mx = mix or MixConfig(seed=tc.seed)
    secs: dict[str, float] = {}
    base = FrontendConfig()
    t0 = time.time()
    cache = build_feature_cache(cache_dir, synth, corpus if mx.use_real else None, mx, base,
                                log, teacher=teacher)
    if corpus is not None and not mx.use_real:
        log("data: real clips used for validation only")
    secs["features"] = time.time() - t0
    mean, std = cache.mean_std()
    fcfg = base.with_normalisation(mean, std)
    recorded = (cache.real == 1) | (cache.real == 3)
    tc_counts = {lab: {"real": int(((cache.y == i) & recorded).sum()),
                       "synthetic": int(((cache.y == i) & (cache.real == 0)).sum())}
                 for i, lab in enumerate(LABELS)}
    log(f"training set: {len(cache)} clips, {int((cache.real == 1).sum())} from real "
        f"recordings (incl. augmented copies and noise), {int((cache.real == 3).sum())} "
        f"windows of other speech, {int((cache.real == 2).sum())} "
        f"spliced from two, {int((cache.real == 0).sum())} synthetic"
        + ("" if cache.soft is None else "; soft targets from the teacher"))
    tf = _tensorflow(tc, log)

    host_raw = HostFrontend(base)
    val_audio = val_y = None
    val_data = None
    if corpus is not None:
        val_audio, val_y = real_validation_audio(corpus, tc.seed)
        xv = ((host_raw.features(val_audio) - mean) / std).astype(np.float32)[..., None]
        val_data = (xv, val_y if cache.soft is None
                    else np.eye(len(LABELS), dtype=np.float32)[val_y])
    model = build_dscnn(tf, fcfg.shape, len(LABELS), tc)
    if dropout > 0:           # a dropout before the classifier: nothing on the device
        k = tf.keras
        x = model.layers[-3].output            # the Reshape to (filters,)
        x = k.layers.Dropout(dropout, seed=tc.seed)(x)
        x = model.layers[-2](x)
        model = k.Model(model.input, model.layers[-1](x), name="dscnn")
    batches = _Batches(tf, cache, tc.batch, tc.seed, mean, std, mx.augment)
    steps = len(batches) * tc.epochs
    _compile(tf, model, tc, steps, soft=cache.soft is not None)
    t0 = time.time()
    model.fit(batches, epochs=tc.epochs, validation_data=val_data, verbose=0,
              callbacks=[_progress(tf, tc, log, t0, "real-val acc", float("nan"))])
    secs["train"] = time.time() - t0

    out_dir.mkdir(parents=True, exist_ok=True)
    model_path = out_dir / "dscnn_int8.tflite"
    rng = np.random.default_rng(tc.seed)
    calib_idx = rng.choice(len(cache), size=min(tc.calibration_samples, len(cache)),
                           replace=False)
    t0 = time.time()
    _quantize(model, cache.batch(calib_idx, mean, std)[..., None], model_path)
    secs["quantize"] = time.time() - t0
    model_bytes = model_path.read_bytes()
    quant = input_quant_of(model_bytes)
    host = HostFrontend(fcfg)
    t0 = time.time()
    real_eval = None
    if val_data is not None and val_audio is not None and val_y is not None:
        pf = np.argmax(model.predict(val_data[0], batch_size=256, verbose=0), axis=1)
        pi = int8_predict(model_bytes, host.features_s8(val_audio, quant))
        real_eval = RealEval({lab: int((val_y == i).sum()) for i, lab in enumerate(LABELS)},
                             _per_class(pf, val_y), _per_class(pi, val_y),
                             float(np.mean(pf == val_y)), float(np.mean(pi == val_y)))
    sf = si = None
    if synth is not None and (synth.split == int(Split.TEST)).any():
        te = synth.split == int(Split.TEST)
        xs = ((host_raw.features(synth.audio[te]) - mean) / std).astype(np.float32)
        ys = synth.labels[te]
        sf = float(np.mean(np.argmax(model.predict(xs[..., None], batch_size=256, verbose=0),
                                     axis=1) == ys))
        si = float(np.mean(int8_predict(model_bytes, host.features_s8(synth.audio[te], quant))
                           == ys))
    secs["evaluate"] = time.time() - t0
    (out_dir / "labels.txt").write_text("".join(f"{lab}\n" for lab in LABELS))
    (out_dir / "frontend.json").write_text(fcfg.to_json())
    distinct = {lab: len({j.ref for j in mix_jobs(None, corpus, mx)
                          if j.kind == "real" and j.label == i})
                for i, lab in enumerate(LABELS)} if corpus is not None and mx.use_real else \
        {lab: 0 for lab in LABELS}
    return MixResult(model_path, hashlib.sha256(model_bytes).hexdigest(), len(model_bytes),
                     int(model.count_params()), fcfg, quant, real_eval, sf, si, tc_counts,
                     secs, distinct)


RICH_REAL = 100     # keywords with at least this many distinct real training clips: "many"


def _groups(res: MixResult) -> dict[str, tuple[str, ...]]:
    rich = tuple(k for k in KEYWORDS if res.real_clips.get(k, 0) >= RICH_REAL)
    return {"rich": rich, "scarce": tuple(k for k in KEYWORDS if k not in rich)}


def _group_acc(ev: RealEval, per: dict[str, float], words: Sequence[str]) -> float:
    n = sum(ev.counts[w] for w in words if w in per)
    return sum(per[w] * ev.counts[w] for w in words if w in per) / n if n else float("nan")


def mix_summary(res: MixResult) -> str:
    """One paragraph for the terminal: what was used and what it reached."""
    real_train = sum(v["real"] for v in res.train_counts.values())
    src = ("real recordings + synthetic speech" if real_train and any(
        v["synthetic"] for v in res.train_counts.values()) else
        "real recordings only" if real_train else "synthetic speech only")
    lines = [f"{res.model_path}: trained on {src} ({real_train} real, "
             f"{sum(v['synthetic'] for v in res.train_counts.values())} synthetic clips), "
             f"{res.size_bytes} bytes, sha256 {res.sha256}"]
    if res.real is not None:
        g = _groups(res)
        ev = res.real
        lines.append(f"real validation split ({sum(ev.counts.values())} clips): labels "
                     f"weighted equally: float {100 * ev.float_balanced:.2f} %, INT8 "
                     f"{100 * ev.int8_balanced:.2f} %; per clip: float "
                     f"{100 * ev.float_overall:.2f} %, INT8 {100 * ev.int8_overall:.2f} %; "
                     f"INT8 on keywords with many real clips "
                     f"{100 * _group_acc(ev, ev.int8_per_class, g['rich']):.1f} %, with few "
                     f"{100 * _group_acc(ev, ev.int8_per_class, g['scarce']):.1f} %")
    else:
        lines.append("no real recordings given: accuracy on synthetic speakers only")
    if res.synth_int8 is not None and res.synth_float is not None:
        lines.append(f"unseen synthetic speakers: float {100 * res.synth_float:.2f} %, "
                     f"INT8 {100 * res.synth_int8:.2f} %")
    return "\n".join(lines)


def _provenance(root: Path) -> tuple[str, str]:
    """(repository, commit) from ``root/PROVENANCE`` (written by
    examples/kws/collect_speech_commands.py), or ('?', '?')."""
    p = root / "PROVENANCE"
    info = {}
    if p.exists():
        for line in p.read_text().splitlines():
            k, _, v = line.partition(":")
            info[k.strip()] = v.strip()
    return info.get("repository", root.name), info.get("commit", "?")


def mix_readme_text(res: MixResult, command: str, synth: SynthConfig | None,
                    tcfg: TrainConfig, mix: MixConfig, corpus: RealCorpus | None,
                    teacher: Teacher | None = None) -> str:
    """models/kws/README.md: how the model was made, from what, and what it reaches."""
    sources = ""
    if corpus is not None:
        rows = []
        for root in corpus.roots:
            repo, commit = _provenance(root)
            mine = [c for c in corpus.clips if root in c.path.parents]
            words = sorted({c.word for c in mine})
            per = ", ".join(f"{w} {sum(1 for c in mine if c.word == w)}" for w in words)
            rows.append(f"| `{repo}` | `{commit[:12]}` | {len(mine)} | {per or '-'} |")
        noise = ", ".join(p.name for p in corpus.noise) or "none"
        excl = ", ".join(f"{w} {n}" for w, n in sorted(corpus.excluded.items())) or "none"
        counts = corpus.counts()
        per_word = "\n".join(f"| {w} | {c['train']} | {c['validation']} | {c['test_excluded']} |"
                             for w, c in counts.items())
        sources = f"""
## Real recordings (Speech Commands, CC BY 4.0)

Clips of the Speech Commands dataset (Warden, 2018; <https://arxiv.org/abs/1804.03209>;
licence CC BY 4.0) as published in these public repositories; the audio is not part of this
repository. Clips used (train + validation split), per repository and word:

| repository | commit | clips | per word |
|---|---|---:|---|
{chr(10).join(rows)}

Background noise recordings: {noise} (the first 80 % of each file for training,
the last 20 % for validation silence). {corpus.duplicates} clips found in more than one
repository were used once. sha256 of the sorted `word/file` list of the
{len(corpus.clips)} clips used: `{corpus.file_list_sha256()}`.

Splits follow the dataset's own rule (SHA-1 of the speaker part of the file name, 10 %
validation, 10 % test): every clip of a test-split speaker is left out of everything (not
trained on, not used for tuning or thresholds): {excl}.

| word | train | validation | test (excluded) |
|---|---:|---:|---:|
{per_word}
"""
    tc = res.train_counts
    comp = "\n".join(f"| {lab} | {res.real_clips.get(lab, 0)} | {tc[lab]['real']} | "
                     f"{tc[lab]['synthetic']} |" for lab in LABELS)
    acc = "No real recordings were given: accuracy on synthetic speakers only.\n"
    if res.real is not None:
        ev = res.real
        g = _groups(res)
        per_class = "\n".join(
            f"| {lab} | {ev.counts[lab]} | {100 * ev.float_per_class.get(lab, float('nan')):.1f} %"
            f" | {100 * ev.int8_per_class.get(lab, float('nan')):.1f} % |"
            for lab in LABELS if ev.counts[lab])
        grp = "\n".join(
            f"| {name} ({', '.join(words)}) | {sum(ev.counts[w] for w in words)} | "
            f"{100 * _group_acc(ev, ev.float_per_class, words):.1f} % | "
            f"{100 * _group_acc(ev, ev.int8_per_class, words):.1f} % |"
            for name, words in (("keywords with many real training clips", g["rich"]),
                                ("keywords with few real training clips", g["scarce"]),
                                ("silence and unknown", (SILENCE, UNKNOWN))) if words)
        acc = f"""Real validation split: recordings of speakers the model never heard
(validation-split speakers by the dataset's rule), plus silence cut from the held-out part
of the background recordings. Float: the Keras model on float features of the C front
end. INT8: the `.tflite` on the tflite-micro interpreter, fed with the int8 features the
device computes. "Labels weighted equally" is the mean of the per-label figures, as the
canonical test set (the same number of clips for every label) would weigh them; "per clip"
is dominated by the many real "unknown" clips. Words with 3-5 validation clips move by
20-33 points per clip: read them as a rough indication only.

| | clips | float | INT8 (tflite-micro) |
|---|---:|---:|---:|
| **all, labels weighted equally** | {sum(ev.counts.values())} | \
{100 * ev.float_balanced:.2f} % | {100 * ev.int8_balanced:.2f} % |
| all, per clip | {sum(ev.counts.values())} | {100 * ev.float_overall:.2f} % | \
{100 * ev.int8_overall:.2f} % |
{grp}

| label | clips | float | INT8 |
|---|---:|---:|---:|
{per_class}
"""
    synth_line = ""
    if res.synth_int8 is not None and res.synth_float is not None:
        synth_line = (f"\nUnseen synthetic speakers (the synthetic test split): float "
                      f"{100 * res.synth_float:.2f} %, INT8 {100 * res.synth_int8:.2f} %.\n")
    data = (f"synthetic set: {synth.per_class} clips per label (80 % train), seed "
            f"{synth.seed}, espeak-ng speakers split by speaker; {100 * synth.extra_fraction:.0f} %"
            f" of the training clips spoken by flite/festival voices" if synth else
            "no synthetic set")
    a = mix.augment
    shift_whole = (" and no further than keeps the word (its 10 ms frames within 20 dB of the "
                   "loudest) whole" if a.shift_keeps_word else "")
    limits = mix.limits()
    limited = ("" if not limits else "\n\n**Ablation:** real training clips cut to "
               + ", ".join(f"{w} {n}" for w, n in sorted(limits.items()))
               + " (a seeded choice; splices and the training-clip list too), as if these "
               "words had no more real recordings than that.")
    scarce = ("" if mix.synth_keep_scarce is None or mix.synth_keep >= 1.0 else
              f", {mix.synth_keep_scarce:.0%} of those of keywords with fewer than "
              f"{mix.scarce_target} real clips")
    rare_other = ("" if not mix.unknown_word_target else
                  f" (words with fewer clips than {mix.unknown_word_target} repeated, freshly "
                  "augmented, up to about that many)")
    windows = corpus.speech if corpus is not None else ()
    speech = ("" if not (mix.other_speech and windows) else
              f" {min(mix.other_speech, len(windows))} 1 s windows of other real speech (a "
              f"seeded choice of {len(windows)}; nothing in them said like a keyword), as "
              "\"unknown\", augmented once each.")
    return _readme_head(res, command) + f"""
Data: {data}. Real clips: each training clip of a keyword with at least
{mix.scarce_target} clips {mix.real_copies} times, rarer keywords repeated up to about
{mix.scarce_target} clips (first copy augmented with chance {mix.augment_first}, the rest
freshly augmented); at most {mix.unknown_real_max} real "unknown" clips, taken from every word
alike{rare_other}; {mix.silence_real} silence clips from the background recordings;
{mix.synth_keep:.0%} of the synthetic training clips (seeded choice){scarce}.{speech}{limited}
{"" if teacher is None else chr(10) + teacher.describe(mix.splices) + chr(10)}
Augmentation (`tinydeploy/train/augment.py`): speed/pitch x{a.speed[0]}-{a.speed[1]}
(p {a.p_speed}), time shift +-{a.shift_ms} ms{shift_whole}, simulated room RT60
{a.rt60_s[0]}-{a.rt60_s[1]} s (p {a.p_reverb}), noise at {a.snr_db[0]:.0f}-{a.snr_db[1]:.0f} dB
SNR (p {a.p_noise}; real recordings {100 * a.p_real_noise:.0f} % of the time, else procedural), gain
{a.gain_db[0]:.0f}..{a.gain_db[1]:.0f} dB, SpecAugment (p {a.p_specaug}: {a.time_masks} time
masks <= {a.time_mask_frames} frames, {a.freq_masks} channel mask <= {a.freq_mask_channels}).
Features are computed once by the C front end and cached on disk as float16, then streamed
in batches.

Training: {tcfg.epochs} epochs, batch {tcfg.batch}, Adam with cosine decay from
{tcfg.learning_rate}, BatchNormalization momentum {tcfg.bn_momentum}, dropout 0.1 before the
classifier, seed {tcfg.seed}, deterministic TensorFlow ops ({tcfg.threads} threads).
Quantization: `tinydeploy.quantize.quantize_model` with {tcfg.calibration_samples} training
clips as representative data.

Training set (clips per label, augmented copies included):

| label | distinct real clips | real (with augmented copies) | synthetic |
|---|---:|---:|---:|
{comp}
{sources}
## Accuracy

{acc}{synth_line}
Timing on 2 shared cores: features {res.seconds.get('features', 0):.0f} s, training
{res.seconds.get('train', 0):.0f} s, quantization {res.seconds.get('quantize', 0):.0f} s,
evaluation {res.seconds.get('evaluate', 0):.0f} s.
"""
