"""Keywords detected along the false-alarm curve, on a validation stream that neither tunes
nor checks a detector: for each bound (false alarms per hour), the most keywords any setting
of `validate.py`'s grid (thresholds every 0.01) detects there with one threshold for every
keyword, for each model alike (any inference interval of the grid, and only the interval of
the model's shipped detector); and each model's shipped detector on the same stream, with its
keywords per word.

    nice -n 10 .venv/bin/python examples/kws/curve.py $DATA/speech/* \\
        --testing-list $DATA/testing_list.txt --model models/kws/dscnn_int8.tflite \\
        [--model OTHER.tflite ...] [--minutes 60] [--seed 2] [--fa 5 10 20 30] [--json OUT]

The stream is `validate.validation_stream` (validation-split speakers only) with its own
seed: `validate.py` tunes on seed 0 and checks on seed 1, so the default seed 2 is a third
mix of the same speakers. Every setting is replayed on the model's outputs for every window
(`replay.py`); the chosen points are the grid's best under each bound, so they show what a
model can do with a detector tuned for that bound, not what a detector tuned elsewhere does
there (the shipped detector's line shows that). Nothing is chosen from these figures.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from replay import fast_posteriors  # noqa: E402
from validate import (  # noqa: E402
    INFER_EVERY,
    best_within,
    corpus_parser,
    fa_count_limit,
    fast_detections,
    guarded,
    model_files,
    per_keyword,
    replay_grid,
    validation_stream,
)

from tinydeploy.kws.stream import model_detector, score_stream  # noqa: E402
from tinydeploy.train.data import scan_speech_commands  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent.parent
FINE = tuple(round(0.5 + 0.01 * i, 2) for i in range(50))     # thresholds 0.50 ... 0.99


def main(argv: list[str] | None = None) -> int:
    return guarded(run, argv)


def run(argv: list[str] | None) -> int:
    ap = corpus_parser(__doc__)
    ap.add_argument("--model", type=Path, action="append", default=None,
                    help="an INT8 keyword model with frontend.json (and detector.json) beside "
                         "it; repeat for several (default: models/kws/dscnn_int8.tflite)")
    ap.add_argument("--minutes", type=float, default=60.0)
    ap.add_argument("--seed", type=int, default=2)
    ap.add_argument("--fa", type=float, nargs="+", default=[5.0, 10.0, 20.0, 30.0],
                    help="false alarms per hour, at most (counted on this stream)")
    ap.add_argument("--infer-every", type=int, nargs="+", default=list(INFER_EVERY))
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args(argv)
    models = args.model or [ROOT / "models" / "kws" / "dscnn_int8.tflite"]
    if args.minutes <= 0 or any(f < 0 for f in args.fa):
        ap.error("--minutes must be positive and --fa not negative")
    corpus = scan_speech_commands(args.folders, args.testing_list)
    audio, words, hours, info, _ = validation_stream(corpus, args.minutes, args.seed)
    print(f"stream: seed {args.seed}, {info['seconds'] / 60:.0f} min, {info['keywords']} "
          f"keywords, {info['other_words']} other words", file=sys.stderr)
    doc: dict = {"stream": {"seed": args.seed, **info}, "models": {}}
    limits = {f"{fa:g}": fa_count_limit(fa, hours, None) for fa in args.fa}
    for m in models:
        probs, times = fast_posteriors(audio, *model_files(m))
        grid = replay_grid(probs, times, words, hours, tuple(args.infer_every), FINE)
        shipped = model_detector(m)
        own = [r for r in grid if r["infer_every"] == shipped.infer_every]
        points = {k: best_within(grid, n) for k, n in limits.items()}
        at_own = {k: best_within(own, n) for k, n in limits.items()} if own else {}
        dets = fast_detections(probs, times, shipped)
        s = score_stream(dets, words, hours)
        per = per_keyword(dets, words, hours)
        doc["models"][str(m)] = {"curve": points, "curve_at_shipped_interval": at_own,
                                 "shipped": {**s.as_dict(), "per_keyword": per}}
        print(f"{m}: " + ", ".join(f"<= {fa}/h {100 * b['hit_rate']:.1f} %"
                                   for fa, b in points.items())
              + (f" (a window every {shipped.infer_every} frames: "
                 + ", ".join(f"{100 * b['hit_rate']:.1f}" for b in at_own.values()) + ")"
                 if at_own else "")
              + f"; shipped detector {s.hits}/{s.words} ({100 * s.hit_rate:.1f} %) at "
              f"{s.false_alarms_per_hour:.1f}/h; per keyword: "
              + ", ".join(f"{k} {v['hits']}/{v['words']}" for k, v in per.items()))
    if args.json:
        args.json.write_text(json.dumps(doc, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
