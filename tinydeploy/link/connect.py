"""One way to get a `Session` with a firmware: start it (QEMU, host) or open a real board's port.

Emulated and host devices are started by their runner and stopped when the block ends; a
real board is assumed flashed already (``tinydeploy flash``) and is reached on ``port``.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from tinydeploy.boards import Board
from tinydeploy.errors import LinkError, TinydeployError
from tinydeploy.flash import Device, Firmware, runner_for
from tinydeploy.link.session import DeviceInfo, Session, open_port
from tinydeploy.link.units import message_converter


@dataclass
class Connection:
    session: Session
    info: DeviceInfo
    device: Device | None      # None for a real board reached on a port

    @property
    def log(self) -> str:
        return self.device.log if self.device is not None else ""


def require_reachable(board: Board, port: str | None, emulate: bool) -> None:
    """Fail before building when the device could not be reached afterwards."""
    if port is None and not emulate and not board.emulated:
        raise TinydeployError(
            f"board '{board.id}' is real hardware: flash it, then pass --port",
            hint="tinydeploy flash BUILD_DIR; or add --emulate to run it here on "
                 f"{board.emulate or 'an emulated board'}")


@contextmanager
def connect(firmware: Firmware, *, port: str | None = None, runner: str | None = None,
            baud: int | None = None, timeout: float = 300.0, reply_timeout: float = 30.0,
            on_message: Any = None,
            runner_options: dict[str, Any] | None = None) -> Iterator[Connection]:
    """Start (or reach) the device, say HELLO, check it runs this firmware's model.
    ``runner_options`` go to the runner (e.g. QEMU's icount shift)."""
    device: Device | None = None
    if port is not None:
        ser = open_port(port, baud or firmware.baud)
    else:
        if not firmware.board.emulated:
            raise TinydeployError(
                f"board '{firmware.board.id}' is real hardware: flash it, then pass --port",
                hint="tinydeploy flash BUILD_DIR; or build with --emulate to run it here")
        device = runner_for(firmware.board, runner, **(runner_options or {})).start(
            firmware, timeout=timeout)
        try:
            ser = device.open(baud=baud)
        except BaseException:
            device.stop()
            raise
    session = Session(ser, timeout=reply_timeout, on_message=on_message,
                      convert=message_converter(firmware.board))
    try:
        try:
            info = session.hello()
        except LinkError as e:
            log = device.log.strip() if device is not None else ""
            raise LinkError(f"no answer to HELLO from {firmware.board.id}: {e.message}"
                            + (f"\n{log[-2000:]}" if log else ""),
                            hint="is the firmware running and the port right?") from None
        if device is not None:
            device.kick()
        yield Connection(session, info, device)
        try:
            session.stop()
        except LinkError:
            pass
    finally:
        try:
            ser.close()
        finally:
            if device is not None:
                device.stop()
