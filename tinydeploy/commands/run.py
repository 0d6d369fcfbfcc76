"""`tinydeploy run MODEL --board B`: build, flash (or start in QEMU) and monitor, in one."""

from __future__ import annotations

import argparse
from pathlib import Path

from tinydeploy.boards import RunnerKind
from tinydeploy.commands.target import (
    add_app_arguments,
    add_target_arguments,
    choose_app,
    kws_options,
    resolve_target,
)

NAME = "run"
HELP = "build, flash (or emulate) and monitor in one step"
DESCRIPTION = """\
Build the firmware for the board, flash it (or start it in QEMU / as a host process) and
show the frames it sends. The bench app reports its inferences by itself at start-up.

examples:
  tinydeploy run model.tflite --board mps2-an386 --app bench --timeout 20
  tinydeploy run model.tflite --board nrf52840 --emulate --app bench
  tinydeploy run model.tflite --board nrf52840 --app bench --port /dev/ttyACM0"""


def configure(p: argparse.ArgumentParser) -> None:
    add_target_arguments(p)
    add_app_arguments(p, "bench")
    p.add_argument("--emulate", action="store_true",
                   help="run a real board's build on its emulated stand-in")
    p.add_argument("--runner", choices=[k.value for k in RunnerKind],
                   default=None, help="flashing method (default: the board's first)")
    p.add_argument("--port", default=None, help="serial port of a real board")
    p.add_argument("--timeout", type=float, default=None, metavar="S",
                   help="stop the device and the monitor after S seconds")
    p.add_argument("-o", "--output", type=Path, default=None, help="build folder")
    p.add_argument("--json", action="store_true", help="one JSON object per line on stdout")
    p.add_argument("-v", "--verbose", action="store_true",
                   help="also the flash per op and the kernels chosen per layer")


def run(args: argparse.Namespace) -> int:
    from tinydeploy.commands import flash
    from tinydeploy.commands.build import kws_verdict, print_report
    from tinydeploy.pipeline import build_app
    from tinydeploy.report.output import stderr

    choose_app(args, "bench")
    board, out = resolve_target(args, args.app)
    if not args.json:
        stderr.print(f"building {args.model} for {board.id}, app {args.app} -> {out}")
    # the chip's build when it is flashed (a port, or a runner other than QEMU); the
    # emulator's when it runs here
    here = board.qemu_machine is not None and args.runner in (None, "qemu") and not args.port
    r = build_app(args.model, board, args.app, out, emulate=args.emulate,
                  optimize=args.optimize, chip=not args.emulate and not here,
                  arena_limit=args.arena_limit, kws=kws_options(args))
    verdict = kws_verdict(args, board, r)
    if not args.json:
        print_report(r, args.verbose)
        if verdict is not None:
            stderr.print(verdict.text())
    return flash.run(argparse.Namespace(build_dir=out, runner=args.runner, port=args.port,
                                        monitor=True, timeout=args.timeout, json=args.json))
