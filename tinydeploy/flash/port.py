"""Opening a device's serial port (pyserial), with errors that say what is wrong.

It lives in ``flash`` because a runner's device opens its own port (emulated devices start
paused and resume only once the host listens); the protocol layer (``link``) above reuses it.
"""

from __future__ import annotations

from typing import Any

from tinydeploy.errors import LinkError


def open_port(path: str, baud: int = 115200, timeout: float = 0.05) -> Any:
    """Open a serial port with pyserial; LinkError saying whether it is missing or busy."""
    import serial

    try:
        return serial.Serial(path, baudrate=baud, timeout=timeout, exclusive=True)
    except (serial.SerialException, OSError) as e:
        raise port_error(path, e) from None


def port_error(path: str, err: BaseException) -> LinkError:
    """A LinkError that tells a missing port from a busy or unreadable one."""
    import errno
    import os

    text = str(err)
    code = getattr(err, "errno", None)
    if not os.path.exists(path) or code == errno.ENOENT:
        return LinkError(f"serial port {path} does not exist",
                         hint="check the cable and the port name (ls /dev/tty*)")
    if code == errno.EBUSY or "lock" in text.lower() or "busy" in text.lower():
        return LinkError(f"serial port {path} is busy: {text}",
                         hint="another program (a monitor or IDE) has it open; close it")
    if code == errno.EACCES:
        return LinkError(f"no permission to open serial port {path}",
                         hint="add yourself to the 'dialout' group")
    return LinkError(f"cannot open serial port {path}: {text}")
