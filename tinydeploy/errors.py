"""Domain errors. Every error a user can cause is a `TinydeployError`: the CLI prints its
message (one line, naming the file, tensor, op or board and the numbers, plus a hint) and
exits 1. Anything else escaping to the CLI is a bug and is reported as one."""

from __future__ import annotations


class TinydeployError(Exception):
    """Base of all user-facing errors. ``hint`` is printed on a second line when present."""

    exit_code = 1

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def report(self) -> str:
        """What a command prints for it: ``error: MESSAGE`` and, when there is one,
        ``hint: HINT`` on a second line."""
        return f"error: {self.message}" + (f"\nhint: {self.hint}" if self.hint else "")


class ModelError(TinydeployError):
    """A model file that cannot be read, or is not a valid TFLite model."""


class UnsupportedError(TinydeployError):
    """An op, dtype or option that tinydeploy has no kernel for."""


class BoardError(TinydeployError):
    """An unknown board id or an invalid board description."""


class BudgetError(TinydeployError):
    """The model does not fit the board's RAM or flash."""


class ToolchainError(TinydeployError):
    """A compiler, emulator or flashing tool is missing or failed."""


class LinkError(TinydeployError):
    """Serial-port or protocol failure talking to a device."""


class InputDataError(TinydeployError):
    """User-supplied data (calibration set, inputs, audio) of the wrong shape, type or form."""
