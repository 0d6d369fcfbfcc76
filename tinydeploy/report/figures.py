"""The memory figures every command reports, under one key each (docs/json.md).

`plan` (estimated before the build), `build` (measured from the ELF), `bench` and `validate`
(measured, then run) all put these keys at the top level of their ``--json`` object, with the
same meaning everywhere:

- ``flash_bytes`` / ``flash_available_bytes``: the image's flash and the board's;
- ``ram_bytes`` / ``ram_available_bytes``: all RAM the firmware takes (arena, stack
  reservation, application buffers, other .data/.bss) and the board's;
- ``arena_bytes``: the planned tensor arena;
- ``stack_bound_bytes``: the call-graph bound of the stack (the most it can use);
- ``stack_reserved_bytes``: the stack the firmware reserves (bound + margin), or None where
  the platform owns the stack (host).
"""

from __future__ import annotations

from typing import Any

MEMORY_KEYS = ("flash_bytes", "flash_available_bytes", "ram_bytes", "ram_available_bytes",
               "arena_bytes", "stack_bound_bytes", "stack_reserved_bytes")


def memory_figures(*, flash: int, flash_available: int, ram: int, ram_available: int,
                   arena: int, stack_bound: int | None, stack_reserved: int | None
                   ) -> dict[str, Any]:
    """The shared memory keys, in `MEMORY_KEYS` order."""
    return dict(zip(MEMORY_KEYS, (flash, flash_available, ram, ram_available, arena,
                                  stack_bound, stack_reserved), strict=True))
