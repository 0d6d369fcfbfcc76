"""Tune the streaming detector (threshold, averaging windows, suppression) on real
validation-split audio, and measure false alarms per hour on the real background recordings.

    nice -n 10 .venv/bin/python examples/kws/tune_detector.py $DATA/speech/*

The tuning stream: every real validation-split clip (keywords, and unknown words as
distractors; test-split speakers are never used), in a seeded order, separated by 0.5-2 s
gaps cut from the held-out (validation) part of the background recordings, each clip mixed
with such noise at 5-30 dB SNR. The model's outputs for every 20 ms window are computed once
(the C front end's int8 features, as `kws stream --simulate`; the INT8 model on TF Lite's
builtin kernels, checked equal to tflite-micro on the first windows), then every detector
setting of the grid is replayed on them. Chosen: the most hits minus false alarms (a false
alarm costs as much as a miss).
False alarms per hour are then counted on the background recordings, once on their held-out
20 % and once on all of them (~6 minutes in all; the first 80 % of each is in training as
silence). Prints a table and JSON (--json).
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

from tinydeploy.frontend.config import FrontendConfig
from tinydeploy.kws.stream import (
    Detection,
    DetectorConfig,
    Word,
    detect,
    score_stream,
    stream_posteriors,
)
from tinydeploy.kws.wav import read_wav
from tinydeploy.train.data import (
    CLIP,
    LABELS,
    SILENCE,
    UNKNOWN,
    Split,
    read_clip,
    scan_speech_commands,
    split_noise,
)

ROOT = Path(__file__).resolve().parent.parent.parent
THRESHOLDS = (0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95)
AVG = (1, 2, 3, 4, 6, 8)
SUPPRESS = (500, 750, 1000, 1500)


def real_stream(folders: list[Path], seed: int) -> tuple[np.ndarray, list[Word], float]:
    corpus = scan_speech_commands(folders)
    val = list(corpus.select(Split.VALIDATION))
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(val))
    noises = [split_noise(read_wav(p), Split.VALIDATION).astype(np.float64)
              for p in corpus.noise]
    noises = [n / max(1.0, np.sqrt(np.mean(n ** 2))) for n in noises if n.size > 2 * CLIP]

    def noise(n: int) -> np.ndarray:
        if not noises:
            return np.zeros(n)
        src = noises[int(rng.integers(len(noises)))]
        out = np.concatenate([src] * (n // src.size + 2))
        s = int(rng.integers(0, src.size))
        return out[s:s + n]

    pieces, words, pos = [], [], 0
    level = 300.0                      # background RMS between words (about -40 dBFS)
    for i in order:
        c = val[i]
        gap = int(rng.uniform(0.5, 2.0) * 1000) * 16
        pieces.append(noise(gap) * level * rng.uniform(0.3, 1.5))
        pos += gap
        x = read_clip(c.path).astype(np.float64)
        rms = np.sqrt(np.mean(x[np.abs(x) > 0.1 * max(1.0, np.abs(x).max())] ** 2))
        x = x + noise(x.size) * rms / 10 ** (rng.uniform(5, 30) / 20)
        pieces.append(x)
        if LABELS[c.label] not in (SILENCE, UNKNOWN):
            words.append(Word(c.label, pos // 16, (pos + x.size) // 16))
        pos += x.size
    pieces.append(noise(2 * CLIP) * level)
    audio = np.clip(np.round(np.concatenate(pieces)), -32768, 32767).astype(np.int16)
    return audio, words, audio.size / 16000 / 3600


CHECKED: dict[str, int] = {"windows": 0, "differ": 0, "max_lsb": 0}


def fast_posteriors(audio: np.ndarray, model: bytes, fcfg: FrontendConfig,
                    check: int = 300) -> tuple[np.ndarray, np.ndarray]:
    """`stream_posteriors` (every 20 ms window), with TensorFlow Lite's builtin kernels
    (no delegate) instead of the tflite-micro interpreter: ~20x faster here, but not
    bit-exact (its optimised kernels round differently). The first ``check`` windows are
    compared with tflite-micro; the count of differing windows and the largest difference
    (in output steps of 1/256) go into `CHECKED` and the report. Only the grid search uses
    these; false alarms on the background recordings are counted with tflite-micro."""
    from tflite_micro.python.tflite_micro import runtime

    from tinydeploy.frontend.native import HostFrontend
    from tinydeploy.kws.stream import stream_features
    from tinydeploy.model.loader import load_tflite
    from tinydeploy.train.kws import input_quant_of
    from tinydeploy.train.teacher import tflite_posteriors

    quant = load_tflite(model).outputs[0].quant
    assert quant is not None, "an INT8 model's output is quantized"
    scale, zp = float(quant.scale[0]), int(quant.zero_point[0])
    feats = stream_features(audio, HostFrontend(fcfg), input_quant_of(model))
    ends = np.arange(fcfg.frames, feats.shape[0] + 1)
    windows = [feats[f - fcfg.frames:f] for f in ends]      # views: no copy of the stream
    probs = tflite_posteriors(model, windows)
    micro = runtime.Interpreter.from_bytes(model)
    for j in range(min(check, len(windows))):
        micro.set_input(windows[j][None, :, :, None], 0)
        micro.invoke()
        ref = micro.get_output(0).reshape(-1).astype(np.int32) - zp
        lsb = np.abs(ref - np.round(probs[j] / scale).astype(np.int32))
        CHECKED["windows"] += 1
        if lsb.any():
            CHECKED["differ"] += 1
            CHECKED["max_lsb"] = max(CHECKED["max_lsb"], int(lsb.max()))
    times = ((ends - 1) * fcfg.stride + fcfg.window) // (fcfg.sample_rate // 1000)
    return probs, times.astype(np.int64)


def moving_average(probs: np.ndarray, w: int) -> np.ndarray:
    """The detector's average of the last ``w`` windows (rows before the ``w``-th are
    partial averages, as on the device)."""
    c = np.cumsum(probs.astype(np.float64), axis=0)
    out = np.empty_like(c)
    out[:w] = c[:w] / np.arange(1, w + 1)[:, None]
    out[w:] = (c[w:] - c[:-w]) / w
    return out


def fast_detect(avg: np.ndarray, times: np.ndarray, w: int, cfg: DetectorConfig
                ) -> list[Detection]:
    """The detector's decisions (`tinydeploy.kws.stream.Detector`) replayed on precomputed
    averages: only windows whose best keyword reaches the threshold are visited. Float64
    averages instead of the device's float32 sums, so a window exactly at the threshold may
    differ; the chosen setting is re-checked with the exact twin."""
    k0 = cfg.first_keyword
    thr = cfg.thresholds(avg.shape[1]).astype(np.float64)
    best = k0 + np.argmax(avg[:, k0:], axis=1)
    score = avg[np.arange(len(avg)), best]
    cand = np.nonzero((score >= thr[best]) & (np.arange(len(avg)) >= w - 1))[0]
    out: list[Detection] = []
    last_i: int | None = None
    last_t = last_l = 0
    for j in cand:
        if last_i is not None:
            released = bool((avg[last_i + 1:j + 1, last_l] < 0.5 * thr[last_l]).any())
            if (int(times[j]) - last_t) < cfg.suppress_ms or (best[j] == last_l
                                                              and not released):
                continue
        last_i, last_t, last_l = int(j), int(times[j]), int(best[j])
        out.append(Detection(last_l, float(score[j]), last_t))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("folders", type=Path, nargs="+", help="Speech Commands-layout folders")
    ap.add_argument("--model", type=Path, default=ROOT / "models" / "kws" / "dscnn_int8.tflite")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    model = args.model.read_bytes()
    fcfg = FrontendConfig.load(args.model.with_name("frontend.json"))

    audio, words, hours = real_stream(args.folders, args.seed)
    print(f"tuning stream: {audio.size / 16000:.0f} s, {len(words)} keywords", file=sys.stderr)
    probs, times = fast_posteriors(audio, model, fcfg)
    results: list[dict[str, Any]] = []
    avgs = {w: moving_average(probs, w) for w in AVG}
    for th, avg, sup in itertools.product(THRESHOLDS, AVG, SUPPRESS):
        dc = DetectorConfig(avg_windows=avg, threshold=th, suppress_ms=sup)
        s = score_stream(fast_detect(avgs[avg], times, avg, dc), words, hours)
        results.append({"threshold": th, "avg_windows": avg, "suppress_ms": sup,
                        "hits": s.hits, "false_alarms": s.false_alarms,
                        "substitutions": s.substitutions, "hit_rate": s.hit_rate,
                        "fa_per_hour": s.false_alarms_per_hour,
                        "objective": s.hits - s.false_alarms})
    best = max(results, key=lambda r: (r["objective"], r["threshold"], -r["avg_windows"]))
    old = next(r for r in results if (r["threshold"], r["avg_windows"], r["suppress_ms"])
               == (0.8, 8, 1000))
    dc = DetectorConfig(avg_windows=best["avg_windows"], threshold=best["threshold"],
                        suppress_ms=best["suppress_ms"])
    exact = score_stream(detect(probs, times, dc), words, hours)
    best["exact"] = {"hits": exact.hits, "false_alarms": exact.false_alarms}
    corpus = scan_speech_commands(args.folders)
    olddc = DetectorConfig(avg_windows=8, threshold=0.8, suppress_ms=1000)
    bg: dict[str, dict] = {}
    cut = {}
    for p in corpus.noise:             # exact: tflite-micro, every 20 ms window
        x = read_wav(p)
        pr, tm = stream_posteriors(x, model, fcfg, 1)
        cut[p.name] = (pr, tm, int(x.size * 0.8))
    for part in ("held_out", "all"):
        total_s, fas, fas_old = 0.0, 0, 0
        for pr, tm, start in cut.values():
            if part == "held_out":      # windows ending in the last 20 % of the file
                keep = tm > start // 16 + fcfg.clip_samples // 16
                pr, tm = pr[keep], tm[keep]
                secs = (len(tm) * fcfg.stride + fcfg.clip_samples) / 16000 if len(tm) else 0
            else:
                secs = (len(tm) * fcfg.stride + fcfg.clip_samples) / 16000
            fas += len(detect(pr, tm, dc))
            fas_old += len(detect(pr, tm, olddc))
            total_s += secs
        bg[part] = {"seconds": total_s, "false_alarms": fas, "false_alarms_previous": fas_old,
                    "fa_per_hour": fas / (total_s / 3600) if total_s else None,
                    "fa_per_hour_previous": fas_old / (total_s / 3600) if total_s else None}
    doc = {"stream_seconds": audio.size / 16000, "keywords": len(words), "best": best,
           "tflite_vs_micro": dict(CHECKED),
           "previous_default": old, "background": bg, "grid": results}
    if args.json:
        print(json.dumps(doc, indent=1))
    else:
        for name, r in (("chosen", best), ("previous 0.8/8/1000", old)):
            print(f"{name}: threshold {r['threshold']}, avg {r['avg_windows']}, suppress "
                  f"{r['suppress_ms']} ms: hits {r['hits']}/{len(words)} "
                  f"({100 * r['hit_rate']:.1f} %), false alarms {r['false_alarms']} "
                  f"({r['substitutions']} wrong-word) = {r['fa_per_hour']:.1f}/h")
        for part, b in bg.items():
            print(f"background recordings ({part}, {b['seconds']:.0f} s): "
                  f"{b['false_alarms']} false alarms = {b['fa_per_hour']:.1f}/h "
                  f"(previous default: {b['false_alarms_previous']})")
        print(f"TF Lite vs tflite-micro: {CHECKED['differ']} of {CHECKED['windows']} checked "
              f"windows differ, by at most {CHECKED['max_lsb']} output steps")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
