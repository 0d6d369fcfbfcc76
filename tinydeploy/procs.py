"""Child processes that never outlive the command that started them.

A command that starts a compiler, an emulator or a flashing tool must stop it when it is
interrupted (Ctrl-C, SIGTERM from a runner or a CI job, SIGHUP when the terminal goes) and
when it fails. Two things make that hold:

- `stop_signals_raise` (around every CLI command) turns SIGINT, SIGTERM and SIGHUP into a
  `Terminated` exception in the main thread, so every ``finally`` and context manager that
  stops a device runs. SIGINT is installed explicitly because a shell starts background jobs
  with SIGINT *ignored*, and Python keeps an ignored SIGINT ignored: ``tinydeploy flash ... &``
  would otherwise be deaf to ``kill -INT``. Only the first signal raises; later ones are
  recorded, so a second Ctrl-C cannot cut a cleanup short (every cleanup is bounded in time).
- `run_tool` starts a tool in a process group of its own and, on a timeout or any exception
  (a `Terminated` included), ends the whole group: SIGTERM (make forwards it and deletes its
  half-made target), then SIGKILL after a grace period, so no compiler is left behind.

This module sits at the bottom of the stage order, next to `tinydeploy.errors`.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import FrameType

from tinydeploy.errors import ToolchainError

GRACE_SECONDS = 3.0
HANDLED_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class Terminated(KeyboardInterrupt):
    """A stop signal arrived. A KeyboardInterrupt so that code which ends cleanly on Ctrl-C
    (the monitor, a running emulator) ends the same way on SIGTERM."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


_received: list[int] = []


def received_signal() -> int | None:
    """The first stop signal this process received since the handlers were installed."""
    return _received[0] if _received else None


def _handler(signum: int, frame: FrameType | None) -> None:
    first = not _received
    _received.append(signum)
    if first:
        raise Terminated(signum)


@contextmanager
def stop_signals_raise() -> Iterator[None]:
    """Within the block SIGINT, SIGTERM and SIGHUP raise `Terminated` once (main thread
    only); the previous handlers come back afterwards."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    _received.clear()
    previous = {sig: signal.signal(sig, _handler) for sig in HANDLED_SIGNALS}
    try:
        yield
    finally:
        for sig, h in previous.items():
            signal.signal(sig, h)


def stop_group(proc: subprocess.Popen, grace: float = GRACE_SECONDS) -> int:
    """End ``proc`` and its process group (``proc`` must lead one): SIGTERM, then SIGKILL."""
    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, None)):
        try:
            os.killpg(proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            rc = proc.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            continue
        if sig == signal.SIGTERM:
            # the leader is gone; its children (gcc under make) may linger a moment
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        return rc
    return proc.wait()


def run_tool(cmd: Sequence[str], what: str, *, cwd: Path | str | None = None,
             timeout: float = 300.0, env: dict[str, str] | None = None,
             text: bool = True) -> subprocess.CompletedProcess:
    """Run ``cmd`` to completion with its output captured, in a process group of its own.

    On ``timeout`` a ToolchainError names ``what`` and the seconds; on any exception the group
    is stopped before the exception goes on. The exit status is not checked here.
    """
    try:
        proc = subprocess.Popen(list(cmd), cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=text,
                                process_group=0)
    except OSError as e:
        raise ToolchainError(f"cannot run {what}: {e}") from None
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        stop_group(proc)
        proc.communicate()
        raise ToolchainError(f"{what} did not finish within {timeout:g} s") from None
    except BaseException:
        stop_group(proc)
        try:
            proc.communicate(timeout=GRACE_SECONDS)
        except (subprocess.TimeoutExpired, ValueError, OSError):
            pass
        raise
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)
