"""The board facts the platform layer is compiled with, as preprocessor defines.

One place maps a `Board` to the `-D` flags that `firmware/platform/<family>/` reads, so the C
never hard-codes a board; docs/interfaces.md lists them.
"""

from __future__ import annotations

from tinydeploy.boards import Board, Family
from tinydeploy.codegen.cnames import c_identifier, c_string

# External interrupts of each chip's vector table (the last IRQn + 1 of the vendor's device
# header: nrfx mdk nrf51.h / nrf52840.h, STM32CubeF4 stm32f401xe.h / stm32f405xx.h /
# stm32f407xx.h); a chip not listed gets 32.
CHIP_IRQS: dict[str, int] = {
    "nRF51822": 32,      # 26 used (SWI5_IRQn = 25); Nordic's start-up reserves 32
    "nRF52840": 48,      # SPIM3_IRQn = 47
    "STM32F401RE": 85,   # SPI4_IRQn = 84
    "STM32F405RG": 82,   # FPU_IRQn = 81
    "STM32F407VG": 82,   # FPU_IRQn = 81
}
DEFAULT_IRQS = 32
# Families whose boards are real chips with a build of their own: everything QEMU-only
# (semihosting, skipped crystal and pin set-up) is left out of it. The CMSDK boards (MPS2/MPS3
# FPGA images) are only run on QEMU here, so their one build is the emulator's.
CHIP_FAMILIES = frozenset({Family.NRF5, Family.STM32F4})


def vector_irqs(board: Board) -> int:
    """The number of external interrupt entries in ``board``'s vector table."""
    return CHIP_IRQS.get(board.mcu, DEFAULT_IRQS)


def vector_align(board: Board) -> int:
    """The vector table's alignment: its size rounded up to a power of two, at least 128 B
    (VTOR ignores the address bits below it; ARMv7-M ARM B3.2.5)."""
    size = 4 * (16 + vector_irqs(board))
    align = 128
    while align < size:
        align *= 2
    return align


def has_chip_build(board: Board) -> bool:
    """True when ``board`` is a real chip whose build differs from the emulator's."""
    return board.family in CHIP_FAMILIES


def qemu_variant(board: Board, chip: bool) -> bool:
    """True when the build for ``board`` is the emulator's (TD_QEMU): a board with a QEMU
    machine, unless the build is meant for the chip (``chip``) and the board has one."""
    if board.qemu_machine is None:
        return False
    return not (chip and has_chip_build(board))


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


def board_defines(board: Board, app: str | None = None, *, chip: bool = False) -> list[str]:
    """`NAME=value` strings, sorted, for the Makefile's CFLAGS (``app`` picks the link's
    rate: the kws app may run faster than the others, boards' ``uart.kws_baud``).

    ``chip``: the build is for the real chip (`qemu_variant`): no TD_QEMU, and the chip's own
    cycle counter (the nRF51's TIMER0; the emulator's build counts with SysTick, which QEMU
    models on every Cortex-M)."""
    qemu = qemu_variant(board, chip)
    counter = board.cycle_counter
    if qemu and counter == "timer0":
        counter = "systick"
    ram = board.region("ram")
    flash = board.region("flash")
    d = {
        "TD_BOARD_ID": f'"{c_string(board.id)}"',
        f"TD_FAMILY_{c_identifier(board.family).upper()}": "1",
        "TD_CLOCK_HZ": f"{board.clock_hz}u",
        f"TD_CYCLE_COUNTER_{counter.upper()}": "1",
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
    if not board.is_host:
        d[f"TD_MCU_{c_identifier(board.mcu).upper()}"] = "1"
        d["TD_NUM_IRQS"] = str(vector_irqs(board))
    if qemu:
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
