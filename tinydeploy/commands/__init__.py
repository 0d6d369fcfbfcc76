"""The command registry: one module per command, listed here in the order `--help` shows.

A command module defines ``NAME`` (the sub-command), ``HELP`` (one line for the list),
``configure(parser)`` (its arguments) and ``run(args) -> int`` (exit status). Modules must be
cheap to import: heavy dependencies (TensorFlow, matplotlib, the oracle) are imported inside
``run``.
"""

from __future__ import annotations

import importlib
from types import ModuleType

COMMAND_MODULES: tuple[str, ...] = (
    "inspect",
    "plan",
    "quantize",
    "build",
    "validate",
    "bench",
    "run",
    "boards",
    "flash",
    "monitor",
    "kws",
)


def load_commands() -> list[ModuleType]:
    return [importlib.import_module(f"tinydeploy.commands.{m}") for m in COMMAND_MODULES]
