"""`tinydeploy build MODEL --board B`: generate the firmware project and compile it."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from tinydeploy.commands.target import (
    add_app_arguments,
    add_stream_arguments,
    add_target_arguments,
    choose_app,
    kws_options,
    resolve_target,
    streaming_wanted,
)

NAME = "build"
HELP = "generate C firmware for a board and compile it (ELF/HEX/BIN + size report)"
DESCRIPTION = """\
Compile a model ahead of time into a self-contained firmware project (plain `make` builds
it again) and build firmware.elf/.hex/.bin with arm-none-eabi-gcc (or the host compiler for
--board host). The model must fit: the arena is planned against the board's RAM before the
compiler runs. --emulate builds a real board's firmware for the QEMU machine with the same
core, limited to the real board's RAM and flash.

examples:
  tinydeploy build model.tflite --board nrf52840
  tinydeploy build model.tflite --board nrf52840 --emulate --app bench -o out/nrf"""


def configure(p: argparse.ArgumentParser) -> None:
    from tinydeploy.plan.arena import ALGORITHMS

    add_target_arguments(p)
    p.add_argument("-o", "--output", type=Path, default=None,
                   help="project folder (default: build/<model>-<board>-<app>)")
    add_app_arguments(p, "validate")
    p.add_argument("--emulate", action="store_true",
                   help="build for the board's emulated stand-in with its memory limits")
    p.add_argument("--algorithm", default="auto", choices=ALGORITHMS,
                   help="arena planning algorithm (default: auto)")
    p.add_argument("--stack", type=int, default=None, metavar="BYTES",
                   help="stack to reserve (default: the call-graph bound + max(256, "
                        "bound / 8), rounded up to 64; a bound above it fails the build)")
    p.add_argument("--opt", default="-O2", choices=["-O2", "-O3", "-Os", "-O1", "-O0"],
                   help="compiler optimisation (default -O2)")
    add_stream_arguments(p)
    p.add_argument("--guards", action="store_true",
                   help="debug build: canary and hash checks around the arena, every scratch "
                        "buffer and every op's output; a kernel writing outside them stops "
                        "the firmware naming the op (off by default)")
    p.add_argument("--force", action="store_true",
                   help="write into an output folder that holds files not made by tinydeploy")
    p.add_argument("--json", action="store_true", help="machine-readable output on stdout")
    p.add_argument("-v", "--verbose", action="store_true",
                   help="also the flash per op and the kernels chosen per layer")


def check_output_dir(out: Path, force: bool) -> None:
    """Refuse to write into a non-empty folder that is not a tinydeploy project."""
    from tinydeploy.errors import TinydeployError

    if out.exists() and not out.is_dir():
        raise TinydeployError(f"{out}: exists and is not a folder")
    if out.is_dir() and any(out.iterdir()) and not (out / "manifest.json").exists() \
            and not force:
        raise TinydeployError(f"{out}: folder exists and was not made by tinydeploy",
                              hint="choose another -o folder, or pass --force to write into it")


def result_json(r: Any) -> dict[str, Any]:
    from tinydeploy.report.figures import memory_figures

    return {
        **memory_figures(flash=r.flash_bytes, flash_available=r.board.flash_bytes,
                         ram=r.ram_bytes, ram_available=r.board.ram_bytes,
                         arena=r.arena_bytes, stack_bound=r.stack_bytes,
                         stack_reserved=r.manifest.get("stack_reserved_bytes")),
        "elf": str(r.elf),
        "hex": str(r.hex) if r.hex else None,
        "bin": str(r.bin) if r.bin else None,
        "project_dir": str(r.project_dir),
        "board": r.board.id,
        "requested_board": r.requested_board.id,
        "app": r.app,
        "stack_bytes": r.stack_bytes,   # = stack_bound_bytes (kept, docs/json.md)
        "stack_margin_bytes": r.manifest.get("stack_reserve", {}).get("margin"),
        "stack_rule": r.manifest.get("stack_reserve", {}).get("rule"),
        "stack_path": list(r.stack.path),
        "sections": r.sections,
        "kernels": [{"op_index": k.op_index, "type": k.type, "symbol": k.symbol,
                     "impl": k.impl, "weights_bytes": k.weights_bytes,
                     "code_bytes": k.code_bytes} for k in r.kernels],
        "selection": r.manifest.get("selection"),
    }


def print_report(r: Any, verbose: bool = False) -> None:
    """The memory table and the built line; with ``verbose``, first the flash per op and
    the kernels chosen per layer (in --json always)."""


    if verbose:
        _print_kernels(r)
    _print_memory(r)


def _print_kernels(r: Any) -> None:
    from rich.table import Table

    from tinydeploy.report.output import stdout

    t = Table(title="flash per op", title_justify="left")
    for col, j in (("#", "right"), ("op", "left"), ("kernel", "left"), ("weights", "right"),
                   ("code", "right")):
        t.add_column(col, justify=j)  # type: ignore[arg-type]
    seen: set[str] = set()
    for k in r.kernels:
        code = "" if k.symbol in seen or not k.code_bytes else f"{k.code_bytes:,}"
        seen.add(k.symbol)
        t.add_row(str(k.op_index), k.type, k.symbol,
                  f"{k.weights_bytes:,}" if k.weights_bytes else "", code)
    stdout.print(t)
    sel = r.manifest.get("selection")
    if sel:
        from tinydeploy.commands.plan import print_selection

        print_selection(sel)


def _print_memory(r: Any) -> None:
    from rich.table import Table

    from tinydeploy.report.output import stdout

    m = Table(title="memory", title_justify="left")
    for col in ("", "used", "available", ""):
        m.add_column(col, justify="right")
    fl, ra = r.board.flash_bytes, r.board.ram_bytes
    m.add_row("flash", f"{r.flash_bytes:,}", f"{fl:,}", f"{100 * r.flash_bytes / fl:.1f} %")
    m.add_row("RAM", f"{r.ram_bytes:,}", f"{ra:,}", f"{100 * r.ram_bytes / ra:.1f} %")
    ram = r.manifest.get("budget", {}).get("measured", {}).get("ram", {})
    m.add_row("  arena", f"{r.arena_bytes:,}", "", "")
    reserved = r.manifest.get("stack_reserved_bytes")
    rule = r.manifest.get("stack_reserve", {})
    m.add_row("  stack", f"{reserved or r.stack_bytes:,}", "",
              f"bound {r.stack_bytes:,} + margin {rule.get('margin', 0):,}"
              if reserved else f"bound {r.stack_bytes:,}")
    if ram:
        m.add_row("  app buffers", f"{ram['buffers']:,}", "", "")
        m.add_row("  other .data/.bss", f"{ram['static']:,}", "", "")
    data_bss = sum(v for k, v in r.sections.items() if k in (".data", ".bss"))
    m.add_row("  .data + .bss", f"{data_bss:,}", "", "arena included")
    stdout.print(m)
    stdout.print(f"[green]built[/] {r.elf}  ({r.board.name}, app {r.app})")


def run(args: argparse.Namespace) -> int:
    from tinydeploy.pipeline import build_app
    from tinydeploy.report.output import emit_json, stderr

    choose_app(args, "validate")
    board, out = resolve_target(args, args.app)
    check_output_dir(out, args.force)
    if not args.json:
        stderr.print(f"building {args.model} for {board.id}"
                     f"{' (emulated)' if args.emulate else ''}, app {args.app} -> {out}")
    # without --emulate the firmware is for the chip, even on a board QEMU also models
    r = build_app(args.model, board, args.app, out, emulate=args.emulate,
                  algorithm=args.algorithm, opt=args.opt, stack_bytes=args.stack,
                  optimize=args.optimize, guards=args.guards,
                  streaming=streaming_wanted(args), stream_axis=args.stream_axis,
                  stream_keep=args.stream_keep, chip=not args.emulate,
                  arena_limit=args.arena_limit, kws=kws_options(args))
    verdict = kws_verdict(args, board, r)
    if args.json:
        emit_json({**result_json(r), "app_reason": args.app_reason,
                   **({"stream": r.manifest["stream"]} if "stream" in r.manifest else {}),
                   **({"realtime": verdict.as_dict()} if verdict is not None else {})})
    else:
        print_report(r, args.verbose)
        if verdict is not None:
            stdout_print(verdict.text())
    return 0


def stdout_print(text: str) -> None:
    from tinydeploy.report.output import stdout

    stdout.print(text)


def kws_verdict(args: argparse.Namespace, board: Any, r: Any) -> Any:
    """The serial kws firmware's real-time verdict, as `plan --app kws` gives it (the
    listening firmware chose its schedule to keep up already)."""
    if args.app != "kws" or "TD_KWS_LISTEN 1" in _kws_config(r):
        return None
    from tinydeploy.kws.realtime import build_verdict

    return build_verdict(args.model, board, getattr(args, "frontend", None),
                         getattr(args, "infer_every", None))


def _kws_config(r: Any) -> str:
    path = r.project_dir / "src" / "generated" / "td_kws_config.h"
    return path.read_text(encoding="utf-8") if path.is_file() else ""
