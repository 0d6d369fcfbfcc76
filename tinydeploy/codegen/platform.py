"""The board facts the platform layer is compiled with, as preprocessor defines.

One place maps a `Board` to the `-D` flags that `firmware/platform/<family>/` reads, so the C
never hard-codes a board; docs/interfaces.md lists them.
"""

from __future__ import annotations

from tinydeploy.boards import Board
from tinydeploy.codegen.cnames import c_identifier, c_string


def _pin(value: int | str | None) -> str | None:
    """nRF pins are numbers (P0.06 -> 6, P1.03 -> 35); STM32 pins are names ("PA2")."""
    if value is None:
        return None
    if isinstance(value, int):
        return str(value)
    v = value.upper()
    if len(v) >= 3 and v[0] == "P" and v[1].isalpha() and v[2:].isdigit():
        return f"{(ord(v[1]) - ord('A')) * 16 + int(v[2:])}"  # port * 16 + pin
    raise ValueError(f"cannot encode pin '{value}'")


def board_defines(board: Board, app: str | None = None) -> list[str]:
    """`NAME=value` strings, sorted, for the Makefile's CFLAGS (``app`` picks the link's
    rate: the kws app may run faster than the others, boards' ``uart.kws_baud``)."""
    ram = board.region("ram")
    flash = board.region("flash")
    d = {
        "TD_BOARD_ID": f'"{c_string(board.id)}"',
        f"TD_FAMILY_{c_identifier(board.family).upper()}": "1",
        "TD_CLOCK_HZ": f"{board.clock_hz}u",
        f"TD_CYCLE_COUNTER_{board.cycle_counter.upper()}": "1",
        "TD_UART_BAUD": f"{board.uart.baud_for(app)}u",
        "TD_RAM_ORIGIN": f"{ram.origin:#x}u",
        "TD_RAM_SIZE": f"{ram.size}u",
        "TD_FLASH_ORIGIN": f"{flash.origin:#x}u",
        "TD_FLASH_SIZE": f"{flash.size}u",
    }
    if not board.is_host:
        d["TD_UART_BASE"] = f"{board.uart.base:#x}u"
    tx, rx = _pin(board.uart.tx_pin), _pin(board.uart.rx_pin)
    if tx is not None:
        d["TD_UART_TX_PIN"] = tx
    if rx is not None:
        d["TD_UART_RX_PIN"] = rx
    if board.qemu_machine:
        d["TD_QEMU"] = "1"
    if board.audio is not None and app == "kws":
        a = board.audio
        d["TD_AUDIO_CLK_PIN"] = f"{a.clk_pin}u"
        d["TD_AUDIO_DIN_PIN"] = f"{a.din_pin}u"
        d["TD_AUDIO_GAIN"] = f"{a.gain_register:#x}u"
        d["TD_AUDIO_POWER_ON_MS"] = f"{a.power_on_ms}u"
        if a.power_pin is not None:
            d["TD_AUDIO_POWER_PIN"] = f"{a.power_pin}u"
    for f in sorted(board.features):
        d[f"TD_HAS_{f.upper()}"] = "1"
    return [f"{k}={v}" for k, v in sorted(d.items())]
