"""Runners: one interface from a firmware image to a running device with a serial port.

This module is the interface only; the concrete runners (``qemu``, ``host``, ``hardware``)
implement it and ``registry`` maps each `RunnerKind` to one of them, so nothing here imports
a concrete runner.

``runner.start(firmware)`` returns a `Device`: ``device.port`` is the serial port path,
``device.open()`` opens it with pyserial *and then* lets the firmware run (emulated devices
start paused, because bytes written before anyone opens a pseudo-terminal are lost), and
``device.stop()`` ends it. Every emulated device runs under a timeout and its output is always
drained, so a stuck firmware can never hang a test or a command.
"""

from __future__ import annotations

import json
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tinydeploy.boards import Board, get_board
from tinydeploy.errors import LinkError, TinydeployError


@dataclass(frozen=True)
class Firmware:
    """What a runner needs: the images and the board they were built for."""

    elf: Path
    board: Board
    hex: Path | None = None
    bin: Path | None = None
    project_dir: Path | None = None
    app: str | None = None          # the application built in (decides the link's rate)

    @property
    def baud(self) -> int:
        return self.board.uart.baud_for(self.app)

    @classmethod
    def from_elf(cls, elf: Path, board: Board) -> Firmware:
        elf = Path(elf)
        hx, bn = elf.with_suffix(".hex"), elf.with_suffix(".bin")
        return cls(elf, board, hx if hx.exists() else None, bn if bn.exists() else None,
                   elf.parent)

    @classmethod
    def from_build_dir(cls, build_dir: Path) -> Firmware:
        """A folder written by ``tinydeploy build``: firmware.* plus manifest.json."""
        build_dir = Path(build_dir)
        manifest_path = build_dir / "manifest.json"
        if not build_dir.is_dir():
            raise TinydeployError(f"build folder {build_dir} does not exist",
                                  hint="run tinydeploy build first")
        try:
            manifest: dict[str, Any] = json.loads(manifest_path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise TinydeployError(f"{manifest_path} is missing: {build_dir} is not a "
                                  "tinydeploy build folder",
                                  hint="run tinydeploy build -o <folder> first") from None
        except (OSError, ValueError) as e:
            raise TinydeployError(f"{manifest_path}: cannot read it: {e}") from None
        board_id = manifest.get("board")
        if not isinstance(board_id, str):
            raise TinydeployError(f"{manifest_path} has no \"board\" entry")
        board = board_from_manifest_id(board_id)
        elf = build_dir / "firmware.elf"
        if not elf.is_file():
            raise TinydeployError(f"{elf} is missing", hint="run make in the build folder")
        app = manifest.get("app")
        return cls(elf, board, _opt(build_dir / "firmware.hex"),
                   _opt(build_dir / "firmware.bin"), build_dir,
                   app if isinstance(app, str) else None)


def _opt(p: Path) -> Path | None:
    return p if p.exists() else None


def board_from_manifest_id(board_id: str) -> Board:
    """``"nrf52840dk@mps2-an386"`` (a real board emulated on a QEMU machine) or a plain id."""
    if "@" in board_id:
        real, emu = board_id.split("@", 1)
        return get_board(emu).limited_to(get_board(real))
    return get_board(board_id)


class Device(ABC):
    """A running (or paused) device reachable over ``port``."""

    port: str
    board: Board
    baud: int

    @abstractmethod
    def resume(self) -> None:
        """Let a paused device run (no-op for devices that already run)."""

    def open(self, timeout: float = 0.05, baud: int | None = None) -> Any:
        """Open the serial port (pyserial), then resume the device; returns the Serial."""
        from tinydeploy.flash.port import open_port

        ser = open_port(self.port, baud or self.baud, timeout)
        try:
            self.resume()
        except BaseException:
            ser.close()
            raise
        return ser

    def kick(self) -> None:
        """Emulator-specific nudge after the first exchange (docs/emulation.md, start sequence)."""
        return None  # noqa: B027 - optional hook, a no-op for most devices

    @abstractmethod
    def poll(self) -> int | None:
        """Exit status if the device has stopped, else None."""

    @abstractmethod
    def stop(self) -> int | None:
        """Stop the device; returns its exit status when it had one."""

    def wait(self, timeout: float) -> int | None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            rc = self.poll()
            if rc is not None:
                return rc
            time.sleep(0.02)
        return None

    @property
    def log(self) -> str:
        """Diagnostics of the runner (emulator messages, sanitizer reports)."""
        return ""

    def __enter__(self) -> Device:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


class Runner(ABC):
    name: str

    @abstractmethod
    def start(self, firmware: Firmware, *, timeout: float = 120.0) -> Device:
        """Load ``firmware`` and return its device, paused where the method allows it.
        ``timeout`` bounds the device's life (emulated devices are killed after it)."""


__all__ = ["Device", "Firmware", "LinkError", "Runner", "board_from_manifest_id"]
