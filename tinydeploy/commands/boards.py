"""`tinydeploy boards`: the boards tinydeploy knows (boards/*.toml)."""

from __future__ import annotations

import argparse
from typing import Any

NAME = "boards"
HELP = "list the supported boards with their core, memory and emulation"


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="machine-readable output on stdout")


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

    t = Table()
    for col in ("id", "name", "core", "RAM", "flash", "runs here"):
        t.add_column(col)
    for r in rows:
        here = ("QEMU " + r["qemu_machine"]) if r["qemu_machine"] else (
            "native" if r["id"] == "host" else
            (f"--emulate on {r['emulate_on']}" if r["emulate_on"] else "no"))
        t.add_row(r["id"] + (f" ({', '.join(r['aliases'])})" if r["aliases"] else ""),
                  r["name"], r["core"] + (" +" + "+".join(r["features"]) if r["features"] else ""),
                  f"{r['ram_bytes'] // 1024} KB", f"{r['flash_bytes'] // 1024} KB", here)
    stdout.print(t)
    return 0
