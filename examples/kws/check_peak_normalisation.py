"""Which stream normalisation the `mlperf-kws` front end should use, measured on the
continuous validation stream of `validate.py` (validation-split speakers only).

    nice -n 10 .venv/bin/python examples/kws/check_peak_normalisation.py $DATA/speech/* \\
        --testing-list $DATA/testing_list.txt --model kws_ref_model.tflite \\
        --labels "down go left no off on right stop up yes _silence_ _unknown_"

MLPerf's features divide a clip by its largest sample. A stream has no clip, so two rules
are possible on a device:

- **per-window peak** (what the firmware does): every frame is computed with the peak of
  the frames so far in the model's window, and before each inference
  `td_frontend_window_s8` brings the whole window to the window's own peak;
- **running peak**: every row keeps the peak known when it was computed (no fix-up).

Both are run through the model (TF Lite builtin kernels) on every 20 ms window of the same
stream, and the detector grid of `validate.py` is tuned for each: keywords detected at
``--max-fa`` false alarms per hour and at a looser bound. The model must take the
`mlperf-kws` preset's 49 x 10 input; ``--labels`` names its outputs in order (MLPerf's
reference model orders them differently from this project's `LABELS`).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from validate import tune, validation_stream  # noqa: E402

from tinydeploy.frontend.native import input_quant_of  # noqa: E402
from tinydeploy.frontend.presets import resolve_frontend  # noqa: E402
from tinydeploy.kws.stream import stream_windows_of  # noqa: E402
from tinydeploy.train.data import LABELS, scan_speech_commands  # noqa: E402
from tinydeploy.train.teacher import tflite_posteriors  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("folders", type=Path, nargs="+", help="Speech Commands-layout folders")
    ap.add_argument("--testing-list", type=Path, default=None)
    ap.add_argument("--model", type=Path, required=True)
    ap.add_argument("--labels", required=True,
                    help="the model's output labels in order, space separated")
    ap.add_argument("--minutes", type=float, default=20.0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--max-fa", type=float, nargs="+", default=[9.0, 30.0])
    args = ap.parse_args(argv)

    names = args.labels.split()
    if sorted(names) != sorted(LABELS):
        print(f"error: --labels must name these {len(LABELS)} labels once each: "
              f"{' '.join(LABELS)}", file=sys.stderr)
        return 2
    model = args.model.read_bytes()
    choice = resolve_frontend("mlperf-kws")
    cfg = choice.config
    fe = choice.spec.host(cfg)
    quant = input_quant_of(model)
    corpus = scan_speech_commands(args.folders, args.testing_list)
    audio, words, hours, info, _ = validation_stream(corpus, args.minutes, args.seed)
    print(f"stream: {info['seconds']:.0f} s, {info['keywords']} keywords, "
          f"{info['other_words']} other words", file=sys.stderr)
    own, steps = stream_windows_of(fe, audio, quant, 1)
    rows = fe.stream_s8(audio, quant)
    running = np.stack([rows[f - cfg.frames:f] for f in steps])
    times = ((steps - 1) * cfg.stride + cfg.window) // (cfg.sample_rate // 1000)
    order = [names.index(lab) for lab in LABELS]
    for name, wins in (("per-window peak", own), ("running peak", running)):
        p = tflite_posteriors(model, wins, order)
        for max_fa in args.max_fa:
            best, _ = tune(p, times, words, hours, max_fa)
            print(f"{name}: at most {max_fa:g} false alarms/h: {best['hits']}/{len(words)} "
                  f"keywords ({100 * best['hit_rate']:.1f} %), {best['false_alarms']} false "
                  f"alarms; detector {best['threshold']} / {best['avg_windows']} windows / "
                  f"every {best['infer_every']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
