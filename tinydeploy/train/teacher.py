"""A teacher for distillation: a trained keyword model whose posteriors become part of the
training targets.

Real keyword data is scarce for some words (on and off have a handful of real clips in
anything public), but models trained on the whole Speech Commands training split are
public: MLPerf Tiny's reference DS-CNN (``kws_ref_model.tflite``, Apache-2.0, trained by
MLCommons on the v0.02 *training* split only, so it never heard a validation or test
speaker). Its judgement of a clip carries what those 85,000 clips taught it, in particular
what is *not* a keyword. `Teacher.probs` gives that judgement in this project's label
order, from the same augmented audio the student is trained on (through the teacher's own
front end, e.g. the ``mlperf-kws`` preset).

The teacher runs on TensorFlow Lite's builtin kernels (no delegate): fast (about 1,700
clips per second here) and, for soft targets, exact enough; nothing the device computes is
judged by it.
"""

from __future__ import annotations

import argparse
import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tinydeploy.errors import InputDataError

# (the front end and the label set are imported where used: the CLI's parser imports this
# module for `add_teacher_args`, and `tinydeploy --help` should not load them)

# MLPerf Tiny's reference DS-CNN (kws_ref_model.tflite) orders its outputs so
MLPERF_KWS_LABELS = ("down", "go", "left", "no", "off", "on", "right", "stop", "up", "yes",
                     "_silence_", "_unknown_")


def tflite_posteriors(model: bytes, windows: np.ndarray | Sequence[np.ndarray],
                      order: list[int] | None = None) -> np.ndarray:
    """Dequantized outputs of an INT8 model for every input window (int8, the model's
    input shape without the batch), on TF Lite's builtin kernels; ``order`` picks and
    orders the output columns."""
    from tinydeploy.tfenv import quiet_tensorflow

    quiet_tensorflow()
    import tensorflow as tf

    it = tf.lite.Interpreter(model_content=model, num_threads=1,
                             experimental_op_resolver_type=tf.lite.experimental
                             .OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES)
    it.allocate_tensors()
    i_in, out = it.get_input_details()[0], it.get_output_details()[0]
    scale, zp = out["quantization"]
    cols = list(range(int(np.prod(out["shape"])))) if order is None else order
    p = np.empty((len(windows), len(cols)), np.float32)
    for j, x in enumerate(windows):
        it.set_tensor(i_in["index"], np.asarray(x, np.int8).reshape(i_in["shape"]))
        it.invoke()
        q = it.get_tensor(out["index"]).reshape(-1).astype(np.float32)
        p[j] = ((q - zp) * scale)[cols]
    return p


@dataclass(frozen=True)
class Teacher:
    """``model`` (INT8 .tflite bytes) fed by ``frontend`` (a preset name or front-end JSON
    path), whose outputs are ``labels`` in order (the same label set as `LABELS`, any
    order). ``weight``: the teacher's share of a real clip's training target (the rest is
    the clip's own label)."""

    model: bytes
    frontend: str
    labels: tuple[str, ...]
    weight: float = 0.5
    source: str = "teacher.tflite"      # its file name, for the model's README

    def __post_init__(self) -> None:
        from tinydeploy.train.data import LABELS

        if sorted(self.labels) != sorted(LABELS):
            raise InputDataError(f"teacher labels {' '.join(self.labels)} are not this "
                                 f"project's {len(LABELS)} labels",
                                 hint=f"name them in the teacher's output order: "
                                      f"{' '.join(LABELS)} in some order")
        if not 0.0 <= self.weight <= 1.0:
            raise InputDataError(f"teacher weight {self.weight} is outside [0, 1]")

    @classmethod
    def load(cls, path: Path, frontend: str, labels: str, weight: float) -> Teacher:
        try:
            model = path.read_bytes()
        except OSError as err:
            raise InputDataError(f"{path}: cannot read the teacher model ({err})") from err
        from tinydeploy.frontend.presets import resolve_frontend

        resolve_frontend(frontend)          # a bad name or file fails here, not mid-build
        return cls(model, frontend, tuple(labels.split()), weight, path.name)

    def describe(self, splices: int) -> str:
        """A paragraph for the model's README."""
        return (f"Distillation: every real clip's training target is its label mixed with "
                f"the posteriors of the teacher `{self.source}` (sha256 "
                f"`{hashlib.sha256(self.model).hexdigest()}`, front end `{self.frontend}`, "
                f"outputs {' '.join(self.labels)}) at {self.weight:.0%}; synthetic clips keep "
                f"their own label. The teacher judges each clip before augmentation. "
                f"{splices} more clips, each the start of one real training clip and the end "
                f"of another (`--splices`), take the teacher's posteriors alone; they are "
                f"not counted in the table below.")

    @property
    def key(self) -> str:
        """Identifies the teacher's targets (model, front end, labels, weight)."""
        return hashlib.sha256(repr((hashlib.sha256(self.model).hexdigest(), self.frontend,
                                    self.labels, self.weight)).encode()).hexdigest()

    def probs(self, audio: np.ndarray) -> np.ndarray:
        """Posteriors [n, len(LABELS)] of int16 clips [n, samples], in `LABELS` order."""
        from tinydeploy.frontend.native import input_quant_of
        from tinydeploy.frontend.presets import resolve_frontend
        from tinydeploy.train.data import LABELS

        choice = resolve_frontend(self.frontend)
        fe = choice.spec.host(choice.config)
        windows = fe.features_s8(audio, input_quant_of(self.model))
        p = tflite_posteriors(self.model, windows, [self.labels.index(lab) for lab in LABELS])
        return p / np.maximum(p.sum(axis=1, keepdims=True), 1e-6)


def add_teacher_args(ap: argparse.ArgumentParser) -> None:
    """``--teacher`` and its options, for every command that trains."""
    ap.add_argument("--teacher", type=Path, default=None, metavar="MODEL",
                    help="distil from this INT8 keyword model: its posteriors of every real "
                         "training clip become part of the clip's target")
    ap.add_argument("--teacher-frontend", default="mlperf-kws",
                    help="the teacher's front end: a preset or a front-end JSON file")
    ap.add_argument("--teacher-labels", default=" ".join(MLPERF_KWS_LABELS),
                    help="the teacher's output labels in order (default: MLPerf Tiny's "
                         "reference DS-CNN's)")
    ap.add_argument("--teacher-weight", type=float, default=0.5,
                    help="the teacher's share of a real clip's target")
    ap.add_argument("--splices", type=int, default=0,
                    help="clips spliced from the start of one real clip and the end of "
                         "another, labelled by the teacher alone")


def teacher_from_args(args: argparse.Namespace) -> Teacher | None:
    """The `Teacher` the options of `add_teacher_args` name (None without ``--teacher``);
    raises `InputDataError` for a bad one, or for splices without a teacher."""
    if args.splices < 0:
        raise InputDataError(f"--splices {args.splices}: a count of clips, at least 0")
    if args.teacher is None:
        if args.splices:
            raise InputDataError(f"--splices {args.splices} needs a teacher to label them",
                                 hint="give --teacher MODEL, or leave --splices out")
        return None
    return Teacher.load(args.teacher, args.teacher_frontend, args.teacher_labels,
                        args.teacher_weight)
