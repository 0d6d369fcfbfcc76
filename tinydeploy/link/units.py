"""One number, one unit: the device's counts as the host reports them.

The firmware counts SysTick ticks (DWT cycles where the core has them) and says "cycles".
On hardware they are cycles. Under QEMU with ``-icount shift=0`` the virtual clock advances
1 ns per instruction, so SysTick at the board's clock advances clock / 1 GHz ticks per
instruction: there a count means instructions = ticks x 1e9 / clock (docs/emulation.md).
Every command that shows a device's count (run, flash --monitor, monitor, validate, bench,
kws stream) converts it here, on the host, once, as the frames are decoded, so that the same
inference reads the same figure in the same unit everywhere.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from tinydeploy.link.messages import Done, Info, Message, Profile

INSTRUCTIONS = "instructions"
CYCLES = "cycles"


def counts_in_instructions(board: Any) -> bool:
    """True when ``board`` runs under QEMU's instruction counter (its counts are
    instructions)."""
    return bool(getattr(board, "qemu_machine", None)) and board.clock_hz > 0


def host_count(count: float, unit: str, board: Any) -> tuple[float, str]:
    """``count`` ticks in the device's ``unit`` as the host reports them: instructions
    under QEMU, unchanged on hardware (and when already converted)."""
    if unit == CYCLES and counts_in_instructions(board):
        return count * 1e9 / board.clock_hz, INSTRUCTIONS
    return count, unit


def message_converter(board: Any) -> Callable[[Message], Message] | None:
    """A function that rewrites the count-carrying frames (INFO's unit, PROFILE, DONE) of a
    device on ``board`` into the host's unit, or None when nothing needs converting."""
    if not counts_in_instructions(board):
        return None

    def conv(v: int) -> int:
        return round(host_count(v, CYCLES, board)[0])

    def convert(msg: Message) -> Message:
        if isinstance(msg, Done) and msg.unit == CYCLES:
            return dataclasses.replace(msg, min=conv(msg.min), max=conv(msg.max),
                                       total=conv(msg.total), unit=INSTRUCTIONS)
        if isinstance(msg, Profile) and msg.unit == CYCLES:
            return dataclasses.replace(msg, counts=tuple(conv(c) for c in msg.counts),
                                       unit=INSTRUCTIONS)
        if isinstance(msg, Info) and msg.unit == CYCLES:
            return dataclasses.replace(msg, unit=INSTRUCTIONS)
        return msg

    return convert


def milliseconds(count: float, unit: str, board: Any) -> float | None:
    """``count`` (instructions under QEMU, cycles on hardware) as milliseconds at the
    board's clock, taking one instruction per cycle under QEMU; None without a clock."""
    if unit not in (CYCLES, INSTRUCTIONS) or not getattr(board, "clock_hz", 0):
        return None
    return count * 1e3 / board.clock_hz


def converter_for_board_id(board_id: str) -> Callable[[Message], Message] | None:
    """`message_converter` for the board a device names in its INFO frame (``id`` or
    ``real@emulator``); None for an unknown id or a board whose counts need no conversion."""
    from tinydeploy.errors import TinydeployError
    from tinydeploy.flash.runner import board_from_manifest_id

    try:
        return message_converter(board_from_manifest_id(board_id))
    except TinydeployError:
        return None
