"""What a real board needs from the host side: which USB serial port carries its link, and
flashing tool names that the tools know (pyOCD's target list, read from pyOCD itself where it
is installed)."""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from pathlib import Path

import pytest

from tinydeploy.boards import RunnerKind, get_board, list_boards
from tinydeploy.errors import LinkError
from tinydeploy.flash import hardware


@dataclass
class FakePort:
    device: str
    vid: int | None


ST_LINK = FakePort("/dev/ttyACM0", 0x0483)
J_LINK = FakePort("/dev/ttyACM1", 0x1366)
FTDI = FakePort("/dev/ttyUSB0", 0x0403)
CP210X = FakePort("/dev/ttyUSB1", 0x10C4)
CH340 = FakePort("/dev/ttyUSB2", 0x1A86)
ARDUINO = FakePort("/dev/ttyACM2", 0x2341)   # the Nano's own USB (Arduino core's CDC)


def ports(monkeypatch: pytest.MonkeyPatch, *found: FakePort) -> None:
    from serial.tools import list_ports

    monkeypatch.setattr(list_ports, "comports", lambda: list(found))


@pytest.mark.parametrize("adapter", [FTDI, CP210X, CH340])
@pytest.mark.parametrize("board_id", ["disco-f407vg", "arduino-nano33ble"])
def test_adapter_boards_pick_the_adapter_not_the_probe(board_id: str, adapter: FakePort,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    ports(monkeypatch, ST_LINK, J_LINK, ARDUINO, adapter)
    assert hardware.find_serial_port(get_board(board_id)) == adapter.device


@pytest.mark.parametrize("board_id", ["disco-f407vg", "arduino-nano33ble"])
def test_adapter_boards_never_take_the_probe_port(board_id: str,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    ports(monkeypatch, ST_LINK, ARDUINO)
    with pytest.raises(LinkError, match="USB-serial adapter") as e:
        hardware.find_serial_port(get_board(board_id))
    assert "FTDI" in (e.value.hint or "")


def test_probe_boards_pick_the_probe(monkeypatch: pytest.MonkeyPatch) -> None:
    ports(monkeypatch, ST_LINK, FTDI)
    assert hardware.find_serial_port(get_board("nucleo-f401re")) == ST_LINK.device
    ports(monkeypatch, J_LINK, FTDI)
    assert hardware.find_serial_port(get_board("nrf52840dk")) == J_LINK.device


def test_two_adapters_are_ambiguous(monkeypatch: pytest.MonkeyPatch) -> None:
    ports(monkeypatch, FTDI, CH340)
    with pytest.raises(LinkError, match="several USB-serial adapter ports"):
        hardware.find_serial_port(get_board("disco-f407vg"))


def pyocd_targets(board_id: str) -> list[str]:
    b = get_board(board_id)
    return [r.args[r.args.index("--target") + 1] for r in b.runners
            if r.name == RunnerKind.PYOCD and "--target" in r.args]


PYOCD_BOARDS = sorted(b.id for b in list_boards() if pyocd_targets(b.id))


def test_stm32_pyocd_targets_follow_the_pack_part_names() -> None:
    """pyOCD knows the STM32F4 parts from ST's CMSIS pack, by part number + package + range
    (STM32F407VGTx -> stm32f407vgtx); the bare part number is no target."""
    stm = [b for b in PYOCD_BOARDS if get_board(b).family == "stm32f4"]
    assert "disco-f407vg" in stm
    for b in stm:
        assert pyocd_targets(b) == [f"{get_board(b).mcu.lower()}tx"], b


@pytest.mark.parametrize("board_id", PYOCD_BOARDS)
def test_pyocd_knows_the_target(board_id: str) -> None:
    try:
        from pyocd.target import TARGET
    except ImportError:
        msg = ("pyOCD is not installed: the board files' pyOCD target names are not checked "
               "against its list (pip install pyocd)")
        warnings.warn(msg, stacklevel=1)
        pytest.skip(msg)
    known = {name.lower() for name in TARGET}
    try:
        from pyocd.target.pack.pack_target import ManagedPacks

        known |= {t.part_number.lower() for t in ManagedPacks.get_installed_targets()}
    except Exception:   # noqa: BLE001 - no pack index (offline): only the built-in list
        pass
    for target in pyocd_targets(board_id):
        if target not in known:
            if get_board(board_id).family == "stm32f4":
                msg = (f"pyOCD's {target} comes from ST's CMSIS pack, not installed here "
                       f"(pyocd pack install {target})")
                warnings.warn(msg, stacklevel=1)
                pytest.skip(msg)
            raise AssertionError(f"{board_id}: pyOCD has no target '{target}'")


def test_unknown_uart_usb_is_a_board_error(tmp_path: Path) -> None:
    from tinydeploy.boards import load_board_file
    from tinydeploy.errors import BoardError

    text = (Path(get_board("disco-f407vg").path or "").read_text(encoding="utf-8")
            .replace('usb = "adapter"', 'usb = "bluetooth"'))
    bad = tmp_path / "disco-f407vg.toml"
    bad.write_text(text, encoding="utf-8")
    with pytest.raises(BoardError, match="unknown uart.usb 'bluetooth'"):
        load_board_file(bad)
