"""Runners for real boards: pyOCD, nrfjprog (J-Link) and PlatformIO.

Each checks for its tool first (ToolchainError saying what to install), flashes, and returns a
`SerialDevice` on the board's USB serial port: ``--port`` when given, else the one port whose
USB vendor is the board's debug probe (or, for a board whose UART goes through an external
USB-serial adapter, ``uart.usb = "adapter"``, the one adapter's). Flashing is bounded by a
timeout.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path
from typing import Any

from tinydeploy.boards import Board, RunnerKind
from tinydeploy.errors import LinkError, ToolchainError
from tinydeploy.flash.runner import Device, Firmware, Runner
from tinydeploy.procs import run_tool

# USB vendor ids of the on-board debug probes' virtual COM ports
PROBE_VENDORS = {0x0483: "ST-LINK", 0x1366: "SEGGER J-Link", 0x0D28: "Arm DAPLink",
                 0x1915: "Nordic"}


# USB vendor ids of USB-serial adapters (a board whose UART has no probe port behind it)
ADAPTER_VENDORS = {0x0403: "FTDI", 0x10C4: "Silicon Labs CP210x", 0x1A86: "WCH CH340"}


def serial_vendors(board: Board) -> dict[int, str]:
    """The USB vendors whose serial port may carry ``board``'s link: its debug probe's, or a
    USB-serial adapter's when the board file says so (``uart.usb = "adapter"``: the probe's
    own port, e.g. an ST-LINK/V2 without a virtual COM port, is then never picked)."""
    return ADAPTER_VENDORS if board.uart.usb == "adapter" else PROBE_VENDORS


def find_serial_port(board: Board) -> str:
    """The single USB serial port of the board's kind of device (`serial_vendors`); LinkError
    if none or several."""
    from serial.tools import list_ports

    vendors = serial_vendors(board)
    what = "USB-serial adapter" if board.uart.usb == "adapter" else "debug probe"
    found = [p for p in list_ports.comports() if p.vid in vendors]
    if len(found) == 1:
        return str(found[0].device)
    if not found:
        hint = ("connect a 3.3 V USB-serial adapter (FTDI, CP210x, CH340) to the board's "
                "UART pins (docs/boards.md), or pass --port /dev/ttyUSB0"
                if board.uart.usb == "adapter"
                else "connect the board, or pass --port /dev/ttyACM0")
        raise LinkError(f"no serial port of a {what} found for board '{board.id}'", hint=hint)
    names = ", ".join(f"{p.device} ({vendors[p.vid]})" for p in found)
    raise LinkError(f"several {what} ports found for board '{board.id}': {names}",
                    hint="choose one with --port")


class SerialDevice(Device):
    """A real board that runs on its own; only its serial port is ours."""

    def __init__(self, board: Board, port: str | None, baud: int | None = None) -> None:
        self.board = board
        self.baud = baud or board.uart.baud
        self.port = port or find_serial_port(board)

    def resume(self) -> None:
        return None

    def poll(self) -> int | None:
        return None

    def stop(self) -> int | None:
        return None


def _require(tool: str, install: str) -> str:
    path = shutil.which(tool)
    if path is None:
        raise ToolchainError(f"'{tool}' was not found on PATH", hint=f"install it: {install}")
    return path


def _flash(cmd: list[str], what: str, timeout: float, cwd: Path | None = None) -> None:
    t0 = time.monotonic()
    try:
        r = run_tool(cmd, what, timeout=timeout, cwd=cwd)
    except ToolchainError as e:
        raise ToolchainError(e.message, hint="is the board connected and powered?") from None
    if r.returncode != 0:
        tail = "\n".join((r.stdout + r.stderr).strip().splitlines()[-15:])
        raise ToolchainError(f"{what} failed (exit {r.returncode}) after "
                             f"{time.monotonic() - t0:.1f} s:\n{tail}")


class _HardwareRunner(Runner):
    tool = ""
    install = ""

    def __init__(self, args: tuple[str, ...] = (), port: str | None = None,
                 flash_timeout: float = 180.0, **_: Any) -> None:
        self.args = tuple(args)
        self.port = port
        self.flash_timeout = flash_timeout

    def command(self, firmware: Firmware, exe: str) -> list[str]:
        raise NotImplementedError

    def start(self, firmware: Firmware, *, timeout: float = 120.0) -> SerialDevice:
        exe = _require(self.tool, self.install)
        _flash(self.command(firmware, exe), f"{self.name} flashing {firmware.board.id}",
               self.flash_timeout, cwd=firmware.project_dir)
        return SerialDevice(firmware.board, self.port, firmware.baud)


def _image(firmware: Firmware) -> Path:
    if firmware.hex is None:
        raise ToolchainError(f"no firmware.hex next to {firmware.elf}",
                             hint="build for a real board (not host) to get a .hex")
    return firmware.hex


class PyocdRunner(_HardwareRunner):
    name = "pyocd"
    tool = "pyocd"
    install = "pip install pyocd (and the board's CMSIS pack: pyocd pack install <target>)"

    def command(self, firmware: Firmware, exe: str) -> list[str]:
        return [exe, "flash", *self.args, str(_image(firmware))]


class NrfjprogRunner(_HardwareRunner):
    name = "nrfjprog"
    tool = "nrfjprog"
    install = "Nordic's nRF Command Line Tools and the SEGGER J-Link software"

    def command(self, firmware: Firmware, exe: str) -> list[str]:
        return [exe, *self.args, "--program", str(_image(firmware)), "--sectorerase",
                "--verify", "--reset"]


class PlatformioRunner(_HardwareRunner):
    name = "platformio"
    tool = "pio"
    install = "pip install platformio"

    def command(self, firmware: Firmware, exe: str) -> list[str]:
        project = firmware.project_dir
        if project is None or not (project / "platformio.ini").is_file():
            raise ToolchainError(f"no platformio.ini in {project}",
                                 hint="build for a real board: tinydeploy build writes one")
        return [exe, "run", "-t", "upload", "-d", str(project), *self.args]


HARDWARE_RUNNERS: dict[RunnerKind, type[_HardwareRunner]] = {
    RunnerKind.PYOCD: PyocdRunner, RunnerKind.NRFJPROG: NrfjprogRunner,
    RunnerKind.PLATFORMIO: PlatformioRunner,
}
