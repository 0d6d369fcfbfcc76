"""Host runner: the firmware built for the ``host`` board as a Linux process on a pty.

The runner opens a pseudo-terminal pair, puts it in raw mode, and gives the *master* side to
the process as its stdin and stdout; ``device.port`` is the slave's path, which pyserial opens
like any serial port. The process starts only in ``resume`` (after the port is open), so its
first bytes are not flushed away by the open, as with a paused QEMU. A watchdog kills it
after the timeout; its stderr (sanitizer reports) is kept in ``device.log``.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
import threading
import time
import tty

from tinydeploy.boards import Board
from tinydeploy.errors import ToolchainError
from tinydeploy.flash.runner import Device, Firmware, Runner
from tinydeploy.procs import die_with_parent


class HostDevice(Device):
    def __init__(self, exe: str, board: Board, timeout: float) -> None:
        self.exe = exe
        self.board = board
        self.baud = board.uart.baud
        self.timeout = timeout
        self.master, self.slave = os.openpty()
        tty.setraw(self.slave)
        self.port = os.ttyname(self.slave)
        self.proc: subprocess.Popen[bytes] | None = None
        self._stderr = tempfile.TemporaryFile()
        self._timed_out = False

    def resume(self) -> None:
        if self.proc is not None:
            return
        try:
            # die_with_parent: a SIGKILLed tinydeploy takes the host firmware with it
            self.proc = subprocess.Popen([self.exe], stdin=self.master, stdout=self.master,
                                         stderr=self._stderr, close_fds=True,
                                         preexec_fn=die_with_parent())
        except OSError as e:
            raise ToolchainError(f"cannot run host firmware {self.exe}: {e}") from None
        threading.Thread(target=self._watch, daemon=True).start()

    def _watch(self) -> None:
        deadline = time.monotonic() + self.timeout
        proc = self.proc
        assert proc is not None
        while proc.poll() is None:
            if time.monotonic() > deadline:
                self._timed_out = True
                proc.kill()
                return
            time.sleep(0.05)

    @property
    def timed_out(self) -> bool:
        return self._timed_out

    def poll(self) -> int | None:
        return None if self.proc is None else self.proc.poll()

    def stop(self) -> int | None:
        rc = None
        if self.proc is not None:
            rc = self.proc.poll()
            if rc is None:
                self.proc.terminate()
                try:
                    rc = self.proc.wait(timeout=2)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    rc = self.proc.wait()
        for fd in (self.master, self.slave):
            try:
                os.close(fd)
            except OSError:
                pass
        self.master = self.slave = -1
        return rc

    @property
    def log(self) -> str:
        try:
            self._stderr.seek(0)
            return self._stderr.read().decode("utf-8", errors="replace")
        except (OSError, ValueError):
            return ""


class HostRunner(Runner):
    name = "host"

    def start(self, firmware: Firmware, *, timeout: float = 120.0) -> HostDevice:
        if not os.access(firmware.elf, os.X_OK):
            raise ToolchainError(f"{firmware.elf} is not an executable host build")
        return HostDevice(str(firmware.elf), firmware.board, timeout)
