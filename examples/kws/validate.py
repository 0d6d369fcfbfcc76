"""What a user hears, measured on validation-split speakers only: per-class top-1 on real
clips, and keywords detected / false alarms per hour on a continuous validation stream, with
a detector grid (threshold, averaging, suppression, inference interval) tuned on that stream.

    nice -n 10 .venv/bin/python examples/kws/validate.py $DATA/speech/* \\
        --testing-list $DATA/testing_list.txt [--model M] [--minutes 240] [--check-minutes 60]
        [--max-fa 10] [--fa-confidence 0.8] [--detector-out DETECTOR_JSON] [--json OUT]

Clips: every real validation-split clip (the dataset's speaker-hash rule; clips of test-split
speakers or named in the testing list are never read) plus 1 s slices of the held-out part of
the background recordings as silence, through the C front end's int8 features and the INT8
model on tflite-micro.

Streams: a word starts every 2-4 s (two keywords for every other word, drawn from
validation-split speakers; on/off, with few clips, are repeated), each scaled to 10-35 dB SNR
(median about 23 dB; peaks kept below -4 dBFS) over a continuous bed of the held-out
background recordings (pieces of 2-6 s at -55 to -40 dBFS). A keyword counts as detected when
the detector names it between its start and 1 s after its end
(`tinydeploy.kws.stream.score_stream`); every other detection is a false alarm. Two streams
of the same speakers, mixed with different seeds: the detector is tuned on the first
(``--minutes``, seed ``--seed``), the figures come from the second (``--check-minutes``, the
next seed), which only decides whether per-keyword thresholds are kept.

Tuning: the model's outputs for every 20 ms window are computed once with TF Lite's builtin
kernels; every detector setting of the grid is replayed on them (an inference interval of k
frames keeps every k-th window). Chosen: the most keywords detected among the settings whose
false-alarm rate is at most ``--max-fa`` per hour with ``--fa-confidence`` (the Poisson
upper confidence bound of the count on the tuning stream, `fa_rate_bound`; else the fewest
false alarms; the curve of the tuning stream, the most keywords at 2, 5, 10 and 20 false
alarms per hour as counted, is reported beside it to compare models by). The setting that
detects the most keywords exactly at the bound of a finite
stream is chosen because it was lucky there as much as because it is good: measured, the
streaming model's detectors chosen at exactly 10 per hour on a 2-hour stream gave 12 to 19 per
hour on two fresh 1-hour streams of the same speakers. From there each
keyword's own threshold is refined (coordinate ascent, 0.50-0.99) under the same bound; they
are kept only if, replayed on the check stream, they detect more keywords than a single
threshold can with as few false alarms there (any setting of the grid: they must lie above
the check stream's single-threshold frontier, not only above the tuned setting). The chosen setting
(``--detector-out``: a ``detector.json`` for the model) and the model's shipped one are then
run exactly on the check stream with the host twin of the device
(`tinydeploy.kws.stream.simulate_stream`: C front end, tflite-micro, detector), with the
keywords detected per word and per 5 dB band of their SNR.

``--test-report`` also measures real clips of test-split speakers, and ``--canonical-test DIR``
the dataset's published test set (a folder per label), for reporting only: they print the
figures and choose nothing. Every set of clips also reports, per word of its "unknown" clips,
how many are called a keyword and which: the words that would ring the doorbell.
``--partial-words`` measures the validation keyword clips with part of the word outside the
window, as a stream's windows see it arrive and leave.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import NamedTuple

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from replay import CHECKED, fast_detect, fast_posteriors, moving_average  # noqa: E402

from tinydeploy.errors import InputDataError, TinydeployError  # noqa: E402
from tinydeploy.frontend.config import FrontendConfig  # noqa: E402
from tinydeploy.frontend.native import HostFrontend, input_quant_of  # noqa: E402
from tinydeploy.kws.stream import (  # noqa: E402
    Detection,
    DetectorConfig,
    StreamScore,
    Word,
    model_detector,
    score_stream,
    simulate_stream,
)
from tinydeploy.kws.wav import read_wav  # noqa: E402
from tinydeploy.train.augment import shift_clip, word_extent  # noqa: E402
from tinydeploy.train.data import (  # noqa: E402
    CLIP,
    KEYWORDS,
    LABELS,
    SILENCE,
    UNKNOWN,
    RealCorpus,
    Split,
    read_clip,
    read_name_list,
    scan_speech_commands,
    split_noise,
    which_set,
)
from tinydeploy.train.kws import int8_predict, real_validation_audio  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent.parent
THRESHOLDS = (0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 0.93, 0.95, 0.97)
AVG = (1, 2, 3, 4, 6, 8, 12, 16)
SUPPRESS = (750, 1000, 1500)
INFER_EVERY = (1, 2, 3, 4)


def per_class(pred: np.ndarray, y: np.ndarray) -> dict[str, dict[str, float]]:
    return {lab: {"clips": int((y == i).sum()), "top1": float(np.mean(pred[y == i] == i))}
            for i, lab in enumerate(LABELS) if (y == i).any()}


def other_words(pred: np.ndarray, y: np.ndarray, words: Sequence[str]
                ) -> dict[str, dict]:
    """Per word of the "unknown" clips: how many clips, the share called a keyword and which
    keywords, the words called a keyword most often first."""
    out = {}
    unk = y == LABELS.index(UNKNOWN)
    word = np.asarray(words)
    for w in sorted(set(word[unk].tolist())):
        p = pred[unk & (word == w)]
        as_kw = Counter(LABELS[i] for i in p if LABELS[i] in KEYWORDS)
        out[w] = {"clips": int(p.size), "called_keyword": sum(as_kw.values()) / p.size,
                  "as": dict(as_kw.most_common())}
    return dict(sorted(out.items(), key=lambda kv: (-kv[1]["called_keyword"], kv[0])))


def clip_figures(audio: np.ndarray, y: np.ndarray, model: bytes, fcfg: FrontendConfig,
                 words: Sequence[str] | None = None) -> dict:
    """Top-1 per label on clips; with each clip's word, also per word of the "unknown"
    clips (`other_words`)."""
    pred = int8_predict(model, HostFrontend(fcfg).features_s8(audio, input_quant_of(model)))
    pc = per_class(pred, y)
    unk = y == LABELS.index(UNKNOWN)
    doc = {"per_class": pc,
           "labels_weighted_equally": float(np.mean([v["top1"] for v in pc.values()])),
           "per_clip": float(np.mean(pred == y)),
           "non_keywords_called_keyword": float(np.mean(pred[unk] >= 2)) if unk.any()
           else None}
    if words is not None and unk.any():
        doc["other_words"] = other_words(pred, y, words)
    return doc


PARTIAL = (0.2, 0.4, 0.6)       # shares of a word outside the window that --partial-words tries


def word_outside(x: np.ndarray, fraction: float, side: str) -> np.ndarray:
    """``x`` moved so that ``fraction`` of its word (`word_extent`) lies before the window
    (``side`` "start": the window sees the word's end) or after it ("end": the word's start);
    fraction 0: the word centred. As the windows of a stream see a word coming and going."""
    start, end = word_extent(x)
    size = end - start
    if fraction <= 0:
        shift = (x.size - size) // 2 - start
    elif side == "start":
        shift = -(start + int(fraction * size))
    elif side == "end":
        shift = x.size - (end - int(fraction * size))
    else:
        raise ValueError(f"side must be 'start' or 'end', not {side!r}")
    return shift_clip(x, shift)


def partial_word_figures(audio: np.ndarray, y: np.ndarray, model: bytes,
                         fcfg: FrontendConfig) -> dict[str, dict[str, float]]:
    """On the keyword clips: the share named as their keyword and the share called any
    keyword, with the word whole (centred) and with 20/40/60 % of it outside the window at
    its start or its end. How long a keyword stays named while a stream moves past it is what
    a detector that averages windows needs; naming a keyword from its start alone is what
    makes a partial word ring."""
    kw = y >= 2
    audio, y = audio[kw], y[kw]
    front, quant = HostFrontend(fcfg), input_quant_of(model)
    out = {}
    for name, fraction, side in (("whole", 0.0, "start"),
                                 *((f"first {round(100 * f)} % outside", f, "start")
                                   for f in PARTIAL),
                                 *((f"last {round(100 * f)} % outside", f, "end")
                                   for f in PARTIAL)):
        moved = np.stack([word_outside(x, fraction, side) for x in audio])
        pred = int8_predict(model, front.features_s8(moved, quant))
        out[name] = {"right_keyword": float(np.mean(pred == y)),
                     "any_keyword": float(np.mean(pred >= 2))}
    return out


def other_words_line(figures: dict, most: int = 8) -> str:
    """The words called a keyword most often, for the log."""
    worst = [(w, v) for w, v in figures.get("other_words", {}).items() if v["as"]][:most]
    return ", ".join(f"{w} {sum(v['as'].values())}/{v['clips']} ("
                     + ", ".join(f"{k} {n}" for k, n in v["as"].items()) + ")"
                     for w, v in worst) or "none"


class ValidationStream(NamedTuple):
    audio: np.ndarray           # int16
    words: list[Word]           # the keywords in it
    hours: float
    info: dict                  # what is reported of it
    snr_db: np.ndarray          # each keyword's SNR over the bed beneath it


SNR_BANDS = ((10.0, 15.0), (15.0, 20.0), (20.0, 25.0), (25.0, 30.0), (30.0, 35.0))


def validation_stream(corpus: RealCorpus, minutes: float, seed: int) -> ValidationStream:
    rng = np.random.default_rng([seed, 23])
    val = corpus.select(Split.VALIDATION)
    kw = {k: [c for c in val if c.word == k] for k in KEYWORDS}
    other = [c for c in val if LABELS[c.label] == UNKNOWN]
    missing = [k for k in KEYWORDS if not kw[k]] + (["any other word"] if not other else [])
    if missing:
        raise InputDataError(f"no validation-split clips of {', '.join(missing)} in "
                             f"{len(corpus.roots)} folder(s): the stream needs every keyword "
                             "and other words", hint="give the folders of a Speech Commands "
                             "collection with validation-split speakers of every keyword")
    noises = [split_noise(read_wav(p), Split.VALIDATION).astype(np.float64)
              for p in corpus.noise]
    noises = [n / max(1.0, float(np.sqrt(np.mean(n ** 2)))) for n in noises if n.size > CLIP]
    n = int(minutes * 60 * 16000)
    bed = np.zeros(n)
    pos = 0
    while pos < n and noises:           # continuous background: pieces of 2-6 s, each at
        src = noises[int(rng.integers(len(noises)))]   # -55..-40 dBFS
        k = min(n - pos, int(rng.uniform(2, 6) * 16000), src.size)
        s = int(rng.integers(0, src.size - k + 1))
        bed[pos:pos + k] = src[s:s + k] * 32768 * 10 ** (rng.uniform(-55, -40) / 20)
        pos += k
    speech = np.zeros(n)
    words: list[Word] = []
    snrs: list[float] = []
    kw_snrs: list[float] = []
    t = int(rng.uniform(1, 2) * 16000)
    n_other = 0
    while t + CLIP < n:
        if rng.random() < 2 / 3:
            word = KEYWORDS[int(rng.integers(len(KEYWORDS)))]
            clip = kw[word][int(rng.integers(len(kw[word])))]
        else:
            clip = other[int(rng.integers(len(other)))]
            n_other += 1
        x = read_clip(clip.path).astype(np.float64)
        loud = np.abs(x) > 0.1 * max(1.0, float(np.abs(x).max()))
        rms = float(np.sqrt(np.mean(x[loud] ** 2))) if loud.any() else 1.0
        snr = float(rng.uniform(10, 35))          # the word's level over the bed beneath it
        bed_rms = max(1.0, float(np.sqrt(np.mean(bed[t:t + CLIP] ** 2))))
        speech[t:t + CLIP] += x * min(bed_rms * 10 ** (snr / 20) / rms,
                                      20000 / max(1.0, float(np.abs(x).max())))
        snrs.append(snr)
        if LABELS[clip.label] not in (SILENCE, UNKNOWN):
            words.append(Word(clip.label, t // 16, (t + CLIP) // 16))
            kw_snrs.append(snr)
        t += CLIP + int(rng.uniform(1, 3) * 16000)
    audio = np.clip(np.round(speech + bed), -32768, 32767).astype(np.int16)
    info = {"seconds": n / 16000, "keywords": len(words), "other_words": n_other,
            "median_snr_db": float(np.median(snrs)) if snrs else None,
            "keywords_per_label": {LABELS[i]: sum(1 for w in words if w.label == i)
                                   for i in range(2, len(LABELS))}}
    return ValidationStream(audio, words, n / 16000 / 3600, info, np.asarray(kw_snrs))


def per_snr_band(dets: list[Detection], words: list[Word], snr_db: np.ndarray, hours: float
                 ) -> dict[str, dict[str, int]]:
    """Keywords detected per band of their SNR over the bed (`SNR_BANDS`, dB)."""
    out = {}
    for lo, hi in SNR_BANDS:
        band = [w for w, s in zip(words, snr_db, strict=True) if lo <= s < hi]
        sc = score_stream(dets, band, hours)
        out[f"{lo:g}-{hi:g}"] = {"words": sc.words, "hits": sc.hits}
    return out


def fa_rate_bound(false_alarms: int, hours: float, confidence: float | None) -> float:
    """False alarms per hour that the true rate stays below with ``confidence``, having
    counted ``false_alarms`` in ``hours`` (one-sided Poisson upper bound: the rate at which
    a count this low has probability 1 - confidence); ``None``: the counted rate itself."""
    if confidence is None:
        return false_alarms / hours
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence {confidence} is outside (0, 1)")

    def cdf(lam: float) -> float:     # P(X <= false_alarms) for X ~ Poisson(lam)
        terms = [i * math.log(lam) - lam - math.lgamma(i + 1) for i in range(false_alarms + 1)]
        top = max(terms)
        return math.exp(top) * sum(math.exp(t - top) for t in terms)

    lo, hi = 0.0, 10.0 * (false_alarms + 10)
    for _ in range(100):                                  # cdf falls as lam grows
        mid = 0.5 * (lo + hi)
        if mid > 0 and cdf(mid) > 1.0 - confidence:
            lo = mid
        else:
            hi = mid
    return hi / hours


def fa_count_limit(max_fa: float, hours: float, confidence: float | None) -> int:
    """The most false alarms a setting may count in ``hours`` for its rate to be within
    ``max_fa`` per hour (`fa_rate_bound` grows with the count); -1 when even none is."""
    k = -1
    while fa_rate_bound(k + 1, hours, confidence) <= max_fa:
        k += 1
    return k


def tune(probs: np.ndarray, times: np.ndarray, words: list[Word], hours: float,
         max_fa: float, intervals: tuple[int, ...] = INFER_EVERY,
         confidence: float | None = None) -> tuple[dict, list[dict]]:
    """The grid replayed on every-window outputs; the best setting whose false-alarm rate
    is within ``max_fa`` per hour (`fa_rate_bound` at ``confidence``) and the whole grid."""
    results = replay_grid(probs, times, words, hours, intervals)
    return best_within(results, fa_count_limit(max_fa, hours, confidence)), results


def replay_grid(probs: np.ndarray, times: np.ndarray, words: list[Word], hours: float,
                intervals: tuple[int, ...] = INFER_EVERY,
                thresholds: tuple[float, ...] = THRESHOLDS) -> list[dict]:
    """Every detector setting of the grid replayed on every-window outputs, scored."""
    results = []
    for every in intervals:
        p, t = probs[::every], times[::every]
        for avg in AVG:
            a = moving_average(p, avg)
            for th, sup in itertools.product(thresholds, SUPPRESS):
                dc = DetectorConfig(avg_windows=avg, threshold=th, suppress_ms=sup,
                                    infer_every=every)
                s = score_stream(fast_detect(a, t, avg, dc), words, hours)
                results.append({"threshold": th, "avg_windows": avg, "suppress_ms": sup,
                                "infer_every": every, "hits": s.hits,
                                "hit_rate": s.hit_rate, "false_alarms": s.false_alarms,
                                "fa_per_hour": s.false_alarms_per_hour})
    return results


def best_within(results: list[dict], limit: int) -> dict:
    """The grid's setting that detects the most keywords with at most ``limit`` false alarms
    (else the one with the fewest)."""
    ok = [r for r in results if r["false_alarms"] <= limit]
    # ties: the higher threshold, the fewer windows averaged, the longer inference interval
    return (max(ok, key=lambda r: (r["hits"], -r["false_alarms"], r["threshold"],
                                   -r["avg_windows"], r["infer_every"])) if ok else
            min(results, key=lambda r: (r["false_alarms"], -r["hits"])))


CURVE_RATES = (2.0, 5.0, 10.0, 20.0)     # false alarms per hour along the tuning stream's curve


def curve(results: list[dict], hours: float, rates: Sequence[float] = CURVE_RATES
          ) -> dict[str, dict | None]:
    """The tuning stream's curve: per false-alarm rate, the grid's setting that detects the
    most keywords with at most that many false alarms per hour as counted (no confidence
    bound: a figure to compare models by, not a choice); None where no setting is that
    quiet."""
    out: dict[str, dict | None] = {}
    for rate in rates:
        limit = math.floor(rate * hours + 1e-9)
        quiet = any(r["false_alarms"] <= limit for r in results)
        out[f"{rate:g}"] = best_within(results, limit) if quiet else None
    return out


CLASS_GRID = tuple(float(x) for x in np.round(np.arange(0.5, 0.995, 0.01), 2))


def refine_classes(probs: np.ndarray, times: np.ndarray, words: list[Word], hours: float,
                   best: dict, max_fa: float, rounds: int = 2,
                   confidence: float | None = None) -> tuple[DetectorConfig, dict]:
    """Per-keyword thresholds from the grid's best setting: coordinate ascent over
    `CLASS_GRID`, one keyword at a time, keeping a change that detects more keywords (or as
    many with fewer false alarms) within ``max_fa`` per hour (as `tune` bounds it)."""
    every, avg = best["infer_every"], best["avg_windows"]
    p, t = probs[::every], times[::every]
    a = moving_average(p, avg)
    base = DetectorConfig(avg_windows=avg, threshold=best["threshold"],
                          suppress_ms=best["suppress_ms"], infer_every=every)
    th = [float(best["threshold"])] * probs.shape[1]

    def run(th: list[float]) -> tuple[DetectorConfig, StreamScore]:
        dc = replace(base, class_thresholds=tuple(th))
        return dc, score_stream(fast_detect(a, t, avg, dc), words, hours)

    dc, cur = run(th)
    limit = fa_count_limit(max_fa, hours, confidence)
    for _ in range(rounds):
        for k in range(base.first_keyword, probs.shape[1]):
            for g in CLASS_GRID:
                trial = th[:k] + [g] + th[k + 1:]
                dct, s = run(trial)
                if s.false_alarms <= limit and \
                        (s.hits, -s.false_alarms) > (cur.hits, -cur.false_alarms):
                    th, dc, cur = trial, dct, s
    return dc, {"hits": cur.hits, "hit_rate": cur.hit_rate, "false_alarms": cur.false_alarms,
                "fa_per_hour": cur.false_alarms_per_hour,
                "class_thresholds": dict(zip(LABELS, th, strict=True))}


def fast_detections(probs: np.ndarray, times: np.ndarray, dc: DetectorConfig
                    ) -> list[Detection]:
    """A detector setting replayed on every-window outputs (as the grid does)."""
    p, t = probs[::dc.infer_every], times[::dc.infer_every]
    return fast_detect(moving_average(p, dc.avg_windows), t, dc.avg_windows, dc)


def fast_score(probs: np.ndarray, times: np.ndarray, words: list[Word], hours: float,
               dc: DetectorConfig) -> StreamScore:
    return score_stream(fast_detections(probs, times, dc), words, hours)


def per_keyword(dets: list[Detection], words: list[Word], hours: float
                ) -> dict[str, dict[str, int]]:
    """Keywords detected per label (a detection only ever matches a word of its label)."""
    out = {}
    for k in sorted({w.label for w in words}):
        s = score_stream([d for d in dets if d.label == k], [w for w in words if w.label == k],
                         hours)
        out[LABELS[k]] = {"words": s.words, "hits": s.hits}
    return out


def model_files(path: Path) -> tuple[bytes, FrontendConfig]:
    """An INT8 keyword model and the front end beside it (``frontend.json``)."""
    if not path.is_file() or not path.with_name("frontend.json").is_file():
        raise InputDataError(f"{path}: no such model, or no frontend.json beside it",
                             hint="a model trained by examples/kws/train.py, as in models/kws/")
    return path.read_bytes(), FrontendConfig.load(path.with_name("frontend.json"))


def detector_json(dc: DetectorConfig) -> dict:
    doc: dict = {"threshold": dc.threshold, "avg_windows": dc.avg_windows,
                 "suppress_ms": dc.suppress_ms, "infer_every": dc.infer_every}
    if dc.class_thresholds:
        doc["class_thresholds"] = {lab: t for lab, t in zip(LABELS, dc.class_thresholds,
                                                            strict=True)
                                   if lab in KEYWORDS and t != dc.threshold}
    return doc


def test_split_audio(folders: list[Path], testing_list: Path | None
                     ) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Real clips of test-split speakers (by the rule or named in the testing list), each
    content once, with their labels and words (reporting only)."""
    import hashlib

    listed = read_name_list(testing_list) if testing_list else frozenset()
    seen: set[str] = set()
    audio, labels, words = [], [], []
    for root in folders:
        for d in sorted(q for q in root.iterdir() if q.is_dir() and q.name[0] not in "._"):
            lab = LABELS.index(d.name) if d.name in KEYWORDS else LABELS.index(UNKNOWN)
            for f in sorted(d.glob("*_nohash_*.wav")):
                if which_set(f.name) is not Split.TEST and f"{d.name}/{f.name}" not in listed:
                    continue
                h = hashlib.sha256(f.read_bytes()).hexdigest()
                if h in seen:
                    continue
                seen.add(h)
                audio.append(read_clip(f))
                labels.append(lab)
                words.append(d.name)
    return np.stack(audio), np.asarray(labels, np.int64), words


def canonical_test_files(root: Path) -> list[tuple[Path, int, str]]:
    """The Speech Commands test set as the dataset publishes it (v0.02's test-set archive):
    one folder per label (``_silence_``, ``_unknown_`` and the ten keywords), the "unknown"
    clips named ``<word>_<speaker>_nohash_<n>.wav``. Each clip's path, label and word, the
    folder checked without reading any audio (reporting only: every speaker in it is a
    test-split speaker)."""
    hint = ("the folder of the Speech Commands test set: one per label, _silence_ and "
            "_unknown_ included")
    if not root.is_dir():
        raise InputDataError(f"{root}: no such folder", hint=hint)
    missing = [lab for lab in LABELS if not (root / lab).is_dir()]
    if missing:
        raise InputDataError(f"{root}: no folder for {', '.join(missing)}", hint=hint)
    files = [(f, i, f.name.split("_", 1)[0] if lab == UNKNOWN else lab)
             for i, lab in enumerate(LABELS) for f in sorted((root / lab).glob("*.wav"))]
    if not files:
        raise InputDataError(f"{root}: no .wav clips in its label folders", hint=hint)
    return files


def read_files(files: list[tuple[Path, int, str]]) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Clips, labels and words of `canonical_test_files`."""
    return (np.stack([read_clip(f) for f, _, _ in files]),
            np.asarray([lab for _, lab, _ in files], np.int64), [w for _, _, w in files])


def corpus_parser(doc: str | None) -> argparse.ArgumentParser:
    """The command line of a script that reads Speech Commands-layout folders."""
    ap = argparse.ArgumentParser(description=doc,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("folders", type=Path, nargs="+", help="Speech Commands-layout folders")
    ap.add_argument("--testing-list", type=Path, default=None)
    return ap


def guarded(run: Callable[[list[str] | None], int], argv: list[str] | None) -> int:
    """``run(argv)``, with a user-facing error printed as one line (and a hint) and exit 2."""
    try:
        return run(argv)
    except TinydeployError as e:
        print(e.report(), file=sys.stderr)
        return 2


def main(argv: list[str] | None = None) -> int:
    return guarded(run, argv)


def run(argv: list[str] | None) -> int:
    ap = corpus_parser(__doc__)
    ap.add_argument("--model", type=Path, default=ROOT / "models" / "kws" / "dscnn_int8.tflite")
    ap.add_argument("--minutes", type=float, default=240.0,
                    help="length of the stream the detector is tuned on")
    ap.add_argument("--check-minutes", type=float, default=60.0,
                    help="length of the stream the figures come from (the next seed)")
    ap.add_argument("--infer-every", type=int, nargs="+", default=list(INFER_EVERY),
                    help="inference intervals (frames) the grid tries: a streamed model runs "
                         "a step every hop (2 for the DS-CNN)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--max-fa", type=float, default=10.0,
                    help="false alarms per hour allowed when choosing the detector")
    ap.add_argument("--fa-confidence", type=float, default=0.8,
                    help="confidence that the chosen detector's false-alarm rate is within "
                         "--max-fa (Poisson bound on the tuning stream's count); 0: the "
                         "counted rate itself")
    ap.add_argument("--no-tune", action="store_true", help="only the shipped defaults")
    ap.add_argument("--no-class-thresholds", action="store_true",
                    help="one threshold for every keyword (no per-keyword refinement)")
    ap.add_argument("--detector-out", type=Path, default=None,
                    help="write the chosen detector here (a detector.json beside the model)")
    ap.add_argument("--test-report", action="store_true",
                    help="also measure test-split clips (reporting only)")
    ap.add_argument("--canonical-test", type=Path, default=None, metavar="DIR",
                    help="also measure the Speech Commands test set in its published layout "
                         "(a folder per label; reporting only)")
    ap.add_argument("--partial-words", action="store_true",
                    help="also measure the validation keyword clips with 20-60 %% of the "
                         "word outside the window, at its start or end")
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args(argv)

    def log(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    if not 0.0 <= args.fa_confidence < 1.0:
        ap.error(f"--fa-confidence {args.fa_confidence} is outside [0, 1)")
    conf = args.fa_confidence or None
    model, fcfg = model_files(args.model)
    # checked now, read when measured: a bad folder fails before any stream is built
    canonical = canonical_test_files(args.canonical_test) if args.canonical_test else None
    corpus = scan_speech_commands(args.folders, args.testing_list)
    doc: dict = {"model": str(args.model), "max_fa": args.max_fa,
                 "fa_confidence": args.fa_confidence}
    va, vy = real_validation_audio(corpus, args.seed)
    vwords = [c.word for c in corpus.select(Split.VALIDATION)]   # then silence, in order
    doc["validation_clips"] = clip_figures(va, vy, model, fcfg,
                                           vwords + [SILENCE] * (len(vy) - len(vwords)))
    log(f"validation clips: {len(vy)}, labels weighted equally "
        f"{100 * doc['validation_clips']['labels_weighted_equally']:.1f} %")
    if args.partial_words:
        doc["partial_words"] = pw = partial_word_figures(va, vy, model, fcfg)
        log("validation keyword clips, part of the word outside the window (named as their "
            "keyword / called any keyword): " + ", ".join(
                f"{k} {100 * v['right_keyword']:.0f}/{100 * v['any_keyword']:.0f} %"
                for k, v in pw.items()))

    # the check stream: the same speakers mixed anew; it only decides on class thresholds
    audio, words, hours, info, snr_db = validation_stream(corpus, args.check_minutes,
                                                          args.seed + 1)
    doc["stream"] = {"seed": args.seed + 1, **info}
    log(f"check stream: {info}")
    runs = {"shipped": model_detector(args.model)}
    if not args.no_tune:
        t_audio, t_words, t_hours, t_info, _ = validation_stream(corpus, args.minutes,
                                                                 args.seed)
        doc["tuning_stream"] = {"seed": args.seed, **t_info}
        log(f"tuning stream: {t_info}")
        probs, times = fast_posteriors(t_audio, model, fcfg)
        del t_audio
        best, grid = tune(probs, times, t_words, t_hours, args.max_fa, tuple(args.infer_every),
                          conf)
        best["fa_per_hour_bound"] = fa_rate_bound(best["false_alarms"], t_hours, conf)
        doc["grid_best"] = best
        doc["grid"] = grid
        doc["tuning_curve"] = tc = curve(grid, t_hours)
        log("tuning stream, the most keywords at a false-alarm rate: " + ", ".join(
            f"<= {k}/h " + ("-" if v is None else f"{100 * v['hit_rate']:.1f} %")
            for k, v in tc.items()))
        single = DetectorConfig(avg_windows=best["avg_windows"], threshold=best["threshold"],
                                suppress_ms=best["suppress_ms"],
                                infer_every=best["infer_every"])
        chosen = single
        if not args.no_class_thresholds:
            per_class, doc["class_refined"] = refine_classes(probs, times, t_words, t_hours,
                                                             best, args.max_fa,
                                                             confidence=conf)
            p2, t2 = fast_posteriors(audio, model, fcfg)
            check = {name: fast_score(p2, t2, words, hours, dc).as_dict()
                     for name, dc in (("single", single), ("class", per_class))}
            c, o = check["class"], check["single"]
            # the single-threshold frontier of the check stream at the per-keyword setting's
            # false alarms: per-keyword thresholds must beat every setting of the grid there
            frontier, _ = tune(p2, t2, words, hours, c["false_alarms_per_hour"],
                               tuple(args.infer_every))
            check["grid_at_same_false_alarms"] = frontier
            doc["check_replay"] = check
            log(f"check stream, replayed: one threshold {o['hits']}/{o['words']} at "
                f"{o['false_alarms']} false alarms, per-keyword thresholds "
                f"{c['hits']}/{c['words']} at {c['false_alarms']}; the best single threshold "
                f"there with at most as many false alarms: {frontier['hits']}")
            if c["hits"] > frontier["hits"] and frontier["false_alarms"] <= c["false_alarms"]:
                chosen = per_class
        runs["chosen"] = chosen
        if args.detector_out:
            args.detector_out.write_text(json.dumps(detector_json(chosen), indent=1) + "\n")
    for name, dc in runs.items():
        dets = simulate_stream(audio, model, fcfg, dc)
        s = score_stream(dets, words, hours)
        per = per_keyword(dets, words, hours)
        doc[f"stream_{name}"] = {"detector": detector_json(dc), **s.as_dict(),
                                 "per_keyword": per,
                                 "per_snr_db": per_snr_band(dets, words, snr_db, hours)}
        log(f"stream, {name} {doc[f'stream_{name}']['detector']}: {s.hits}/{s.words} "
            f"({100 * s.hit_rate:.1f} %) detected, {s.false_alarms} false alarms "
            f"({s.substitutions} wrong word) = {s.false_alarms_per_hour:.1f}/h; per keyword: "
            + ", ".join(f"{k} {v['hits']}/{v['words']}" for k, v in per.items())
            + "; per SNR band (dB): " + ", ".join(
                f"{k} {v['hits']}/{v['words']}"
                for k, v in doc[f"stream_{name}"]["per_snr_db"].items()))
    reports = []
    if args.test_report:
        reports.append(("test_split_clips", "test-split clips",
                        test_split_audio(list(args.folders), args.testing_list)))
    if canonical is not None:
        reports.append(("canonical_test", "the canonical test set", read_files(canonical)))
    for part, name, (ta, ty, tw) in reports:
        doc[part] = t = clip_figures(ta, ty, model, fcfg, tw)
        log(f"{name} (reporting only): {len(ty)}, per clip "
            f"{100 * t['per_clip']:.1f} %, labels weighted equally "
            f"{100 * t['labels_weighted_equally']:.1f} %, non-keywords called a keyword "
            f"{100 * (t['non_keywords_called_keyword'] or 0.0):.1f} %")
    for part in ("validation_clips", "test_split_clips", "canonical_test"):
        if part in doc:
            log(part + ": " + ", ".join(f"{k} {100 * v['top1']:.1f} ({v['clips']})"
                                        for k, v in doc[part]["per_class"].items()))
            log(f"{part}, other words most often called a keyword: "
                + other_words_line(doc[part]))
    if CHECKED["windows"]:
        doc["tflite_vs_micro"] = dict(CHECKED)
        log(f"TF Lite vs tflite-micro (the grid's outputs): {CHECKED['differ']} of "
            f"{CHECKED['windows']} checked windows differ, by at most {CHECKED['max_lsb']} "
            "output steps")
    text = json.dumps(doc, indent=1) + "\n"
    if args.json:
        args.json.write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
