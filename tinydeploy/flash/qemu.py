"""QEMU runner for emulated boards (docs/emulation.md has the QEMU facts, docs/protocol.md).

QEMU starts paused (``-S``) with the board's UART on a pseudo-terminal and QMP on stdio: a
reader thread drains QEMU's stdout (the ``char device redirected to /dev/pts/N`` line, then
QMP replies and events) so QEMU never blocks on it. The host opens the pty, then ``resume``
sends ``cont``: nothing the firmware writes is lost. ``-icount shift=0`` makes SysTick counts
a deterministic function of the instructions executed. A watchdog kills QEMU after the
timeout whatever happens. Known cost: QEMU 7.2 only starts reading host-to-guest bytes from
the pty when its 1 s pty reconnect timer fires, so the first request of a session can wait up
to ~1 s (``kick``, a harmless QMP command, did not shorten it in our measurements).
"""

from __future__ import annotations

import json
import math
import queue
import re
import shutil
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

from tinydeploy.boards import Board
from tinydeploy.errors import ToolchainError
from tinydeploy.flash.runner import Device, Firmware, Runner
from tinydeploy.procs import die_with_parent

PTY_LINE = re.compile(r"char device redirected to (\S+) \(label uart0\)")
QEMU = "qemu-system-arm"


def refuse_chip_build(firmware: Firmware) -> None:
    """A build for the chip (manifest ``variant`` "chip") waits for a crystal QEMU does not
    model and cannot end the emulator: refuse it with what to do instead."""
    import json

    manifest = (firmware.project_dir / "manifest.json") if firmware.project_dir else None
    if manifest is None or not manifest.is_file():
        return
    try:
        variant = json.loads(manifest.read_text(encoding="utf-8")).get("variant")
    except (OSError, ValueError):
        return
    if variant == "chip":
        raise ToolchainError(
            f"{firmware.project_dir} was built for the {firmware.board.id} chip, not for QEMU",
            hint="build it with --emulate to run it here (validate, bench and run without "
                 "--port do so), or flash it with the board's runner")


def icount_shift_for(clock_hz: int) -> int:
    """The ``-icount shift=N`` whose emulated instruction rate (2^-N G instructions per emulated
    second) is nearest a core clock of ``clock_hz`` at one instruction per cycle: 4 (62.5 M/s)
    for the nRF52840's 64 MHz."""
    if clock_hz <= 0:
        raise ToolchainError(f"a clock of {clock_hz} Hz cannot pace the emulator")
    best = min(range(0, 11), key=lambda n: abs(math.log2(1e9 / 2 ** n / clock_hz)))
    return best


def qemu_command(board: Board, elf: Path, icount: bool = True, *, shift: int = 0,
                 semihosting_args: tuple[str, ...] = ()) -> list[str]:
    """The QEMU command line for ``board`` (paused, UART on a pty, QMP on stdio).

    ``shift``: one instruction advances emulated time by 2^shift ns (0: SysTick counts are
    instructions; N > 0 paces the core at a board's clock, with ``sleep=off`` so that WFI
    skips to the next interrupt at once). ``semihosting_args``: the command line the firmware
    reads with SYS_GET_CMDLINE (the virtual microphone's file)."""
    exe = shutil.which(QEMU)
    if exe is None:
        raise ToolchainError(f"'{QEMU}' was not found on PATH",
                             hint="install it: sudo apt-get install --no-install-recommends "
                                  "qemu-system-arm")
    if not board.qemu_machine:
        raise ToolchainError(f"board '{board.id}' has no QEMU machine")
    semi = "enable=on,target=native"
    for a in semihosting_args:
        semi += ",arg=" + a.replace(",", ",,")     # QEMU's option syntax doubles commas
    cmd = [exe, "-M", board.qemu_machine, "-display", "none", "-monitor", "none",
           "-chardev", "pty,id=uart0", "-serial", "chardev:uart0",
           "-semihosting-config", semi, "-S", "-qmp", "stdio"]
    if icount:
        cmd += ["-icount", f"shift={shift},sleep=off" if shift else "shift=0"]
    return cmd + ["-kernel", str(elf)]


class QemuDevice(Device):
    def __init__(self, proc: subprocess.Popen[bytes], board: Board, timeout: float,
                 start_timeout: float = 10.0) -> None:
        self.proc = proc
        self.board = board
        self.baud = board.uart.baud
        self._lines: list[str] = []
        self._replies: queue.Queue[dict[str, Any]] = queue.Queue()
        self._pty: queue.Queue[str] = queue.Queue()
        self._lock = threading.Lock()
        self._qmp_lock = threading.Lock()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self._deadline = time.monotonic() + timeout
        self._timed_out = False
        self._watchdog = threading.Thread(target=self._watch, daemon=True)
        self._watchdog.start()
        try:
            self.port = self._pty.get(timeout=start_timeout)
        except queue.Empty:
            self.stop()
            raise ToolchainError(f"QEMU ({board.qemu_machine}) did not report its serial "
                                 f"pty within {start_timeout:g} s:\n{self.log}") from None
        self._qmp({"execute": "qmp_capabilities"})

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for raw in self.proc.stdout:
            line = raw.decode("utf-8", errors="replace").rstrip()
            with self._lock:
                self._lines.append(line)
                del self._lines[:-200]
            m = PTY_LINE.search(line)
            if m:
                self._pty.put(m.group(1))
                continue
            if line.startswith("{"):
                try:
                    msg = json.loads(line)
                except ValueError:
                    continue
                if "return" in msg or "error" in msg:
                    self._replies.put(msg)

    def _watch(self) -> None:
        while self.proc.poll() is None:
            if time.monotonic() > self._deadline:
                self._timed_out = True
                self.proc.kill()
                return
            time.sleep(0.05)

    def _qmp(self, cmd: dict[str, Any], timeout: float = 5.0) -> dict[str, Any]:
        with self._qmp_lock:
            return self._qmp_locked(cmd, timeout)

    def _qmp_locked(self, cmd: dict[str, Any], timeout: float) -> dict[str, Any]:
        if self.proc.poll() is not None or self.proc.stdin is None:
            return {}
        try:
            self.proc.stdin.write((json.dumps(cmd) + "\n").encode())
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            return {}
        try:
            reply = self._replies.get(timeout=timeout)
        except queue.Empty:
            raise ToolchainError(f"QEMU did not answer QMP {cmd['execute']} within "
                                 f"{timeout:g} s") from None
        if "error" in reply:
            raise ToolchainError(f"QEMU refused {cmd['execute']}: {reply['error']}")
        return reply

    def resume(self) -> None:
        self._qmp({"execute": "cont"})

    def kick(self) -> None:
        self._qmp({"execute": "query-status"})

    @property
    def timed_out(self) -> bool:
        return self._timed_out

    def poll(self) -> int | None:
        return self.proc.poll()

    def stop(self) -> int | None:
        rc = self.proc.poll()
        if rc is None:
            try:
                if self.proc.stdin:
                    self.proc.stdin.write(b'{"execute": "quit"}\n')
                    self.proc.stdin.flush()
            except (BrokenPipeError, OSError):
                pass
            try:
                rc = self.proc.wait(timeout=2)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                rc = self.proc.wait()
        for f in (self.proc.stdin, self.proc.stdout):
            try:
                if f:
                    f.close()
            except OSError:
                pass
        self._reader.join(timeout=1)
        return rc

    @property
    def log(self) -> str:
        with self._lock:
            return "\n".join(self._lines)


class QemuRunner(Runner):
    """Runs a Cortex-M ELF on the board's QEMU machine."""

    name = "qemu"

    def __init__(self, icount: bool = True, shift: int = 0,
                 semihosting_args: tuple[str, ...] = ()) -> None:
        self.icount = icount
        self.shift = shift
        self.semihosting_args = semihosting_args

    def start(self, firmware: Firmware, *, timeout: float = 120.0) -> QemuDevice:
        refuse_chip_build(firmware)
        cmd = qemu_command(firmware.board, firmware.elf, self.icount, shift=self.shift,
                           semihosting_args=self.semihosting_args)
        # die_with_parent: a SIGKILLed tinydeploy (no handler runs) takes QEMU with it
        proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, preexec_fn=die_with_parent())
        try:
            return QemuDevice(proc, firmware.board, timeout)
        except BaseException:
            # interrupted (or QMP failed) before anyone holds the device: QEMU must not stay
            if proc.poll() is None:
                proc.kill()
            proc.wait()
            raise
