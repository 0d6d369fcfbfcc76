"""The linker script of a Cortex-M board, rendered from its memory regions.

The script links code and constants into the board's main flash region and data into its
main RAM region (`Board.region`), with the stack first in RAM (an overflow faults instead of
corrupting data) and the symbols firmware/platform/cortexm/td_cortexm.c expects. The linker
itself checks that stack, .data and .bss fit the RAM region and names the board if not.
"""

from __future__ import annotations

import jinja2

from tinydeploy.boards import Board
from tinydeploy.errors import BoardError
from tinydeploy.resources import templates_dir

TEMPLATES = templates_dir()
STACK_ALIGN = 8


def render_linker_script(board: Board, stack_bytes: int = 4096) -> str:
    """Text of ``linker.ld`` for ``board``; BoardError if the stack cannot fit its RAM.

    Invariants: deterministic (same board and stack give the same text); the stack size is a
    positive multiple of 8 (AAPCS stack alignment).
    """
    if board.is_host:
        raise BoardError(f"board '{board.id}' is the host: it links with the system linker "
                         "and has no linker script")
    if stack_bytes <= 0 or stack_bytes % STACK_ALIGN:
        raise BoardError(f"board '{board.id}': stack of {stack_bytes} bytes must be a positive "
                         f"multiple of {STACK_ALIGN}")
    flash, ram = board.region("flash"), board.region("ram")
    if stack_bytes >= ram.size:
        raise BoardError(f"board '{board.id}': a {stack_bytes}-byte stack does not fit its "
                         f"{ram.size}-byte RAM region '{ram.name}'",
                         hint="use a smaller stack size")
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(TEMPLATES)),
                             undefined=jinja2.StrictUndefined, keep_trailing_newline=True)
    from tinydeploy.codegen.platform import vector_align

    return env.get_template("linker.ld.j2").render(board_id=board.id, flash=flash, ram=ram,
                                                   stack_bytes=stack_bytes,
                                                   vector_align=vector_align(board))
