"""The runner registry: one concrete runner per `RunnerKind`, and the choice for a board.

The interface (`Firmware`, `Device`, `Runner`) lives in ``runner.py`` and imports no concrete
runner; this module imports them all and is the one place that maps a kind to its class.
Invariant: every `RunnerKind` has exactly one entry (checked in the tests).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tinydeploy.boards import Board, RunnerKind
from tinydeploy.errors import TinydeployError
from tinydeploy.flash import hardware, host, qemu
from tinydeploy.flash.runner import Runner


def _qemu(board: Board, args: tuple[str, ...], **options: Any) -> Runner:
    if not board.qemu_machine:
        names = [r.name for r in board.runners]
        raise TinydeployError(f"board '{board.id}' has no QEMU machine",
                              hint=f"its runners: {', '.join(names) or 'none'}; or build "
                                   "with --emulate")
    return qemu.QemuRunner(**options)


def _host(board: Board, args: tuple[str, ...], **options: Any) -> Runner:
    if not board.is_host:
        raise TinydeployError(f"the host runner runs host builds, not '{board.id}'")
    return host.HostRunner(**options)


def _hardware(kind: RunnerKind) -> Callable[..., Runner]:
    def make(board: Board, args: tuple[str, ...], **options: Any) -> Runner:
        return hardware.HARDWARE_RUNNERS[kind](args=args, **options)
    return make


RUNNERS: dict[RunnerKind, Callable[..., Runner]] = {
    RunnerKind.QEMU: _qemu,
    RunnerKind.HOST: _host,
    RunnerKind.PYOCD: _hardware(RunnerKind.PYOCD),
    RunnerKind.NRFJPROG: _hardware(RunnerKind.NRFJPROG),
    RunnerKind.PLATFORMIO: _hardware(RunnerKind.PLATFORMIO),
}


def runner_for(board: Board, name: str | None = None, **options: Any) -> Runner:
    """The runner ``name`` (default: host for the host, QEMU for an emulated board, else the
    board's first) for ``board``."""
    names = [r.name for r in board.runners]
    if name is None:
        if board.is_host:
            name = RunnerKind.HOST
        elif board.qemu_machine:
            name = RunnerKind.QEMU
        elif names:
            name = names[0]
        else:
            raise TinydeployError(f"board '{board.id}' lists no runner",
                                  hint="pass --runner")
    if name not in RUNNERS:
        raise TinydeployError(f"unknown runner '{name}'",
                              hint="runners: " + ", ".join(RunnerKind))
    args: tuple[str, ...] = next((r.args for r in board.runners if r.name == name), ())
    return RUNNERS[RunnerKind(name)](board, args, **options)
