"""`tinydeploy validate MODEL --board B`: the device's outputs, byte for byte, against TFLM."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from tinydeploy.commands.target import (
    add_device_arguments,
    add_stream_arguments,
    add_target_arguments,
    resolve_target,
    streaming_wanted,
)

if TYPE_CHECKING:
    from tinydeploy.boards import Board
    from tinydeploy.model.ir import Graph

NAME = "validate"
HELP = "run the model on the board and compare every output byte with TFLM's reference"
DESCRIPTION = """\
Build the validate app for the board, run it (QEMU or the host directly; a real board on
--port after 'tinydeploy flash'), send input tensors over serial and compare every output
byte with the tflite-micro interpreter (TFLM's reference kernels) on the same inputs.
Exit status 1 when any output differs.

examples:
  tinydeploy validate model.tflite --board mps2-an386 --random 20
  tinydeploy validate model.tflite --board nrf52840 --emulate --inputs cases.npz
  tinydeploy validate model.tflite --board nrf52840 --port /dev/ttyACM0"""


def configure(p: argparse.ArgumentParser) -> None:
    add_target_arguments(p)
    src = p.add_mutually_exclusive_group()
    src.add_argument("--inputs", type=Path, help=".npz/.npy with input tensors (N x shape)")
    src.add_argument("--random", type=int, metavar="N", default=None,
                     help="N random cases, the first two all-minimum and all-maximum "
                          "(default 10)")
    p.add_argument("--seed", type=int, default=0, help="seed for --random (default 0)")
    add_stream_arguments(p)
    p.add_argument("--steps", type=int, default=200, metavar="N",
                   help="--streaming: steps compared after warm-up, on random frames "
                        "(default 200)")
    add_device_arguments(p)
    p.add_argument("--guards", action="store_true",
                   help="debug build: every op is checked for writes outside its output, "
                        "scratch and state; a violation fails naming the op")
    p.add_argument("--json", action="store_true", help="machine-readable output on stdout")


def run(args: argparse.Namespace) -> int:
    from tinydeploy.build.firmware import build_firmware
    from tinydeploy.errors import InputDataError
    from tinydeploy.flash.runner import Firmware
    from tinydeploy.link.connect import connect
    from tinydeploy.link.validate import load_inputs, random_inputs, validate_cases
    from tinydeploy.model.loader import load_tflite
    from tinydeploy.report.output import emit_json, stderr, stdout

    board, out = resolve_target(args, "validate", reachable=True)
    graph = load_tflite(args.model)
    if streaming_wanted(args):
        return _run_streaming(args, board, out, graph)
    model_bytes = args.model.read_bytes()
    if args.inputs is not None:
        cases = load_inputs(args.inputs, graph)
    else:
        n = 10 if args.random is None else args.random
        if n < 1:
            raise InputDataError(f"--random must be at least 1, got {n}")
        cases = random_inputs(graph, n, args.seed)

    if not args.json:
        stderr.print(f"building the validate app for {board.id} -> {out}")
    built = build_firmware(args.model, board, "validate", out, emulate=args.emulate,
                           graph=graph, optimize=args.optimize, guards=args.guards,
                           chip=args.port is not None,   # a flashed board; else it runs here
                           arena_limit=args.arena_limit)
    fw = Firmware.from_build_dir(out)
    with connect(fw, port=args.port, runner=args.runner) as conn:
        if conn.info.info.model_sha256 != graph.sha256:
            from tinydeploy.errors import LinkError

            raise LinkError(f"the device runs model {conn.info.info.model_sha256[:12]}…, not "
                            f"{args.model} ({graph.sha256[:12]}…)",
                            hint="flash the firmware built for this model")

        def on_device(case: list) -> tuple:  # type: ignore[type-arg]
            return conn.session.run(case)

        if args.json:
            report = validate_cases(on_device, model_bytes, cases)
        else:
            from rich.progress import Progress

            with Progress(console=stderr, transient=True) as prog:
                task = prog.add_task(f"validating on {built.board.id}", total=len(cases))
                report = validate_cases(on_device, model_bytes, cases,
                                        progress=lambda k: prog.update(task, completed=k))
    from tinydeploy.report.figures import memory_figures

    res = {"model": str(args.model), "board": built.board.id, **report.to_json(),
           **memory_figures(flash=built.flash_bytes, flash_available=built.board.flash_bytes,
                            ram=built.ram_bytes, ram_available=built.board.ram_bytes,
                            arena=built.arena_bytes, stack_bound=built.stack_bytes,
                            stack_reserved=built.manifest.get("stack_reserved_bytes"))}
    if args.json:
        emit_json(res)
    else:
        ok = report.bit_exact_cases == report.cases
        color = "green" if ok else "red"
        stdout.print(f"[{color}]{report.bit_exact_cases}/{report.cases} cases bit-exact[/] "
                     f"with the tflite-micro reference on {built.board.name}")
        if report.stack_peak:
            stdout.print(f"stack: measured peak {report.stack_peak:,} B, bound "
                         f"{built.stack_bytes:,} B, reserved "
                         f"{built.manifest.get('stack_reserved_bytes') or 0:,} B")
        if report.first_mismatch is not None:
            m = report.first_mismatch
            stdout.print(f"first mismatch: case {m.case}, output {m.output}, position "
                         f"{list(m.position)}: device {m.actual}, reference {m.expected}; "
                         f"{report.mismatched_elements} elements differ, max |diff| "
                         f"{report.max_abs_diff:g}")
    return 0 if report.bit_exact_cases == report.cases else 1


def _run_streaming(args: argparse.Namespace, board: Board, out: Path, graph: Graph) -> int:
    """Steps of random frames; from warm-up on, each step's output against tflite-micro on
    the full window of the last frames."""
    from tinydeploy.build.firmware import build_firmware
    from tinydeploy.errors import InputDataError
    from tinydeploy.flash.runner import Firmware
    from tinydeploy.link.connect import connect
    from tinydeploy.link.validate import random_frames, validate_stream
    from tinydeploy.report.output import emit_json, stderr, stdout

    if args.steps < 1:
        raise InputDataError(f"--steps must be at least 1, got {args.steps}")
    if not args.json:
        stderr.print(f"building the streamed validate app for {board.id} -> {out}")
    built = build_firmware(args.model, board, "validate", out, emulate=args.emulate,
                           graph=graph, optimize=args.optimize, streaming=True,
                           stream_axis=args.stream_axis, stream_keep=args.stream_keep)
    info = built.manifest["stream"]
    hop, window = info["hop_frames"], info["window_frames"]
    frames = random_frames(graph, (info["warmup_steps"] - 1 + args.steps) * hop, args.seed)
    fw = Firmware.from_build_dir(out)
    with connect(fw, port=args.port, runner=args.runner) as conn:
        rep = validate_stream(lambda x: conn.session.run([x]), args.model.read_bytes(), frames,
                              hop, window, args.steps)
    from tinydeploy.commands.bench import to_instructions

    per_step, unit = to_instructions(float(sum(rep.per_op)), rep.unit, built.board)
    res = {"model": str(args.model), "board": built.board.id, **rep.to_json(),
           "per_step": round(per_step), "unit": unit, "hop_frames": hop,
           "state_bytes": info["state_bytes"], "arena_bytes": info["arena_bytes"],
           "keep": info["keep"]}
    if args.json:
        emit_json(res)
    else:
        ok = rep.mismatches == 0
        color = "green" if ok else "red"
        stdout.print(f"[{color}]{rep.steps - rep.mismatches}/{rep.steps} steps bit-exact[/] "
                     f"with the tflite-micro reference on the full window, on "
                     f"{built.board.name} (after {rep.warmup_steps} warm-up steps)")
        if rep.first_mismatch is not None:
            stdout.print(f"first mismatch at step {rep.first_mismatch}")
    return 0 if rep.mismatches == 0 else 1
