"""Train the DS-CNN keyword spotter and write models/kws/ (model, labels, front-end config,
README with accuracy, provenance and sha256).

    nice -n 10 .venv/bin/python examples/kws/train.py \
        --speech-commands $DATA/speech/* --per-class 1500 --epochs 16

Data: a synthetic set (espeak-ng, plus flite and festival voices when installed) mixed with
real recordings in the Speech Commands layout from --speech-commands DIR [DIR ...] (any
subset of words per folder; test-split speakers are always left out). Without real data the
model is trained on synthetic speech only, and the output says so. Augmented features are
cached on disk (--cache-dir) and streamed. Reproducible: fixed seeds throughout.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shlex
import sys
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from tinydeploy.errors import InputDataError
from tinydeploy.frontend.config import render_frontend_header
from tinydeploy.train.augment import AugmentConfig
from tinydeploy.train.data import (
    LABELS,
    UNKNOWN,
    Dataset,
    Split,
    SynthConfig,
    extra_speakers,
    generate_other_words,
    scan_speech_commands,
    scan_speech_windows,
)
from tinydeploy.train.kws import (
    MixConfig,
    TrainConfig,
    mix_readme_text,
    mix_summary,
    real_training_clips,
    synthetic_dataset,
    train_kws_mix,
)
from tinydeploy.train.teacher import add_teacher_args, teacher_from_args

ROOT = Path(__file__).resolve().parent.parent.parent
ABLATIONS = ("real", "synth", "extra-voices", "speed", "shift", "reverb", "noise", "gain",
             "specaug")


def other_words(cfg: SynthConfig, words: list[str], count: int, extras: tuple[str, ...],
                festival_words: int, data_dir: Path, log: Callable[[str], None]) -> Dataset:
    """`generate_other_words`, cached as .npz in ``data_dir`` (keyed by all its inputs)."""
    key = hashlib.sha256(repr((cfg, words, count, extras, festival_words)).encode()
                         ).hexdigest()[:12]
    path = data_dir / f"other-{count}-{cfg.seed}-{key}.npz"
    if path.exists():
        log(f"data: {path} (cached)")
        return Dataset.load(path)
    t0 = time.time()
    ds = generate_other_words(cfg, words, count, extras=extras, festival_words=festival_words)
    data_dir.mkdir(parents=True, exist_ok=True)
    ds.save(path)
    log(f"data: {count} other-word clips in {time.time() - t0:.0f} s -> {path}")
    return ds


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--per-class", type=int, default=1500, help="synthetic clips per label")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--time-padding", choices=("same", "valid"), default="same",
                    help="'valid': no padding along time, so that the model streams exactly "
                         "(a step computes only its new rows)")
    ap.add_argument("--epochs", type=int, default=16)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--extra-fraction", type=float, default=0.35,
                    help="share of synthetic training clips spoken by flite/festival voices")
    ap.add_argument("--speech-commands", type=Path, nargs="+", default=[],
                    metavar="DIR", help="folders of real clips in the Speech Commands layout")
    ap.add_argument("--testing-list", type=Path, default=None,
                    help="the dataset's testing_list.txt: clips it names are left out too")
    ap.add_argument("--clip-list", type=Path, default=None,
                    help="write the real training clips here (word/file<TAB>source a line)")
    ap.add_argument("--synth-keep", type=float, default=1.0,
                    help="share of the synthetic training clips used")
    ap.add_argument("--synth-keep-scarce", type=float, default=None,
                    help="share of the synthetic training clips kept for keywords with fewer "
                         "than --scarce-target real clips (default: --synth-keep)")
    ap.add_argument("--silence", type=int, default=1200, help="silence clips from real noise")
    ap.add_argument("--other-words", type=Path, default=None,
                    help="word list (one a line): synthetic 'unknown' clips are rendered from "
                    "it and replace the synthetic set's own unknown clips")
    ap.add_argument("--other-count", type=int, default=3000)
    ap.add_argument("--other-extra", type=Path, default=None, metavar="WORDS",
                    help="a second word list (one a line) rendered as --other-extra-count more "
                         "synthetic 'unknown' clips, by espeak-ng/flite voices: words that "
                         "must be said often, such as the dataset's own other words")
    ap.add_argument("--other-extra-count", type=int, default=0)
    ap.add_argument("--other-speech", type=Path, nargs="+", default=[], metavar="DIR",
                    help="folders of 1 s windows of other real speech, whose transcripts "
                         "name no keyword (examples/kws/collect_speech.py writes them): "
                         "--other-speech-count of them are trained as 'unknown'; measured "
                         "worse on the validation streams (models/kws/README.md)")
    ap.add_argument("--other-speech-count", type=int, default=0)
    ap.add_argument("--festival-words", type=int, default=160,
                    help="festival voices say the first this many words of --other-words")
    ap.add_argument("--augment-first", type=float, default=0.0,
                    help="chance that the first copy of a real keyword clip is augmented")
    ap.add_argument("--real-copies", type=int, default=3)
    ap.add_argument("--unknown-word-target", type=int, default=0,
                    help="real 'unknown' words with fewer clips than this are repeated, "
                         "freshly augmented, up to about this many (0: each clip once); "
                         "measured worse on the validation streams (models/kws/README.md)")
    ap.add_argument("--scarce-target", type=int, default=400,
                    help="rarer real keywords are repeated up to about this many clips")
    ap.add_argument("--unknown-max", type=int, default=2500, help="real unknown clips")
    ap.add_argument("--without", nargs="+", default=[], choices=ABLATIONS,
                    help="leave an ingredient out (ablation)")
    ap.add_argument("--exclude-real", nargs="+", default=[], metavar="WORD",
                    help="keywords whose real clips are not trained on")
    ap.add_argument("--real-limit", nargs="+", default=[], metavar="WORD=N",
                    help="keep only N real training clips of WORD (seeded choice): an "
                         "ablation of how a word fares with as few recordings as on/off")
    ap.add_argument("--data-dir", type=Path, default=ROOT / "data" / "kws",
                    help="cache of rendered synthetic sets")
    ap.add_argument("--cache-dir", type=Path, default=None,
                    help="feature cache (default: DATA_DIR/features-<name of OUT>)")
    ap.add_argument("--out", type=Path, default=ROOT / "models" / "kws")
    ap.add_argument("--shift-ms", type=int, default=AugmentConfig.shift_ms,
                    help="time shift of augmented clips, uniform in +-this many ms")
    ap.add_argument("--shift-keeps-word", action="store_true",
                    help="shift a clip only as far as keeps its word whole (frames within "
                         "20 dB of the loudest); measured worse on the validation streams "
                         "(models/kws/README.md)")
    add_teacher_args(ap)
    ap.add_argument("--json-out", type=Path, default=None, help="also write the figures here")
    args = ap.parse_args(argv)

    def log(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    try:
        teacher = teacher_from_args(args)
    except InputDataError as err:
        print(err.report(), file=sys.stderr)
        return 2
    limits: list[tuple[str, int]] = []
    for item in args.real_limit:
        word, _, n = item.partition("=")
        if not word or not n.isdigit():
            ap.error(f"--real-limit {item!r}: expected WORD=N, e.g. up=15")
        limits.append((word, int(n)))
    for flag, path in (("--other-words", args.other_words), ("--other-extra", args.other_extra)):
        if path is not None and not path.is_file():
            ap.error(f"{flag} {path}: no such word list")
    if (args.other_extra is None) != (args.other_extra_count <= 0):
        ap.error("--other-extra WORDS and --other-extra-count N > 0 go together")
    if args.other_extra is not None and args.other_words is None:
        ap.error("--other-extra adds to --other-words: give both")
    if args.unknown_word_target < 0 or args.other_speech_count < 0:
        ap.error("--unknown-word-target and --other-speech-count are counts (0 or more)")
    if bool(args.other_speech) != (args.other_speech_count > 0):
        ap.error("--other-speech DIR and --other-speech-count N > 0 go together")
    if args.other_speech and not args.speech_commands:
        ap.error("--other-speech needs --speech-commands (its windows join the real clips)")
    if limits and not args.speech_commands:
        ap.error("--real-limit needs --speech-commands (it limits real clips)")
    # the real clips first: a bad --real-limit fails before the synthetic sets are rendered
    corpus = (scan_speech_commands(args.speech_commands, args.testing_list)
              if args.speech_commands else None)
    if corpus is not None:
        absent = sorted({w for w, _ in limits} - {c.word for c in corpus.clips})
        if absent:
            ap.error(f"--real-limit: no real clips of {', '.join(absent)} in the "
                     "--speech-commands folders")
        if args.other_speech:
            try:
                corpus = replace(corpus, speech=scan_speech_windows(args.other_speech))
            except InputDataError as err:
                print(err.report(), file=sys.stderr)
                return 2
            log(f"other speech: {len(corpus.speech)} windows, "
                f"{min(args.other_speech_count, len(corpus.speech))} used")
        log(f"real clips: {len(corpus.clips)} ({corpus.duplicates} duplicates, "
            f"{sum(corpus.excluded.values())} of test-split speakers and "
            f"{corpus.listed_test} more on the testing list left out)")
    without = set(args.without)
    synth_cfg = SynthConfig(per_class=args.per_class, seed=args.seed, workers=args.workers,
                            extra_fraction=0.0 if "extra-voices" in without
                            else args.extra_fraction)
    synth = None if "synth" in without else synthetic_dataset(synth_cfg, args.data_dir, log)
    if synth is not None and args.other_words is not None:
        extras = extra_speakers() if "extra-voices" not in without else ()
        other = other_words(replace(synth_cfg, seed=synth_cfg.seed + 1),
                            args.other_words.read_text().split(), args.other_count, extras,
                            args.festival_words, args.data_dir, log)
        if args.other_extra is not None:
            more = other_words(replace(synth_cfg, seed=synth_cfg.seed + 2),
                               args.other_extra.read_text().split(), args.other_extra_count,
                               extras, 0, args.data_dir, log)
            other = Dataset.concat([other, more])
        keep = ~((synth.labels == LABELS.index(UNKNOWN)) & (synth.split == int(Split.TRAIN)))
        synth = Dataset.concat([synth.take(keep), other])
        log(f"data: {len(other)} synthetic other words from {args.other_words}"
            + (f" and {args.other_extra}" if args.other_extra is not None else "")
            + f" replace the synthetic set's {int((~keep).sum())} unknown training clips")
    aug = replace(AugmentConfig(), shift_ms=args.shift_ms,
                  shift_keeps_word=args.shift_keeps_word).without(
        *sorted(without & {"speed", "shift", "reverb", "noise", "gain", "specaug"}))
    mix = MixConfig(real_copies=args.real_copies, scarce_target=args.scarce_target,
                    unknown_real_max=args.unknown_max, silence_real=args.silence,
                    synth_keep=args.synth_keep,
                    synth_keep_scarce=args.synth_keep_scarce, augment_first=args.augment_first,
                    splices=args.splices, other_speech=args.other_speech_count,
                    unknown_word_target=args.unknown_word_target,
                    use_real="real" not in without,
                    exclude_real=tuple(args.exclude_real), real_limit=tuple(limits),
                    augment=aug, seed=args.seed)
    if corpus is not None and args.clip_list:
        args.clip_list.write_text(corpus.clip_list(
            clips=[c for _, c in real_training_clips(corpus, mix)]))
    tcfg = TrainConfig(epochs=args.epochs, seed=args.seed, time_padding=args.time_padding)
    cache = args.cache_dir or args.data_dir / f"features-{args.out.name}"
    res = train_kws_mix(synth, corpus, args.out, cache, tcfg, mix, log, teacher=teacher)
    argv_shown = sys.argv[1:] if argv is None else argv
    cmd = "nice -n 10 .venv/bin/python examples/kws/train.py " + shlex.join(
        str(a) for a in argv_shown)
    (args.out / "README.md").write_text(
        mix_readme_text(res, cmd.strip(), synth_cfg if synth is not None else None, tcfg,
                        mix, corpus, teacher))
    if args.out.resolve() == (ROOT / "models" / "kws").resolve():
        (ROOT / "firmware" / "frontend" / "td_frontend_config.h").write_text(
            render_frontend_header(res.frontend))
    print(mix_summary(res))
    if args.json_out:
        ev = res.real
        doc = {"sha256": res.sha256, "bytes": res.size_bytes, "seconds": res.seconds,
               "train_counts": res.train_counts,
               "synthetic_test": {"float": res.synth_float, "int8": res.synth_int8}}
        if ev is not None:
            doc["real_validation"] = {
                "counts": ev.counts, "float_per_class": ev.float_per_class,
                "int8_per_class": ev.int8_per_class, "float_overall": ev.float_overall,
                "int8_overall": ev.int8_overall, "float_balanced": ev.float_balanced,
                "int8_balanced": ev.int8_balanced}
        args.json_out.write_text(json.dumps(doc, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
