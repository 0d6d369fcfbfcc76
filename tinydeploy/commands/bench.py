"""`tinydeploy bench MODEL --board B`: instructions or cycles per inference, per op."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from tinydeploy.commands.target import (
    add_device_arguments,
    add_stream_arguments,
    add_target_arguments,
    resolve_target,
    streaming_wanted,
)

NAME = "bench"
HELP = "measure cycles (real board) or instructions (emulated) per inference and per op"
DESCRIPTION = """\
Build the bench app, run it and report the count per inference and per op, with flash and
RAM. On QEMU boards the machine runs with -icount shift=0, so SysTick counts are a
deterministic function of executed instructions: the figure is instructions per inference
and is the same on every run. On real boards it is DWT cycles (SysTick on Cortex-M0).

examples:
  tinydeploy bench model.tflite --board mps2-an386
  tinydeploy bench model.tflite --board nrf52840 --emulate --json"""


def configure(p: argparse.ArgumentParser) -> None:
    add_target_arguments(p)
    p.add_argument("--runs", type=int, default=5, help="inferences to time (default 5)")
    add_stream_arguments(p)
    add_device_arguments(p)
    p.add_argument("--opt", default="-O2", choices=["-O2", "-O3", "-Os", "-O1"],
                   help="compiler optimisation (default -O2)")
    p.add_argument("--json", action="store_true", help="machine-readable output on stdout")


def to_instructions(count: float, unit: str, board: Any) -> tuple[float, str]:
    """The device's ``count`` in the host's unit (`tinydeploy.link.units.host_count`):
    instructions under QEMU, cycles on hardware; counts already converted pass unchanged."""
    from tinydeploy.link.units import host_count

    return host_count(count, unit, board)


def bench_build(build_dir: Path, runs: int, port: str | None = None,
                runner: str | None = None) -> dict[str, Any]:
    import json

    from tinydeploy.flash.runner import Firmware
    from tinydeploy.link.connect import connect
    from tinydeploy.link.messages import Done, MsgType, Profile
    from tinydeploy.link.session import BenchResult, gather_profile

    fw = Firmware.from_build_dir(build_dir)
    manifest = json.loads((build_dir / "manifest.json").read_text())
    with connect(fw, port=port, runner=runner) as conn:
        # The bench app times its inferences at start-up, before any byte arrives from the
        # host: under -icount the instruction stream from reset is the same on every run, so
        # these figures are too (a later BENCH request starts at a SysTick phase that depends
        # on when the host's bytes came in, and per-op ticks can move by one).
        boot = [m for m in conn.session.unsolicited
                if isinstance(m, (Done, Profile)) and (not isinstance(m, Done)
                                                      or m.request == MsgType.BENCH)]
        counts, _, boot_done = gather_profile(boot)
        if boot_done is not None and boot_done.runs == runs:
            res = BenchResult(boot_done, tuple(counts[k] for k in sorted(counts)))
        else:
            res = conn.session.bench(runs)
    done = res.done
    mean, unit = to_instructions(done.mean, done.unit, fw.board)
    lo, _ = to_instructions(done.min, done.unit, fw.board)
    hi, _ = to_instructions(done.max, done.unit, fw.board)
    key = "instructions_per_inference" if unit == "instructions" else (
        "cycles_per_inference" if unit == "cycles" else f"{unit}_per_inference")
    per_op = []
    names = [k["type"] for k in manifest["kernels"]]
    symbols = [k["symbol"] for k in manifest["kernels"]]
    for i, c in enumerate(res.per_op):
        v, _ = to_instructions(c, done.unit, fw.board)
        per_op.append({"index": i, "type": names[i] if i < len(names) else "?",
                       "symbol": symbols[i] if i < len(symbols) else "?", "count": round(v)})
    from tinydeploy.boards import get_board
    from tinydeploy.link.units import milliseconds

    # at the clock of the board the firmware stands in for (the nRF52840's 64 MHz when it
    # runs on its emulated Cortex-M4), not the emulator machine's
    clock_board = get_board(manifest.get("requested_board") or fw.board.id) \
        if "@" in fw.board.id else fw.board
    ms = milliseconds(mean, unit, clock_board)
    from tinydeploy.report.figures import memory_figures

    return {
        "board": fw.board.id,
        **memory_figures(flash=manifest["flash_bytes"], flash_available=fw.board.flash_bytes,
                         ram=manifest["ram_bytes"], ram_available=fw.board.ram_bytes,
                         arena=manifest["arena_bytes"], stack_bound=manifest["stack_bytes"],
                         stack_reserved=manifest.get("stack_reserved_bytes")),
        "unit": unit,
        "per_inference": round(mean),
        "ms_per_inference": None if ms is None else round(ms, 3),
        "clock_hz": clock_board.clock_hz,
        key: round(mean),
        "min": round(lo),
        "max": round(hi),
        "runs": done.runs,
        "per_op": per_op,
        "stack_bytes": manifest["stack_bytes"],   # = stack_bound_bytes (kept, docs/json.md)
        "stack_peak_bytes": done.stack_peak or None,   # measured on the device (painted)
    }


BENCH_RECORD = "bench.json"


def record_bench(out: Path, r: dict[str, Any], args: argparse.Namespace, streamed: bool
                 ) -> None:
    """``bench.json`` in the build folder: the figures and what they were measured for (the
    model's sha256, the --optimize mode, streamed or not), so that `plan` can print the
    measured total beside its estimate. Best effort: a folder that cannot be written loses
    only this note."""
    import hashlib
    import json

    doc = {"sha256": hashlib.sha256(Path(args.model).read_bytes()).hexdigest(),
           "optimize": args.optimize, "streaming": streamed,
           "per_inference": r["per_inference"], "unit": r["unit"], "board": r["board"],
           "per_op": [{"index": o["index"], "count": o["count"]} for o in r["per_op"]]}
    try:
        (out / BENCH_RECORD).write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    except OSError:
        pass


def measured_by_bench(model: Path, board_id: str, optimize: str, streaming: bool
                      ) -> tuple[Path, dict[str, Any]] | None:
    """The last `bench` record of this model (same bytes), board, mode and schedule in the
    default build folders (emulated or not), if any."""
    import hashlib
    import json

    from tinydeploy.commands.target import default_output

    sha = hashlib.sha256(Path(model).read_bytes()).hexdigest()
    for emulate in (True, False):
        path = default_output(Path(model), board_id, "bench", emulate) / BENCH_RECORD
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if (isinstance(doc, dict) and doc.get("sha256") == sha
                and doc.get("optimize") == optimize
                and bool(doc.get("streaming")) == streaming
                and isinstance(doc.get("per_inference"), int)):
            return path, doc
    return None


def run(args: argparse.Namespace) -> int:
    from tinydeploy.build.firmware import build_firmware
    from tinydeploy.errors import InputDataError
    from tinydeploy.report.output import emit_json, stderr, stdout

    if args.runs < 1:
        raise InputDataError(f"--runs must be at least 1, got {args.runs}")
    streamed = streaming_wanted(args)
    board, out = resolve_target(args, "bench", reachable=True)
    if not args.json:
        stderr.print(f"building the bench app for {board.id} -> {out}")
    build_firmware(args.model, board, "bench", out, emulate=args.emulate, opt=args.opt,
                   cflags_extra=(f"-DTD_BENCH_RUNS={args.runs}u",), optimize=args.optimize,
                   streaming=streamed, stream_axis=args.stream_axis,
                   stream_keep=args.stream_keep,
                   chip=args.port is not None,
                   arena_limit=args.arena_limit)   # a flashed board; else it runs here
    r = bench_build(out, args.runs, args.port, args.runner)
    import json

    stream = json.loads((out / "manifest.json").read_text()).get("stream")
    if stream is not None:
        # each timed run is one step of the streamed model (td_model_invoke = td_model_step)
        # (per_inference is in the run's unit: instructions under QEMU, cycles on hardware;
        # not ms_per_inference)
        per = r["per_inference"]
        r.update(per_step_instructions=per, per_step=per, state_bytes=stream["state_bytes"],
                 hop_frames=stream["hop_frames"], warmup_steps=stream["warmup_steps"],
                 keep=stream["keep"])
    record_bench(out, r, args, streamed)
    if args.json:
        emit_json(r)
        return 0
    from rich.table import Table

    unit = r["unit"]
    total = sum(o["count"] for o in r["per_op"]) or 1
    t = Table(title=f"{unit} per op", title_justify="left")
    for col, j in (("#", "right"), ("op", "left"), ("kernel", "left"), (unit, "right"),
                   ("share", "right")):
        t.add_column(col, justify=j)  # type: ignore[arg-type]
    for o in r["per_op"]:
        t.add_row(str(o["index"]), o["type"], o["symbol"], f"{o['count']:,}",
                  f"{100 * o['count'] / total:.1f} %")
    stdout.print(t)
    per_inf = r["per_inference"]
    ms = r["ms_per_inference"]
    at = (f" = {ms:,.2f} ms at {r['clock_hz'] / 1e6:g} MHz" if ms is not None else "")
    stdout.print(f"[bold]{per_inf:,} {unit} per inference{at}[/] on {r['board']} "
                 f"({r['runs']} runs, min {r['min']:,}, max {r['max']:,})")
    stack = f"stack bound {r['stack_bytes']:,} B"
    if r["stack_peak_bytes"]:
        stack += f", measured peak {r['stack_peak_bytes']:,} B"
    if r["stack_reserved_bytes"]:
        stack += f", reserved {r['stack_reserved_bytes']:,} B"
    stdout.print(f"flash {r['flash_bytes']:,} B   RAM {r['ram_bytes']:,} B   arena "
                 f"{r['arena_bytes']:,} B   {stack}")
    if "per_step_instructions" in r:
        stdout.print(f"streamed: one inference is one step of {r['hop_frames']} frames; "
                     f"state {r['state_bytes']:,} B of the arena (keeps {r['keep']})")
    return 0
