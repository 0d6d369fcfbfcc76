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

A SIGKILL of tinydeploy itself runs no handler and no ``finally``; two things cover it:

- `die_with_parent` (a ``preexec_fn``) asks the kernel to SIGKILL an emulator or a host
  firmware as soon as the tinydeploy thread that started it ends (``PR_SET_PDEATHSIG``). Such
  children are started from the thread that waits for them, so that thread ends only with the
  process or after the child is gone.
- `run_tool` gives every tool group a lifeline: a tiny ``sh`` that blocks reading a pipe whose
  only writer is tinydeploy. When tinydeploy ends normally it writes a line first and the
  watcher exits; when tinydeploy dies the pipe reaches end-of-file and the watcher ends the
  whole group (SIGTERM, so make deletes its half-made target and gcc its output, then
  SIGKILL after the grace period). PDEATHSIG alone would stop make but not the compilers
  under it.

This module sits at the bottom of the stage order, next to `tinydeploy.errors`.
"""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import FrameType

from tinydeploy.errors import ToolchainError

GRACE_SECONDS = 3.0
HANDLED_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


PR_SET_PDEATHSIG = 1
_libc = ctypes.CDLL(None, use_errno=True) if sys.platform.startswith("linux") else None
_prctl = getattr(_libc, "prctl", None)


def die_with_parent(parent: int | None = None):  # type: ignore[no-untyped-def]
    """A ``preexec_fn`` for `subprocess.Popen`: the child is SIGKILLed when the thread that
    started it ends (a SIGKILLed tinydeploy included). ``parent`` is the pid the child must
    still have as its parent after the call (default: this process, resolved now, before the
    fork): if tinydeploy died between fork and prctl the child exits at once instead of
    outliving it. On systems without prctl it does nothing."""
    want = os.getpid() if parent is None else parent

    def preexec() -> None:
        if _prctl is None:
            return
        _prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
        if os.getppid() != want:
            os._exit(137)

    return preexec


class Lifeline:
    """Ends a process group if tinydeploy dies without cleaning up (see the module docstring).

    ``release()`` (after the group is stopped or finished) tells the watcher to exit without
    touching the group; it is idempotent."""

    def __init__(self, pgid: int, grace: float = GRACE_SECONDS) -> None:
        r, self._w = os.pipe()      # both ends close-on-exec: no other child inherits them
        script = (f"read _ || {{ kill -TERM -- -{pgid}; sleep {grace:g}; "
                  f"kill -KILL -- -{pgid}; }} 2>/dev/null")
        try:
            self._proc: subprocess.Popen[bytes] | None = subprocess.Popen(
                ["/bin/sh", "-c", script], stdin=r, stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL, start_new_session=True)
        except OSError:
            self._proc = None       # no sh: the group is still stopped on every clean exit
        finally:
            os.close(r)

    def release(self) -> None:
        if self._w < 0:
            return
        try:
            os.write(self._w, b"done\n")
        except OSError:
            pass
        os.close(self._w)
        self._w = -1
        if self._proc is not None:
            try:
                self._proc.wait(timeout=GRACE_SECONDS)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()


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
    lifeline = Lifeline(proc.pid)
    try:
        return _wait_tool(proc, what, timeout)
    finally:
        lifeline.release()


def _wait_tool(proc: subprocess.Popen, what: str, timeout: float
               ) -> subprocess.CompletedProcess:
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
