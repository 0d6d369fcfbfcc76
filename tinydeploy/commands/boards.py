"""`tinydeploy boards`: the boards tinydeploy knows (boards/*.toml)."""

from __future__ import annotations

import argparse
from typing import Any

NAME = "boards"
HELP = "list the supported boards with their core, memory and emulation"


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="machine-readable output on stdout")
    p.add_argument("-v", "--verbose", action="store_true",
                   help="also the full name, the aliases and the core's features")


def run(args: argparse.Namespace) -> int:
    from tinydeploy.boards import list_boards
    from tinydeploy.report.output import emit_json, stdout

    boards = list_boards()
    rows: list[dict[str, Any]] = [
        {
            "id": b.id, "name": b.name, "core": b.core, "features": sorted(b.features),
            "clock_hz": b.clock_hz, "ram_bytes": b.ram_bytes, "flash_bytes": b.flash_bytes,
            "emulated": b.emulated, "qemu_machine": b.qemu_machine, "emulate_on": b.emulate,
            "aliases": list(b.aliases), "runners": [r.name for r in b.runners],
        }
        for b in boards
    ]
    if args.json:
        emit_json(rows)
        return 0
    from rich.table import Table

    # the ids are what the user types: never cut, whatever the width (80 columns when piped);
    # the long names and the features are behind --verbose
    t = Table(box=None, pad_edge=False)
    t.add_column("id", no_wrap=True)
    if args.verbose:
        t.add_column("name")
    for col in ("core", "RAM", "flash", "runs here"):
        t.add_column(col, no_wrap=True, justify="right" if col in ("RAM", "flash") else "left")
    for r in rows:
        here = "QEMU" if r["qemu_machine"] else (
            "native" if r["id"] == "host" else
            (f"--emulate ({r['emulate_on']})" if r["emulate_on"] and args.verbose
             else "--emulate" if r["emulate_on"] else "no"))
        core = r["core"] + (" +" + "+".join(r["features"]) if args.verbose and r["features"]
                            else "")
        name = [r["name"] + (f"; alias {', '.join(r['aliases'])}" if r["aliases"] else "")]
        t.add_row(r["id"], *(name if args.verbose else []), core,
                  f"{r['ram_bytes'] // 1024} KB", f"{r['flash_bytes'] // 1024} KB", here)
    stdout.print(t)
    return 0
