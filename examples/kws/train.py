"""Train the DS-CNN keyword spotter and write models/kws/ (model, labels, front-end config,
README with accuracy and sha256).

    nice -n 10 .venv/bin/python examples/kws/train.py --per-class 1000 --epochs 12

Data: a synthetic espeak-ng set by default (cached under data/kws/), or a Google Speech
Commands v0.02 tree with --speech-commands DIR. Reproducible: fixed seeds throughout.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path

from tinydeploy.kws.data import SynthConfig, load_speech_commands
from tinydeploy.kws.frontend_config import render_frontend_header
from tinydeploy.kws.train import TrainConfig, readme_text, synthetic_dataset, train_kws

ROOT = Path(__file__).resolve().parent.parent.parent


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--per-class", type=int, default=1000, help="synthetic clips per label")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--epochs", type=int, default=12)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--speech-commands", type=Path, help="a Speech Commands v0.02 tree")
    ap.add_argument("--data-dir", type=Path, default=ROOT / "data" / "kws")
    ap.add_argument("--out", type=Path, default=ROOT / "models" / "kws")
    args = ap.parse_args(argv)

    def log(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    synth = None
    if args.speech_commands:
        ds = load_speech_commands(args.speech_commands, seed=args.seed)
    else:
        synth = SynthConfig(per_class=args.per_class, seed=args.seed, workers=args.workers)
        ds = synthetic_dataset(synth, args.data_dir, log)
    tcfg = TrainConfig(epochs=args.epochs, seed=args.seed)
    res = train_kws(ds, args.out, tcfg, log)
    argv_shown = sys.argv[1:] if argv is None else argv
    cmd = "nice -n 10 .venv/bin/python examples/kws/train.py " + shlex.join(argv_shown)
    (args.out / "README.md").write_text(readme_text(res, cmd.strip(), synth, tcfg))
    if args.out.resolve() == (ROOT / "models" / "kws").resolve():
        (ROOT / "firmware" / "frontend" / "td_frontend_config.h").write_text(
            render_frontend_header(res.frontend))
    print(f"float test {100 * res.float_accuracy['test']:.2f} %, INT8 test "
          f"{100 * res.int8_accuracy['test']:.2f} %, {res.size_bytes} bytes, "
          f"sha256 {res.sha256}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
