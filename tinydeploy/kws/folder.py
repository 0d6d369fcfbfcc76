"""Scoring a keyword model clip by clip on a folder of WAV files laid out by label.

Layout (Speech Commands'): one sub-folder per label, named after it, holding 1 s clips.
Folder names match the model's labels case-insensitively and without surrounding underscores
(``_silence_`` = ``Silence``). ``_background_noise_`` holds long recordings, not clips: it is
skipped. Any other sub-folder is a word the model does not know: its clips count as the model's
"unknown" label when it has one (the Speech Commands convention), else they are skipped; both
are reported. Each clip is fitted to one window (zero-padded at the end, or centre-cropped) and
scored by the top-1 of the one inference window the kws app runs on it: on a device (the clip
streamed as its own stream) or simulated (the host C front end and tflite-micro).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from tinydeploy.errors import InputDataError

BACKGROUND = "_background_noise_"


def _norm(name: str) -> str:
    return name.strip("_").lower()


@dataclass(frozen=True)
class LabelledFolder:
    files: tuple[Path, ...]               # sorted by (label, path)
    labels: np.ndarray                    # int64 [n], index into the model's labels
    as_unknown: dict[str, int] = field(default_factory=dict)   # folder -> clips
    skipped: dict[str, int] = field(default_factory=dict)      # folder -> files


def collect_folder(folder: Path, labels: list[str], max_per_class: int | None = None
                   ) -> LabelledFolder:
    folder = Path(folder)
    if not folder.is_dir():
        raise InputDataError(f"{folder}: not a folder",
                             hint="kws score --data FOLDER: one sub-folder of WAV files per label")
    index = {_norm(n): i for i, n in enumerate(labels)}
    unknown = index.get("unknown")
    files: list[Path] = []
    ys: list[int] = []
    as_unknown: dict[str, int] = {}
    skipped: dict[str, int] = {}
    subs = sorted(p for p in folder.iterdir() if p.is_dir())
    for sub in subs:
        wavs = sorted(p for p in sub.rglob("*") if p.suffix.lower() == ".wav")
        if max_per_class is not None:
            wavs = wavs[:max_per_class]
        if not wavs:
            continue
        if sub.name == BACKGROUND:
            skipped[sub.name] = len(wavs)
            continue
        y = index.get(_norm(sub.name))
        if y is None:
            if unknown is None:
                skipped[sub.name] = len(wavs)
                continue
            as_unknown[sub.name] = len(wavs)
            y = unknown
        files.extend(wavs)
        ys.extend([y] * len(wavs))
    if not files:
        raise InputDataError(f"{folder}: no WAV clips in sub-folders named after the labels "
                             f"({', '.join(labels)})",
                             hint="one sub-folder per label, e.g. FOLDER/yes/*.wav")
    return LabelledFolder(tuple(files), np.asarray(ys, dtype=np.int64), as_unknown, skipped)


@dataclass(frozen=True)
class FolderScore:
    labels: tuple[str, ...]
    y: np.ndarray
    pred: np.ndarray

    @property
    def n(self) -> int:
        return int(self.y.size)

    @property
    def top1(self) -> float:
        return float((self.y == self.pred).mean()) if self.n else 0.0

    def confusion(self) -> np.ndarray:
        """[true label, predicted label] clip counts."""
        k = len(self.labels)
        m = np.zeros((k, k), dtype=np.int64)
        np.add.at(m, (self.y, self.pred), 1)
        return m

    def per_class(self) -> dict[str, dict[str, Any]]:
        out = {}
        for i, name in enumerate(self.labels):
            sel = self.y == i
            if sel.any():
                out[name] = {"n": int(sel.sum()), "top1": float((self.pred[sel] == i).mean())}
        return out


def fit_clips(files: tuple[Path, ...], cfg: Any) -> np.ndarray:
    from tinydeploy.kws.wav import fit_clip, read_wav

    return np.stack([fit_clip(read_wav(p, cfg.sample_rate), cfg.clip_samples) for p in files])


def host_predictions(clips: np.ndarray, model_bytes: bytes, choice: Any,
                     progress: Callable[[int, int], None] | None = None,
                     reference: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Top-1 and int8 outputs per clip, simulated: the window the kws app would run on the
    clip (the preset's host C front end) through tflite-micro; with ``reference``, the
    preset's Python/TensorFlow reference features of the whole clip instead."""
    from tflite_micro.python.tflite_micro import runtime

    from tinydeploy.frontend.native import input_quant_of
    from tinydeploy.frontend.presets import check_model_input
    from tinydeploy.kws.stream import stream_windows_of
    from tinydeploy.model.loader import load_tflite

    g = load_tflite(model_bytes)
    shape = tuple(int(d) for d in g.inputs[0].shape)
    check_model_input(choice, shape, "model")
    quant = input_quant_of(model_bytes)
    fe = None if reference else choice.spec.host(choice.config)
    it = runtime.Interpreter.from_bytes(model_bytes)
    outs = []
    for i, clip in enumerate(clips):
        if reference:
            x = choice.spec.reference(clip, choice.config, quant)
        else:
            assert fe is not None
            wins, _ = stream_windows_of(fe, clip, quant)
            x = wins[-1]
        it.set_input(np.asarray(x, dtype=np.int8).reshape(shape), 0)
        it.invoke()
        outs.append(it.get_output(0).reshape(-1).astype(np.int8))
        if progress and (i + 1) % 100 == 0:
            progress(i + 1, len(clips))
    o = np.stack(outs)
    return np.argmax(o, axis=1), o


def device_predictions(session: Any, clips: np.ndarray,
                       progress: Callable[[int, int], None] | None = None, every: int = 20
                       ) -> tuple[np.ndarray, np.ndarray]:
    """Top-1 and int8 outputs per clip from a device running the kws app: each clip is its own
    stream (first sample 0), whose one window's output comes back in OUTPUT."""
    from tinydeploy.errors import LinkError
    from tinydeploy.kws.stream import stream_to_device

    outs = []
    for i, clip in enumerate(clips):
        res = stream_to_device(session, clip)
        if res.last_output is None or res.windows != 1:
            raise LinkError(f"clip {i}: the device ran {res.windows} windows and sent "
                            f"{'no' if res.last_output is None else 'an'} output (expected 1)",
                            hint="is the firmware the kws app of this tinydeploy version?")
        outs.append(np.frombuffer(res.last_output, dtype=np.int8).copy())
        if progress and (i + 1) % every == 0:
            progress(i + 1, len(clips))
    o = np.stack(outs)
    return np.argmax(o, axis=1), o


def score_json(score: FolderScore, lf: LabelledFolder) -> dict[str, Any]:
    return {"n": score.n, "top1": score.top1, "per_class": score.per_class(),
            "confusion": {"labels": list(score.labels),
                          "matrix": score.confusion().tolist()},
            "as_unknown": lf.as_unknown, "skipped": lf.skipped}


def wav_folder_features(folder: Path, cfg: Any,
                        labels: list[str] | None = None) -> tuple[np.ndarray,
                                                                  np.ndarray | None]:
    """Float features (the model's float input) of every WAV below ``folder``, sorted by path,
    each fitted to one clip; with ``labels``, also each file's label index taken from its
    parent folder's name (Speech Commands layout), or an InputDataError naming the file.
    ``cfg``: any preset's config (or a `FrontendChoice`) whose preset has float features."""
    from tinydeploy.frontend.presets import FrontendChoice, choice_of

    folder = Path(folder)
    if not folder.is_dir():
        raise InputDataError(f"{folder}: not a folder of WAV files",
                             hint="--frontend kws takes a folder (e.g. one sub-folder per word)")
    files = sorted(p for p in folder.rglob("*") if p.suffix.lower() == ".wav")
    if not files:
        raise InputDataError(f"{folder}: no .wav files found (searched sub-folders too)")
    choice = cfg if isinstance(cfg, FrontendChoice) else choice_of(cfg)
    cfg = choice.config
    if choice.spec.float_features is None:
        raise InputDataError(f"front-end preset '{choice.preset.value}' has no float features "
                             f"to calibrate a float model on",
                             hint="calibrate with an .npz of the model's float inputs instead")
    x = np.asarray(choice.spec.float_features(cfg, fit_clips(tuple(files), cfg)),
                   dtype=np.float32)
    y = None
    if labels is not None:
        idx = {name: i for i, name in enumerate(labels)}
        missing = [p for p in files if p.parent.name not in idx]
        if missing:
            raise InputDataError(f"{missing[0]}: its folder '{missing[0].parent.name}' is not "
                                 f"one of the labels ({', '.join(labels)})",
                                 hint="name each sub-folder after its label, or drop --labels")
        y = np.asarray([idx[p.parent.name] for p in files], dtype=np.int64)
    return x, y
