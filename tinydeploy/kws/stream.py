"""Streaming keyword spotting: the detector (a Python twin of firmware/app/kws/td_kws_detect.c),
a long test stream with known word positions, a scorer (hits, misses, false alarms per hour),
a host simulation of the device app, and streaming audio to a device running the ``kws`` app.

The twin does the same float32 operations in the same order as the C, so it makes the same
decisions (tests/test_kws_detect.py checks this on random sequences).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from tinydeploy.errors import InputDataError
from tinydeploy.frontend.native import Quant
from tinydeploy.frontend.presets import FrontendChoice, HostFeatures, check_model_input, choice_of
from tinydeploy.kws.labels import LABELS, SILENCE, UNKNOWN

MAX_LABELS = 16
MAX_AVG = 16
AUDIO_CHUNK = 126      # samples per AUDIO frame: 4 + 2 * 126 = 256 bytes, the payload limit


@dataclass(frozen=True)
class DetectorConfig:
    """Mirrors the kws app's TD_KWS_* macros (firmware/app/kws/td_kws_pipeline.h).

    A model's own settings come from the ``detector.json`` beside it (`model_detector`):
    each model in ``models/`` carries the detector it was tuned with on the continuous
    validation stream (examples/kws/validate.py; figures in its README), per-keyword
    thresholds included. These defaults are the fallback for a model without one:
    threshold 0.93 on the average of 6 windows, 750 ms suppression, an inference every 4th
    frame (80 ms), which also lets the nRF52840 keep up with a full-window DS-CNN."""

    avg_windows: int = 6
    threshold: float = 0.93
    suppress_ms: int = 750
    first_keyword: int = 2
    infer_every: int = 4          # frames (strides) between inferences
    keyword_end: int = 0          # keywords are [first_keyword, keyword_end); 0: to the last
    class_thresholds: tuple[float, ...] = ()   # one per label in place of threshold; (): none

    def __post_init__(self) -> None:
        if self.keyword_end and self.keyword_end <= self.first_keyword:
            raise InputDataError(f"keyword_end={self.keyword_end} must exceed first_keyword="
                                 f"{self.first_keyword}")
        if not 1 <= self.avg_windows <= MAX_AVG:
            raise InputDataError(f"avg_windows={self.avg_windows} must be in [1, {MAX_AVG}]")
        if self.infer_every < 1:
            raise InputDataError(f"infer_every={self.infer_every} must be >= 1")
        if any(not 0.0 < t <= 1.0 for t in self.class_thresholds):   # as the C checks
            raise InputDataError(f"class thresholds must be in (0, 1], got "
                                 f"{self.class_thresholds}")

    def thresholds(self, n_labels: int) -> np.ndarray:
        """The threshold of every label (float32, as the device keeps them)."""
        if not self.class_thresholds:
            return np.full(n_labels, self.threshold, dtype=np.float32)
        if len(self.class_thresholds) != n_labels:
            raise InputDataError(f"detector: {len(self.class_thresholds)} class thresholds "
                                 f"for a model of {n_labels} labels")
        return np.asarray(self.class_thresholds, dtype=np.float32)


DETECTOR_FILE = "detector.json"
_DETECTOR_KEYS = ("threshold", "avg_windows", "suppress_ms", "infer_every", "class_thresholds")


def model_detector(model: Path | None, labels: Sequence[str] | None = None) -> DetectorConfig:
    """The detector defaults of ``model``: `DetectorConfig`'s, with the settings of a
    ``detector.json`` beside the model (any of threshold, avg_windows, suppress_ms,
    infer_every, and class_thresholds: an object of label name -> threshold for the labels
    that differ from threshold) in their place: the detector a model was tuned with travels
    with it. ``labels``: the model's label names (default: its labels.txt), needed only for
    class_thresholds."""
    base = DetectorConfig()
    path = None if model is None else Path(model).parent / DETECTOR_FILE
    if path is None or not path.is_file():
        return base
    import json

    try:
        doc = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise InputDataError(f"{path}: not a JSON detector file ({e})") from None
    if not isinstance(doc, dict) or set(doc) - set(_DETECTOR_KEYS):
        raise InputDataError(f"{path}: expected an object with some of "
                             f"{', '.join(_DETECTOR_KEYS)}",
                             hint=f"unknown: {', '.join(sorted(set(doc) - set(_DETECTOR_KEYS)))}"
                             if isinstance(doc, dict) else None)
    per_label = doc.pop("class_thresholds", None)
    for k, v in doc.items():
        whole = isinstance(v, int) and not isinstance(v, bool)
        if not (whole or (k == "threshold" and isinstance(v, float))):
            raise InputDataError(f"{path}: {k} must be "
                                 f"{'a number' if k == 'threshold' else 'a whole number'}, "
                                 f"got {v!r}")
    threshold = float(doc.get("threshold", base.threshold))
    if not 0.0 < threshold <= 1.0:
        raise InputDataError(f"{path}: threshold must be in (0, 1], got {threshold}")
    return replace(base, threshold=threshold,
                   avg_windows=int(doc.get("avg_windows", base.avg_windows)),
                   suppress_ms=int(doc.get("suppress_ms", base.suppress_ms)),
                   infer_every=int(doc.get("infer_every", base.infer_every)),
                   class_thresholds=_class_thresholds(path, per_label, threshold, model,
                                                      labels))


def _class_thresholds(path: Path, per_label: Any, threshold: float, model: Path | None,
                      labels: Sequence[str] | None) -> tuple[float, ...]:
    """detector.json's class_thresholds as one threshold per label (() when absent)."""
    if per_label is None:
        return ()
    if not isinstance(per_label, dict) or not all(
            isinstance(v, (int, float)) and not isinstance(v, bool) and 0.0 < v <= 1.0
            for v in per_label.values()):
        raise InputDataError(f"{path}: class_thresholds must map label names to "
                             f"thresholds in (0, 1]", hint=f"got {per_label!r}")
    if labels is None:
        from tinydeploy.kws.labels import load_labels

        labels = load_labels(Path(model)) if model is not None else []
    unknown = sorted(set(per_label) - set(labels))
    if unknown:
        raise InputDataError(f"{path}: class_thresholds names labels the model does not "
                             f"have: {', '.join(unknown)}",
                             hint=f"its labels: {' '.join(labels)}")
    return tuple(float(per_label.get(name, threshold)) for name in labels)


@dataclass(frozen=True)
class Detection:
    label: int
    score: float
    time_ms: int


class Detector:
    """Moving average of the last ``avg_windows`` probability vectors (oldest first, float32),
    the best keyword against its threshold; after an event ``suppress_ms`` of quiet for every
    label, and the same label again only once its average fell below its threshold / 2."""

    def __init__(self, n_labels: int, cfg: DetectorConfig) -> None:
        if not 0 < n_labels <= MAX_LABELS or cfg.first_keyword >= n_labels or \
                cfg.keyword_end > n_labels:
            raise InputDataError(f"detector: {n_labels} labels, first keyword "
                                 f"{cfg.first_keyword}, keyword end {cfg.keyword_end}")
        self.n = n_labels
        self.end = cfg.keyword_end or n_labels
        self.cfg = cfg
        self.thr = cfg.thresholds(n_labels)
        self.reset()

    def reset(self) -> None:
        self.hist = np.zeros((self.cfg.avg_windows, self.n), dtype=np.float32)
        self.seen = 0
        self.next = 0
        self.last_event_ms: int | None = None
        self.last_label = 0
        self.released = False
        self.avg = np.zeros(self.n, dtype=np.float32)

    def push(self, probs: np.ndarray, time_ms: int) -> Detection | None:
        w = self.cfg.avg_windows
        self.hist[self.next] = np.asarray(probs, dtype=np.float32)[:self.n]
        self.next = (self.next + 1) % w
        self.seen += 1
        n = min(self.seen, w)
        order = list(range(n)) if self.seen < w else [(self.next + i) % w for i in range(n)]
        for k in range(self.n):
            s = np.float32(0.0)
            for slot in order:
                s = np.float32(s + self.hist[slot, k])
            self.avg[k] = np.float32(s / np.float32(n))
        kw = self.avg[self.cfg.first_keyword:self.end]
        best = self.cfg.first_keyword + int(np.argmax(kw))     # first maximum, as in the C
        if self.last_event_ms is not None and \
                self.avg[self.last_label] < np.float32(np.float32(0.5) *
                                                       self.thr[self.last_label]):
            self.released = True
        if self.seen < w or self.avg[best] < self.thr[best]:
            return None
        if self.last_event_ms is not None and (
                (time_ms - self.last_event_ms) % (1 << 32) < self.cfg.suppress_ms
                or (best == self.last_label and not self.released)):
            return None
        self.released = False
        self.last_label = best
        self.last_event_ms = time_ms
        return Detection(best, float(self.avg[best]), time_ms)


# ---- test streams and scoring -------------------------------------------------------------------

@dataclass(frozen=True)
class Word:
    """A keyword placed in a stream: the clip occupies [start_ms, end_ms)."""

    label: int
    start_ms: int
    end_ms: int


@dataclass(frozen=True)
class TestStream:
    audio: np.ndarray             # int16
    words: tuple[Word, ...]       # keywords only (unknown words are distractors)
    sample_rate: int = 16000

    @property
    def hours(self) -> float:
        return self.audio.size / self.sample_rate / 3600.0


def build_stream(clips: np.ndarray, labels: np.ndarray, *, seed: int = 0,
                 gap_s: tuple[float, float] = (0.5, 2.0), noise_dbfs: float = -50.0,
                 sample_rate: int = 16000) -> TestStream:
    """Concatenate 1 s clips separated by random gaps of background noise, recording where
    each keyword clip lies. Silence and unknown clips are included as distractors."""
    rng = np.random.default_rng(seed)
    pieces: list[np.ndarray] = []
    words: list[Word] = []
    pos = 0
    noise_rms = 10 ** (noise_dbfs / 20) * 32768
    for clip, lab in zip(clips, labels, strict=True):
        gap = int(rng.uniform(*gap_s) * 1000) * sample_rate // 1000    # whole milliseconds
        pieces.append(rng.normal(0, noise_rms, gap))
        pos += gap
        c = clip.astype(np.float64) + rng.normal(0, noise_rms, clip.size)
        pieces.append(c)
        if LABELS[int(lab)] not in (SILENCE, UNKNOWN):
            words.append(Word(int(lab), pos * 1000 // sample_rate,
                              (pos + clip.size) * 1000 // sample_rate))
        pos += clip.size
    tail = int(gap_s[1] * sample_rate)
    pieces.append(rng.normal(0, noise_rms, tail))
    audio = np.clip(np.round(np.concatenate(pieces)), -32768, 32767).astype(np.int16)
    return TestStream(audio, tuple(words), sample_rate)


@dataclass(frozen=True)
class StreamScore:
    words: int
    hits: int
    misses: int
    false_alarms: int            # detections matching no word (incl. wrong labels)
    substitutions: int           # of the false alarms: in another word's span (wrong label)
    hours: float
    latency_ms: tuple[int, ...] = field(default=())   # per hit: detection time - word start

    @property
    def hit_rate(self) -> float:
        return self.hits / self.words if self.words else 0.0

    @property
    def false_alarms_per_hour(self) -> float:
        return self.false_alarms / self.hours if self.hours else 0.0

    def as_dict(self) -> dict[str, Any]:
        return {"words": self.words, "hits": self.hits, "misses": self.misses,
                "false_alarms": self.false_alarms, "substitutions": self.substitutions,
                "hours": self.hours, "hit_rate": self.hit_rate,
                "false_alarms_per_hour": self.false_alarms_per_hour,
                "median_latency_ms": float(np.median(self.latency_ms)) if self.latency_ms
                else None}


def score_stream(detections: Sequence[Detection], words: Sequence[Word], hours: float,
                 tolerance_ms: int = 1000) -> StreamScore:
    """Match detections to words: a detection hits a word of the same label when its time lies
    in [start_ms, end_ms + tolerance_ms) (the model sees a word only after it was spoken);
    each word is hit at most once, each detection counts once (earliest unmatched word
    first). Every unmatched detection is a false alarm."""
    used = [False] * len(words)
    hits, fa, subs = 0, 0, 0
    lat: list[int] = []
    for d in sorted(detections, key=lambda d: (d.time_ms, d.label)):
        match = None
        inside = False
        for i, w in enumerate(words):
            if w.start_ms <= d.time_ms < w.end_ms + tolerance_ms:
                inside = inside or w.label != d.label
                if w.label == d.label and not used[i]:
                    match = i
                    break
        if match is None:
            fa += 1
            subs += int(inside)
        else:
            used[match] = True
            hits += 1
            lat.append(d.time_ms - words[match].start_ms)
    return StreamScore(len(words), hits, len(words) - hits, fa, subs, hours, tuple(lat))


# ---- host simulation of the device app ----------------------------------------------------------

def stream_features(audio: np.ndarray, fe: HostFeatures, quant: Quant) -> np.ndarray:
    """int8 features of every frame of a long stream [frames, n_out], exactly as the device
    computes them frame by frame (any preset's host front end)."""
    return fe.stream_s8(audio, quant)


def stream_windows_of(fe: HostFeatures, audio: np.ndarray, quant: Quant, infer_every: int = 1
                      ) -> tuple[np.ndarray, np.ndarray]:
    """The model input of every window the kws app runs, and the frames computed at each:
    the host front end's own ``stream_windows_s8`` when it has one (a preset whose rows
    depend on the window), else slices of its frame-by-frame rows."""
    own = getattr(fe, "stream_windows_s8", None)
    if own is not None:
        return own(audio, quant, infer_every)
    rows = fe.stream_s8(audio, quant)
    frames = fe.cfg.frames
    steps = np.arange(frames, rows.shape[0] + 1, infer_every, dtype=np.int64)
    wins = np.stack([rows[f - frames:f] for f in steps]) if steps.size else \
        np.empty((0, frames, fe.cfg.n_out), dtype=np.int8)
    return wins, steps


def stream_posteriors(audio: np.ndarray, model_bytes: bytes, fcfg: Any,
                      infer_every: int = 1,
                      progress: Callable[[int, int], None] | None = None
                      ) -> tuple[np.ndarray, np.ndarray]:
    """Dequantized model outputs of every inference window the kws app would run, and the
    audio time (ms) of each window's end: the C front end and the INT8 model on the
    tflite-micro interpreter. ([windows, labels] float32, [windows] int64)."""
    from tflite_micro.python.tflite_micro import runtime

    from tinydeploy.frontend.native import input_quant_of
    from tinydeploy.model.loader import load_tflite

    g = load_tflite(model_bytes)
    out_t = g.outputs[0]
    if out_t.quant is None:
        raise InputDataError("model output is not quantized")
    o_scale, o_zp = np.float32(out_t.quant.scale[0]), int(out_t.quant.zero_point[0])
    choice = fcfg if isinstance(fcfg, FrontendChoice) else choice_of(fcfg)
    fcfg = choice.config
    check_model_input(choice, tuple(g.inputs[0].shape), "model")
    fe = choice.spec.host(fcfg)
    in_shape = tuple(int(d) for d in g.inputs[0].shape)
    wins, steps = stream_windows_of(fe, audio, input_quant_of(model_bytes), infer_every)
    it = runtime.Interpreter.from_bytes(model_bytes)
    probs = np.empty((len(steps), int(np.prod(out_t.shape))), dtype=np.float32)
    times = np.empty(len(steps), dtype=np.int64)
    for j, f in enumerate(steps):
        it.set_input(wins[j].reshape(in_shape), 0)
        it.invoke()
        q = it.get_output(0).reshape(-1).astype(np.int32)
        probs[j] = (q - o_zp).astype(np.float32) * o_scale
        times[j] = ((f - 1) * fcfg.stride + fcfg.window) // (fcfg.sample_rate // 1000)
        if progress and j % 500 == 0:
            progress(j, len(steps))
    return probs, times


def detect(probs: np.ndarray, times: np.ndarray, dcfg: DetectorConfig) -> list[Detection]:
    """The detector twin over a sequence of windows."""
    det = Detector(probs.shape[1], dcfg)
    out = []
    for p, t in zip(probs, times, strict=True):
        d = det.push(p, int(t))
        if d is not None:
            out.append(d)
    return out


def simulate_stream(audio: np.ndarray, model_bytes: bytes, fcfg: Any,
                    dcfg: DetectorConfig, *, progress: Callable[[int, int], None] | None = None
                    ) -> list[Detection]:
    """What the kws app would emit for ``audio`` (host simulation, window by window)."""
    probs, times = stream_posteriors(audio, model_bytes, fcfg, dcfg.infer_every, progress)
    return detect(probs, times, dcfg)


# ---- a device running the kws app -------------------------------------------------------------

@dataclass(frozen=True)
class DeviceStreamResult:
    detections: tuple[Detection, ...]
    windows: int
    per_window_min: int
    per_window_max: int
    per_window_mean: float
    frontend_total: int
    model_total: int
    unit: str
    seconds: float
    last_output: bytes | None = None     # model output 0 of the last window (OUTPUT replies)
    stack_peak: int | None = None        # the device's stack high-water mark (last DONE)
    stack_size: int | None = None        # and its stack reserve (protocol 2 on)


AUDIO_ATTEMPTS = 6      # clean-reply attempts per AUDIO frame before the stream is given up
AUDIO_RETRIES = 16      # resends of one attempt after a timeout or a damaged request (at least)
AUDIO_TIMEOUT = 5.0     # s per reply at most: a frame's work is one or two windows, so a dead
                        # device is given up within AUDIO_RETRIES x AUDIO_TIMEOUT (85 s)


def stream_to_device(session: Any, audio: np.ndarray, *, realtime: bool = False,
                     sample_rate: int = 16000,
                     on_detection: Callable[[Detection], None] | None = None,
                     on_window: Callable[[int, bytes | None, Any], None] | None = None,
                     attempts: int = AUDIO_ATTEMPTS) -> DeviceStreamResult:
    """Send ``audio`` in AUDIO frames (stream index 0 first, so the device starts a new
    stream); at real time (paced by the wall clock) or as fast as the link allows. EVENT
    frames become detections (``on_detection`` is called as they arrive); DONE/PROFILE
    replies give the per-window counts; ``on_window(windows_so_far, output, done)`` is called
    after every frame that completed a window, with its last window's model output 0 and the
    frame's DONE (counts, and the device's stack high-water mark from protocol 2 on).

    A flaky link never changes a result: the replies of one AUDIO frame (its EVENTs, OUTPUT,
    PROFILE, DONE and ACK) count only from an attempt during which no damaged frame arrived
    from the device (a request the device rejected as damaged, or that timed out, is resent
    by the session within the attempt); otherwise the frame is sent again and the device, which
    recognises a resent frame, answers with the same replies without computing anything
    (firmware/app/kws/main.c). After ``attempts`` unclean attempts, or when the device lost
    the stream (a reset: it expects another sample index), a LinkError names the samples
    whose results are unknown. EVENTs are unsolicited (sequence 0): a late copy of an EVENT
    already counted (same audio time) is dropped, as detections are strictly increasing in
    time."""
    from tinydeploy.errors import LinkError
    from tinydeploy.link.messages import Audio, Done, Event, MsgType, Output, Profile

    dets: list[Detection] = []
    runs, lo, hi, total, fe, model, unit = 0, -1, 0, 0, 0, 0, ""
    last: bytes | None = None
    stack: tuple[int | None, int | None] = (None, None)
    pending: list[Detection] = []        # EVENTs of the current attempt

    def take(msg: Any) -> None:
        if isinstance(msg, Event):
            pending.append(Detection(int(msg.label), float(msg.score), int(msg.timestamp_ms)))

    prev = session.on_message

    def hook(m: Any, seq: int) -> None:
        take(m)
        if prev:
            prev(m, seq)

    session.on_message = hook
    # a stream cannot go back: resending a damaged AUDIO frame is cheap, losing it is not
    retries = getattr(session, "retries", AUDIO_RETRIES)
    timeout = getattr(session, "timeout", AUDIO_TIMEOUT)
    session.retries = max(retries, AUDIO_RETRIES)
    session.timeout = min(timeout, AUDIO_TIMEOUT)
    x = np.ascontiguousarray(audio, dtype="<i2")
    t0 = time.monotonic()
    stats = session.stats
    try:
        for start in range(0, x.size, AUDIO_CHUNK):
            if realtime:
                due = t0 + start / sample_rate
                delay = due - time.monotonic()
                if delay > 0:
                    time.sleep(delay)
            msg = Audio(start, x[start:start + AUDIO_CHUNK].tobytes())
            end = start + len(msg.pcm) // 2
            for _attempt in range(attempts):
                pending.clear()
                bad = stats.bad_frames
                try:
                    replies = session.request(msg, MsgType.ACK)
                except LinkError as e:
                    if "AUDIO gap" in e.message:
                        raise LinkError(
                            f"the keyword stream was lost at sample {start} "
                            f"({start / sample_rate:.2f} s): {e.message}; detections and "
                            "windows from there on are unknown",
                            hint="was the device reset? stream again from the start") from None
                    raise LinkError(f"{e.message}; the results of samples [{start}, {end}) "
                                    f"are unknown", hint=e.hint) from None
                if stats.bad_frames == bad:
                    break
                stats.retries += 1
                session.resync()
            else:
                raise LinkError(f"AUDIO samples [{start}, {end}): a damaged reply in each of "
                                f"{attempts} attempts, its detections and window result are "
                                f"unknown", hint="check the cable and the baud rate")
            chunks: dict[int, bytes] = {}
            done = None
            for m in replies:
                if isinstance(m, Output):
                    if m.tensor == 0:
                        chunks[m.offset] = m.data
                elif isinstance(m, Done):
                    done = m
                elif isinstance(m, Profile) and len(m.counts) >= 2:
                    fe += m.counts[0]
                    model += m.counts[1]
                else:
                    take(m)
            for d in pending:
                if dets and d.time_ms <= dets[-1].time_ms:
                    continue          # a late copy of an EVENT already counted
                dets.append(d)
                if on_detection:
                    on_detection(d)
            if done is not None:
                runs += done.runs
                lo = done.min if lo < 0 else min(lo, done.min)
                hi = max(hi, done.max)
                total += done.total
                unit = done.unit
                stack = (getattr(done, "stack_peak", None), getattr(done, "stack_size", None))
                if chunks:
                    last = b"".join(chunks[k] for k in sorted(chunks))
                if on_window and done.runs:
                    on_window(runs, last if chunks else None, done)
    finally:
        session.on_message = prev
        session.retries, session.timeout = retries, timeout
    return DeviceStreamResult(tuple(dets), runs, max(lo, 0), hi, total / runs if runs else 0.0,
                              fe, model, unit, time.monotonic() - t0, last, *stack)
