"""kws: keyword spotting end to end (data, training, streaming audio to a device, scoring)."""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path
from typing import Any

from tinydeploy.resources import models_dir

NAME = "kws"
HELP = "keyword spotting: make data, train the DS-CNN, stream audio to a device, score"
DESCRIPTION = """\
Keyword spotting with the C audio front end (firmware/frontend) and the kws device app.

  tinydeploy kws data --per-class 1000 -o data/kws/synth.npz     synthetic espeak-ng set
  tinydeploy kws train --speech-commands DIR [DIR ...] -o models/kws
                                  DS-CNN -> INT8 .tflite, real clips mixed with synthetic
  tinydeploy kws stream a.wav b.wav --board mps2-an386             detections, live
  tinydeploy kws score --data data/kws/synth.npz --board mps2-an386 --words 20
                                                     hits, misses, false alarms per hour

stream and score build the kws app for the model (its frontend.json beside it), start the
board (QEMU for emulated boards; --port for a flashed real board) and send AUDIO frames,
at real time with --realtime or as fast as the link allows. --simulate runs the same
pipeline on the host instead (C front end, tflite-micro, the detector's twin)."""

DEFAULT_MODEL = models_dir() / "kws" / "dscnn_int8.tflite"
# what `kws listen` hears with: the DS-CNN trained without padding along time, which streams
# exactly (a step every hop computes only its new rows; models/kws-stream/README.md)
LISTEN_MODEL = models_dir() / "kws-stream" / "dscnn_stream_int8.tflite"


def _detector_args(p: argparse.ArgumentParser, model: Path = DEFAULT_MODEL) -> None:
    p.add_argument("--model", type=Path, default=model,
                   help=f"INT8 KWS .tflite (default: {model.parent.name}/{model.name})")
    p.add_argument("--frontend", default=None, metavar="NAME|FILE.json",
                   help="front-end preset (tinydeploy, mlperf-kws, micro-speech) or a JSON "
                        "config naming one (default: frontend.json beside the model)")
    p.add_argument("--labels", type=Path, default=None, metavar="FILE",
                   help="label names, one per line in the model's output order (default: "
                        "labels.txt beside the model)")
    p.add_argument("--board", help="board id (required unless --simulate)")
    p.add_argument("--emulate", action="store_true",
                   help="run a real board's firmware on its emulated stand-in")
    p.add_argument("--port", help="serial port of a flashed real board")
    p.add_argument("--simulate", action="store_true",
                   help="run the front end, model and detector on the host instead")
    p.add_argument("-o", "--output", type=Path, default=None, help="build folder")
    d = "(default: detector.json beside the model, else {})"
    p.add_argument("--threshold", type=float, default=None,
                   help="on the averaged probability, every keyword's (in place of a "
                        "detector.json's class_thresholds) " + d.format("0.93"))
    p.add_argument("--avg-windows", type=int, default=None, help="windows averaged "
                   + d.format("6"))
    p.add_argument("--suppress-ms", type=int, default=None, help=d.format("750"))
    p.add_argument("--infer-every", type=int, default=None,
                   help="frames (20 ms strides) between inferences " + d.format("4"))
    p.add_argument("--json", action="store_true", help="machine-readable output on stdout")


def configure(p: argparse.ArgumentParser) -> None:
    sub = p.add_subparsers(dest="kws_command", metavar="SUBCOMMAND", required=True)
    d = sub.add_parser("data", help="render the synthetic set (or read Speech Commands)")
    d.add_argument("--per-class", type=int, default=1000)
    d.add_argument("--seed", type=int, default=0)
    d.add_argument("--workers", type=int, default=2)
    d.add_argument("--speech-commands", type=Path, help="a Speech Commands v0.02 tree")
    d.add_argument("-o", "--output", type=Path, required=True, help="dataset .npz")
    d.add_argument("--json", action="store_true")

    from tinydeploy.train.teacher import add_teacher_args

    t = sub.add_parser("train", help="train and quantize the DS-CNN")
    t.add_argument("--data", type=Path, help="dataset .npz (instead of the synthetic set and "
                   "--speech-commands)")
    t.add_argument("--speech-commands", type=Path, nargs="+", default=[], metavar="DIR",
                   help="folders of real recordings in the Speech Commands layout (any "
                   "subset of words; test-split speakers are left out), mixed with the "
                   "synthetic set")
    t.add_argument("--per-class", type=int, default=1000, help="synthetic clips per label")
    t.add_argument("--extra-fraction", type=float, default=0.35,
                   help="share of synthetic training clips spoken by flite/festival voices")
    t.add_argument("--seed", type=int, default=0)
    t.add_argument("--epochs", type=int, default=12)
    t.add_argument("--cache-dir", type=Path, default=None,
                   help="on-disk feature cache (default: OUTPUT/.features)")
    t.add_argument("-o", "--output", type=Path, required=True, help="output folder")
    add_teacher_args(t)
    t.add_argument("--json", action="store_true")

    s = sub.add_parser("stream", help="send WAV files to a device, print detections")
    s.add_argument("wavs", type=Path, nargs="+", metavar="WAV")
    s.add_argument("--realtime", action="store_true", help="pace the audio at real time")
    _detector_args(s)

    li = sub.add_parser("listen", help="the board hears its own microphone (emulated: a WAV "
                                       "file, paced by the board's clock); detections live")
    li.add_argument("--wav", type=Path, default=None,
                    help="what the virtual microphone hears (emulated boards; default: "
                         "examples/kws/demo.wav)")
    li.add_argument("--seconds", type=float, default=None,
                    help="listen this long (emulated: the first S seconds of --wav; a real "
                         "board: default 30)")
    mode = li.add_mutually_exclusive_group()
    mode.add_argument("--streaming", dest="streaming", action="store_const", const=True,
                      default=None, help="run the model streamed: a step every hop computes "
                                         "only what is new (docs/streaming.md)")
    mode.add_argument("--full-window", dest="streaming", action="store_const", const=False,
                      help="run the model on the whole window every N frames (default: "
                           "whichever of the two keeps the core least busy)")
    _detector_args(li, LISTEN_MODEL)
    from tinydeploy.commands.target import add_optimize_argument

    add_optimize_argument(li)

    c = sub.add_parser("score", help="a long stream of test clips: hits, misses, FA/hour; or "
                                     "a folder of labelled WAV clips: top-1, confusion matrix")
    c.add_argument("--data", type=Path, required=True,
                   help="dataset .npz (its test split, streamed), or a FOLDER of WAV files "
                        "with one sub-folder per label (scored clip by clip)")
    c.add_argument("--max-per-class", type=int, default=None, metavar="N",
                   help="FOLDER: at most N clips per sub-folder (sorted by name)")
    c.add_argument("--reference", action="store_true",
                   help="FOLDER: also run the front end's reference (e.g. TensorFlow's ops for "
                        "mlperf-kws) through tflite-micro and report the top-1 agreement")
    c.add_argument("--words", type=int, default=40, help="test clips in the stream")
    c.add_argument("--seed", type=int, default=0)
    c.add_argument("--tolerance-ms", type=int, default=1000)
    c.add_argument("--realtime", action="store_true")
    _detector_args(c)
    for sp in (d, t, s, li, c):     # `tinydeploy kws stream ... --debug` as for other commands
        sp.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                        help="show a Python traceback on errors")


def run(args: argparse.Namespace) -> int:
    return {"data": _data, "train": _train, "stream": _stream, "score": _score,
            "listen": _listen}[args.kws_command](args)


def _log(args: argparse.Namespace) -> Any:
    from tinydeploy.report.output import stderr

    return lambda msg: stderr.print(msg)


def _data(args: argparse.Namespace) -> int:
    from tinydeploy.report.output import emit_json, stdout
    from tinydeploy.train.data import SynthConfig, generate_synthetic, load_speech_commands

    if args.speech_commands:
        ds = load_speech_commands(args.speech_commands, seed=args.seed)
    else:
        ds = generate_synthetic(SynthConfig(per_class=args.per_class, seed=args.seed,
                                            workers=args.workers))
    args.output.parent.mkdir(parents=True, exist_ok=True)
    ds.save(args.output)
    if args.json:
        emit_json({"output": str(args.output), "clips": len(ds), "counts": ds.counts()})
    else:
        stdout.print(f"{len(ds)} clips -> {args.output}")
        for split, c in ds.counts().items():
            stdout.print(f"  {split:10s} " + " ".join(f"{k}:{v}" for k, v in c.items()))
    return 0


def _train(args: argparse.Namespace) -> int:
    from tinydeploy.report.output import emit_json, stdout
    from tinydeploy.train.data import Dataset, SynthConfig, scan_speech_commands
    from tinydeploy.train.kws import (
        MixConfig,
        TrainConfig,
        mix_readme_text,
        mix_summary,
        readme_text,
        synthetic_dataset,
        train_kws,
        train_kws_mix,
    )
    from tinydeploy.train.teacher import teacher_from_args

    cmd = "tinydeploy kws " + " ".join(sys.argv[2:]) if len(sys.argv) > 2 else \
        "tinydeploy kws train"
    tcfg = TrainConfig(epochs=args.epochs, seed=args.seed)
    teacher = teacher_from_args(args)
    if args.data:
        from tinydeploy.errors import InputDataError

        if args.speech_commands:
            raise InputDataError("--data and --speech-commands cannot be combined",
                                 hint="a dataset .npz already holds its clips")
        if teacher is not None:
            raise InputDataError("--teacher needs real recordings (--speech-commands), "
                                 "not --data", hint="the teacher judges real clips only")
        res = train_kws(Dataset.load(args.data), args.output, tcfg, _log(args))
        (args.output / "README.md").write_text(readme_text(res, cmd, None, tcfg))
        summary = {"model": str(res.model_path), "sha256": res.sha256,
                   "bytes": res.size_bytes, "float_accuracy": res.float_accuracy,
                   "int8_accuracy": res.int8_accuracy}
        if args.json:
            emit_json(summary)
        else:
            stdout.print(f"{res.model_path}: float test "
                         f"{100 * res.float_accuracy['test']:.2f} %, INT8 test "
                         f"{100 * res.int8_accuracy['test']:.2f} % ({res.size_bytes} bytes)")
        return 0
    log = _log(args)
    corpus = scan_speech_commands(args.speech_commands) if args.speech_commands else None
    if corpus is None:
        log("data: no --speech-commands given: training on synthetic speech only")
    else:
        log(f"data: {len(corpus.clips)} real clips from {len(corpus.roots)} folder(s), "
            f"{sum(corpus.excluded.values())} test-split clips left out, "
            f"{len(corpus.noise)} background recordings")
    synth_cfg = SynthConfig(per_class=args.per_class, seed=args.seed,
                            extra_fraction=args.extra_fraction)
    synth = synthetic_dataset(synth_cfg, None, log)
    mix = MixConfig(seed=args.seed, splices=args.splices)
    res_m = train_kws_mix(synth, corpus, args.output, args.cache_dir or
                          args.output / ".features", tcfg, mix, log, teacher=teacher)
    (args.output / "README.md").write_text(mix_readme_text(res_m, cmd, synth_cfg, tcfg, mix,
                                                           corpus, teacher))
    real_train = sum(v["real"] for v in res_m.train_counts.values())
    synth_train = sum(v["synthetic"] for v in res_m.train_counts.values())
    if args.json:
        doc: dict[str, Any] = {
            "model": str(res_m.model_path), "sha256": res_m.sha256, "bytes": res_m.size_bytes,
            "data": "real+synthetic" if real_train else "synthetic",
            "train_clips": {"real": real_train, "synthetic": synth_train},
            "synthetic_test": {"float": res_m.synth_float, "int8": res_m.synth_int8}}
        if res_m.real is not None:
            doc["real_validation"] = {"clips": sum(res_m.real.counts.values()),
                                      "float": res_m.real.float_overall,
                                      "int8": res_m.real.int8_overall,
                                      "int8_per_class": res_m.real.int8_per_class}
        emit_json(doc)
    else:
        stdout.print(mix_summary(res_m))
    return 0


def _detector(args: argparse.Namespace) -> Any:
    """The detector settings; the keywords are the model's non-filler labels."""
    from tinydeploy.kws.labels import keyword_range
    from tinydeploy.kws.stream import model_detector

    names = _label_names(args.model, args.labels)
    first, end = keyword_range(names)
    base = model_detector(args.model, names)
    given = {k: getattr(args, k) for k in ("avg_windows", "threshold", "suppress_ms",
                                           "infer_every") if getattr(args, k) is not None}
    if "threshold" in given:            # --threshold is every keyword's
        given["class_thresholds"] = ()
    return dataclasses.replace(base, **given, first_keyword=first, keyword_end=end)


def _run_audio(args: argparse.Namespace, audio: Any, on_detection: Any) -> tuple[list, Any]:
    """Detections for ``audio`` from the device (or the host simulation) and device stats."""
    from tinydeploy.errors import InputDataError
    from tinydeploy.kws.device import build_kws_firmware
    from tinydeploy.kws.stream import simulate_stream, stream_to_device

    if not args.model.exists():
        raise InputDataError(f"{args.model}: no such model",
                             hint="train one with `tinydeploy kws train`")
    fcfg = _frontend(args)
    _check_input(args.model, fcfg)
    det = _detector(args)
    if args.simulate:
        events = simulate_stream(audio, args.model.read_bytes(), fcfg, det)
        for e in events:
            on_detection(e)
        return events, None
    if not args.board:
        raise InputDataError("--board is required (or --simulate)",
                             hint="e.g. --board mps2-an386")
    from tinydeploy.boards import get_board
    from tinydeploy.flash.runner import Firmware
    from tinydeploy.link.connect import connect

    board = get_board(args.board)
    out = args.output or _kws_output(args, board.id)
    if not args.json:
        _log(args)(f"building the kws app for {board.id} -> {out}")
    out = out.resolve()
    build_kws_firmware(args.model, board, out, det, fcfg, emulate=args.emulate,
                       chip=args.port is not None)   # a flashed board; else it runs here
    fw = Firmware.from_build_dir(out)
    with connect(fw, port=args.port) as conn:
        res = stream_to_device(conn.session, audio, realtime=args.realtime,
                               on_detection=on_detection)
    return list(res.detections), res


def _kws_output(args: argparse.Namespace, board_id: str) -> Path:
    """The kws app's build folder, named after the model as `build` names its folders
    (``build/<model>-<board>[-emulated]-kws``), so another model's build does not overwrite
    this one."""
    from tinydeploy.commands.target import default_output

    return default_output(args.model, board_id, "kws", args.emulate)


def _frontend(args: argparse.Namespace) -> Any:
    """The front end chosen by --frontend (or frontend.json beside the model), resolved once
    and before any audio is read, so a bad choice fails first."""
    from tinydeploy.errors import InputDataError
    from tinydeploy.kws.device import frontend_for

    if getattr(args, "_frontend_choice", None) is None:
        if not args.model.exists():    # before its frontend.json is looked for beside it
            raise InputDataError(f"{args.model}: no such model",
                                 hint="--model takes an INT8 keyword-spotting .tflite")
        args._frontend_choice = frontend_for(args.model, args.frontend)
    return args._frontend_choice


def _check_input(model: Path, choice: Any) -> None:
    """The model's input must be one window of the chosen front end's features."""
    from tinydeploy.frontend.presets import check_model_input
    from tinydeploy.model.loader import load_tflite

    g = load_tflite(model)
    check_model_input(choice, tuple(int(d) for d in g.inputs[0].shape), str(model))


def _label_names(model: Path, labels: Path | None = None) -> list[str]:
    """``--labels`` (else labels.txt beside the model, else the project's 12 labels), checked
    against the model's output count."""
    from tinydeploy.kws.labels import load_labels

    return load_labels(model, labels)


def attribute(ms: int, offsets: list[int], names: list[str], window_ms: int = 1000) -> str:
    """The file a detection at ``ms`` (stream time) came from, and its time from that file's
    start: the file holding the middle of the window that ends at ``ms`` (a detection fires
    after its word, often once the next file has begun). ``offsets``: each file's first
    sample (16 kHz), then the total."""
    import numpy as np

    mid = max(ms - window_ms // 2, 0)
    i = int(np.searchsorted(offsets, mid * 16, side="right")) - 1
    i = min(max(i, 0), len(names) - 1)
    return f"{names[i]} +{ms - offsets[i] // 16} ms"


def _stream(args: argparse.Namespace) -> int:
    import numpy as np

    from tinydeploy.kws.wav import read_wav
    from tinydeploy.report.output import emit_json, stdout

    _frontend(args)
    names = _label_names(args.model, args.labels)
    clips = [read_wav(w) for w in args.wavs]
    offsets = np.cumsum([0] + [c.size for c in clips])
    audio = np.concatenate(clips)

    def where(ms: int) -> str:
        return attribute(ms, [int(o) for o in offsets], [w.name for w in args.wavs])

    def show(d: Any) -> None:
        if not args.json:
            stdout.print(f"{d.time_ms:8d} ms  {names[d.label]:10s} score {d.score:.3f}  "
                         f"({where(d.time_ms)})")

    events, res = _run_audio(args, audio, show)
    seconds = audio.size / 16000
    if args.json:
        emit_json({"detections": [{"label": names[d.label], "index": d.label,
                                   "score": d.score, "time_ms": d.time_ms,
                                   "where": where(d.time_ms)} for d in events],
                   "seconds_of_audio": seconds,
                   "windows": None if res is None else res.windows,
                   "device": _device_json(res)})
        return 0
    # always a last line, so that no detection reads as a result and not as silence
    count = f"{len(events)} detection{'s' if len(events) != 1 else ''}"
    if res is not None:
        stdout.print(f"{count} in {res.windows} windows ({seconds:.1f} s of audio)")
        stdout.print(_device_text(res, args))
    else:
        stdout.print(f"{count} in {seconds:.1f} s of audio (simulated, an inference every "
                     f"{_detector(args).infer_every} frames)")
    return 0


def _listen(args: argparse.Namespace) -> int:
    """Build the listening firmware with a schedule that keeps up, let it hear, print what
    it says as it says it."""

    from tinydeploy.boards import get_board
    from tinydeploy.errors import InputDataError
    from tinydeploy.kws.listen import listen_board, listen_emulated
    from tinydeploy.kws.realtime import measure_kws_load, pick_schedule, stream_hop
    from tinydeploy.kws.wav import read_wav
    from tinydeploy.report.output import emit_json, stdout
    from tinydeploy.resources import examples_dir

    if args.simulate:
        raise InputDataError("kws listen runs the firmware; the host twin is "
                             "`kws stream FILE --simulate --infer-every N`")
    if not args.board:
        raise InputDataError("--board is required", hint="e.g. --board nrf52840 --emulate")
    if args.seconds is not None and args.seconds <= 0:
        raise InputDataError(f"--seconds must be positive, got {args.seconds}")
    board = get_board(args.board)
    choice = _frontend(args)
    _check_input(args.model, choice)
    names = _label_names(args.model, args.labels)
    emulated = args.emulate or board.qemu_machine is not None
    log = _log(args)
    out = (args.output or Path("build") / f"kws-listen-{args.model.stem}-{board.id}"
           f"{'-emulated' if args.emulate else ''}").resolve()
    hop = stream_hop(args.model) if args.streaming is not False else None
    if args.streaming and hop is None:
        raise InputDataError(f"{args.model}: the model cannot be streamed",
                             hint="`tinydeploy plan MODEL --streaming` says why")
    if not args.json:
        log(f"measuring the front end and the model on {board.id}'s emulated core ...")
    loads = []
    if not args.streaming:
        loads.append(measure_kws_load(args.model, board, choice, out / "measure",
                                      optimize=args.optimize))
    if hop is not None and not (args.streaming is None and args.infer_every is not None):
        loads.append(measure_kws_load(args.model, board, choice, out / "measure-streamed",
                                      streaming=True, optimize=args.optimize))
    sched = pick_schedule(board, loads, choice.config, args.infer_every)
    det = dataclasses.replace(_detector(argparse.Namespace(**{**vars(args), "infer_every": 1})),
                              infer_every=sched.infer_every)
    if not args.json:
        log(sched.text())

    def show(d: Any) -> None:
        if not args.json:
            stdout.print(f"{d.time_ms:8d} ms  {names[d.label]:10s} score {d.score:.3f}")

    def status(s: Any) -> None:
        if not args.json and (s.final or s.audio_ms % 10_000 == 0):
            log(f"  {s.audio_ms / 1000:7.1f} s heard, {s.windows} windows, "
                f"{s.overruns} samples lost, busy {100 * s.duty_cycle:.1f} %")

    if emulated:
        wav = args.wav or examples_dir() / "kws" / "demo.wav"
        audio = read_wav(wav)
        if args.seconds is not None:
            audio = audio[:int(args.seconds * choice.config.sample_rate)]
        if not args.json:
            log(f"listening to {wav} ({audio.size / choice.config.sample_rate:.1f} s) through "
                f"the virtual microphone of {board.id}")
        res = listen_emulated(args.model, board, audio, det, choice, out,
                              audio_blocks=sched.audio_blocks, on_detection=show,
                              on_status=status, streaming=sched.streamed,
                              optimize=args.optimize)
    else:
        if args.wav is not None:
            raise InputDataError("--wav feeds the virtual microphone of an emulated board",
                                 hint="add --emulate, or speak to the board")
        res = listen_board(args.model, board, det, choice, out,
                           audio_blocks=sched.audio_blocks, seconds=args.seconds or 30.0,
                           port=args.port, on_detection=show, on_status=status,
                           streaming=sched.streamed, optimize=args.optimize)
    d = res.as_dict(names)
    d["schedule"] = sched.as_dict()
    if args.json:
        emit_json(d)
    else:
        stdout.print(f"{len(res.detections)} detections in {res.audio_seconds:.1f} s of audio; "
                     f"{res.overruns} samples lost to overruns; duty cycle "
                     f"{100 * res.duty_cycle:.1f} % "
                     f"({'streamed step' if sched.streamed else 'inference'} every "
                     f"{res.infer_every} frames, {res.audio_blocks} audio blocks)")
    return 0


def _device_json(res: Any) -> dict[str, Any] | None:
    if res is None:
        return None
    return {"windows": res.windows, "unit": res.unit, "per_window_min": res.per_window_min,
            "per_window_max": res.per_window_max, "per_window_mean": res.per_window_mean,
            "frontend_total": res.frontend_total, "model_total": res.model_total,
            "seconds": res.seconds}


def _device_text(res: Any, args: argparse.Namespace) -> str:
    """Per-window cost; on an emulated board in instructions, as `bench` reports them."""
    from tinydeploy.boards import emulation_target, get_board
    from tinydeploy.commands.bench import to_instructions

    if not res.windows:
        return "no inference window completed (less than 1 s of audio?)"
    board = get_board(args.board)
    if args.emulate:
        board = emulation_target(board)

    def conv(v: float) -> str:
        return f"{to_instructions(v, res.unit, board)[0]:,.0f}"

    unit = to_instructions(0, res.unit, board)[1]
    return (f"{res.windows} windows: {conv(res.per_window_mean)} {unit} per window "
            f"(min {conv(res.per_window_min)}, max {conv(res.per_window_max)}; front end "
            f"{conv(res.frontend_total / res.windows)}, model "
            f"{conv(res.model_total / res.windows)}), {res.seconds:.1f} s")


def _score(args: argparse.Namespace) -> int:
    import numpy as np

    if args.data.is_dir():
        return _score_folder(args)

    from tinydeploy.errors import InputDataError
    from tinydeploy.kws.stream import build_stream, score_stream
    from tinydeploy.report.output import emit_json, stdout
    from tinydeploy.train.data import Dataset, Split

    ds = Dataset.load(args.data).subset(Split.TEST)
    if len(ds) == 0:
        raise InputDataError(f"{args.data}: no test clips")
    rng = np.random.default_rng(args.seed)
    idx = np.sort(rng.choice(len(ds), size=min(args.words, len(ds)), replace=False))
    idx = rng.permutation(idx)
    stream = build_stream(ds.audio[idx], ds.labels[idx], seed=args.seed)
    events, res = _run_audio(args, stream.audio, lambda d: None)
    sc = score_stream(events, stream.words, stream.hours, args.tolerance_ms)
    if args.json:
        emit_json({**sc.as_dict(), "seconds_of_audio": stream.audio.size / 16000,
                   "device": _device_json(res)})
    else:
        d = sc.as_dict()
        stdout.print(f"{stream.audio.size / 16000:.0f} s of audio, {sc.words} keywords: "
                     f"{sc.hits} hits ({100 * sc.hit_rate:.1f} %), {sc.misses} misses, "
                     f"{sc.false_alarms} false alarms ({sc.false_alarms_per_hour:.1f} per hour,"
                     f" {sc.substitutions} wrong labels), median latency "
                     f"{d['median_latency_ms']} ms")
        if res is not None:
            stdout.print(_device_text(res, args))
    return 0


def _per_clip(model_bytes: bytes, lf: Any, names: list[str], pred: Any, outs: Any
              ) -> list[dict[str, Any]]:
    """One entry per clip: its file, true and predicted label, and the predicted label's
    probability (the int8 output dequantized with the model's output scale)."""
    from tinydeploy.model.loader import load_tflite

    out_t = load_tflite(model_bytes).outputs[0]
    scale, zp = (out_t.scale, out_t.zero_point) if out_t.quant else (1.0, 0)
    return [{"file": str(f), "label": names[int(y)], "predicted": names[int(p)],
             "score": round(float((int(o[int(p)]) - zp) * scale), 4)}
            for f, y, p, o in zip(lf.files, lf.labels, pred, outs, strict=True)]


def _score_folder(args: argparse.Namespace) -> int:
    """Top-1 per clip of a labelled WAV folder, on the device or simulated."""
    from tinydeploy.errors import InputDataError
    from tinydeploy.kws.folder import (
        FolderScore,
        collect_folder,
        device_predictions,
        fit_clips,
        host_predictions,
        score_json,
    )
    from tinydeploy.report.output import emit_json, stdout

    if not args.model.exists():
        raise InputDataError(f"{args.model}: no such model")
    if args.max_per_class is not None and args.max_per_class < 1:
        raise InputDataError(f"--max-per-class must be >= 1, got {args.max_per_class}")
    choice = _frontend(args)
    _check_input(args.model, choice)
    names = _label_names(args.model, args.labels)
    lf = collect_folder(args.data, names, args.max_per_class)
    log = _log(args)
    log(f"{len(lf.files)} clips from {args.data} ({choice.preset.value} front end)"
        + (f"; as unknown: {', '.join(sorted(lf.as_unknown))}" if lf.as_unknown else "")
        + (f"; skipped: {', '.join(sorted(lf.skipped))}" if lf.skipped else ""))
    clips = fit_clips(lf.files, choice.config)
    model_bytes = args.model.read_bytes()

    def progress(i: int, n: int) -> None:
        log(f"  {i}/{n} clips")


    if args.simulate:
        pred, outs = host_predictions(clips, model_bytes, choice, progress)
    else:
        if not args.board:
            raise InputDataError("--board is required (or --simulate)",
                                 hint="e.g. --board mps2-an386")
        from tinydeploy.boards import get_board
        from tinydeploy.flash.runner import Firmware
        from tinydeploy.kws.device import build_kws_firmware
        from tinydeploy.link.connect import connect

        board = get_board(args.board)
        out = (args.output or _kws_output(args, board.id)).resolve()
        log(f"building the kws app for {board.id} -> {out}")
        build_kws_firmware(args.model, board, out, _detector(args), choice,
                           emulate=args.emulate, chip=args.port is not None)
        fw = Firmware.from_build_dir(out)
        # the emulator's watchdog: generous, a clip takes ~0.2-5 s on a busy host
        with connect(fw, port=args.port, timeout=120.0 + 20.0 * len(clips)) as conn:
            pred, outs = device_predictions(conn.session, clips, progress)
    sc = FolderScore(tuple(names), lf.labels, pred)
    doc = {**score_json(sc, lf), "mode": "simulate" if args.simulate else "device",
           "board": None if args.simulate else args.board, "frontend": choice.preset.value,
           "clips": _per_clip(model_bytes, lf, names, pred, outs)}
    if args.reference:
        from tinydeploy.tfenv import quiet_tensorflow

        quiet_tensorflow()   # TensorFlow's start-up lines are not this command's output
        ref, _ = host_predictions(clips, model_bytes, choice, progress, reference=True)
        doc["reference_top1"] = float((ref == lf.labels).mean())
        doc["agreement"] = float((ref == pred).mean())
        doc["disagreements"] = int((ref != pred).sum())
    if args.json:
        emit_json(doc)
        return 0
    where = "simulated" if args.simulate else f"on {args.board}"
    stdout.print(f"{sc.n} clips {where}: top-1 {100 * sc.top1:.2f} %")
    for name, c in sc.per_class().items():
        stdout.print(f"  {name:12s} {c['n']:6d} clips  {100 * c['top1']:6.2f} %")
    m = sc.confusion()
    used = [i for i in range(len(names)) if m[i].sum() or m[:, i].sum()]
    stdout.print("confusion (rows: true, columns: predicted): "
                 + " ".join(names[i][:6] for i in used))
    for i in used:
        stdout.print(f"  {names[i][:10]:10s} " + " ".join(f"{m[i, j]:6d}" for j in used))
    if args.reference:
        stdout.print(f"reference pipeline: top-1 {100 * doc['reference_top1']:.2f} %, same top-1 "
                     f"as this run on {100 * doc['agreement']:.2f} % of clips "
                     f"({doc['disagreements']} differ)")
    return 0
