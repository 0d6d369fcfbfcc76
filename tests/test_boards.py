"""Boards are data: every shipped board validates, and each kind of invalid file is refused
with a message naming the file and the field."""

from __future__ import annotations

from pathlib import Path

import pytest

from tinydeploy.boards import emulation_target, get_board, list_boards, load_board_file
from tinydeploy.errors import BoardError

INVALID = Path(__file__).parent / "fixtures" / "boards_invalid"

EXPECTED = {
    "nrf52840dk": ("cortex-m4f", 256 * 1024, 1024 * 1024),
    "nucleo-f401re": ("cortex-m4f", 96 * 1024, 512 * 1024),
    "microbit-v1": ("cortex-m0", 16 * 1024, 256 * 1024),
    "netduinoplus2": ("cortex-m4f", 128 * 1024, 1024 * 1024),
    "mps2-an386": ("cortex-m4f", 4 << 20, 4 << 20),
    "mps2-an500": ("cortex-m7", 4 << 20, 4 << 20),
    "mps3-an547": ("cortex-m55", 512 * 1024, 512 * 1024),
    "arduino-nano33ble": ("cortex-m4f", 256 * 1024, 960 * 1024),
    "disco-f407vg": ("cortex-m4f", 128 * 1024, 1024 * 1024),
}


def test_shipped_boards() -> None:
    boards = {b.id: b for b in list_boards()}
    assert set(EXPECTED) | {"host"} <= set(boards)
    for bid, (core, ram, flash) in EXPECTED.items():
        b = boards[bid]
        assert (b.core, b.ram_bytes, b.flash_bytes) == (core, ram, flash), bid
    assert "mve" in boards["mps3-an547"].features
    assert boards["microbit-v1"].qemu_machine == "microbit"
    assert not boards["nrf52840dk"].emulated
    # behind the Arduino bootloader: the application starts at 64 KB
    assert boards["arduino-nano33ble"].region("flash").origin == 0x10000


def test_alias_and_unknown() -> None:
    assert get_board("nrf52840").id == "nrf52840dk"
    assert get_board("NRF52840").id == "nrf52840dk"
    with pytest.raises(BoardError) as e:
        get_board("esp32")
    assert "esp32" in e.value.message and "nrf52840dk" in (e.value.hint or "")


def test_emulation_target_keeps_real_limits() -> None:
    real = get_board("nrf52840")
    emu = emulation_target(real)
    assert emu.qemu_machine == "mps2-an386"
    assert emu.core == real.core
    assert (emu.ram_bytes, emu.flash_bytes) == (real.ram_bytes, real.flash_bytes)


def test_valid_fixture_loads() -> None:
    assert load_board_file(INVALID / "valid.toml").id == "valid"


@pytest.mark.parametrize("name,needle", [
    ("bad-schema", "schema 7"),
    ("missing-core", "'core'"),
    ("unknown-core", "cortex-z9"),
    ("unknown-family", "avr"),
    ("bad-feature", "neon"),
    ("wrong-type", "clock_hz"),
    ("bad-clock", "clock_hz"),
    ("unknown-counter", "sundial"),
    ("no-ram", "no ram"),
    ("bad-memory-kind", "eeprom"),
    ("zero-size", "size"),
    ("overlap", "overlap"),
    ("unknown-uart", "usb"),
    ("unknown-runner", "openocd"),
    ("unknown-field", "colour"),
    ("not-toml", "TOML"),
    ("id-mismatch", "file name"),
])
def test_invalid_board(name: str, needle: str) -> None:
    with pytest.raises(BoardError) as e:
        load_board_file(INVALID / f"{name}.toml")
    assert f"{name}.toml" in e.value.message
    assert needle in e.value.message
