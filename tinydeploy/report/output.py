"""Where command output goes: JSON on stdout under ``--json``, human text (rich) otherwise.

Progress and status lines go to stderr so that stdout stays machine-readable."""

from __future__ import annotations

import json
import sys
from typing import Any

from rich.console import Console

stdout = Console(highlight=False, soft_wrap=True)
stderr = Console(stderr=True, highlight=False)


def emit_json(obj: Any) -> None:
    """One JSON document on stdout, keys in a stable order for reproducible output."""
    sys.stdout.write(json.dumps(obj, indent=2, sort_keys=False, default=_default) + "\n")
    sys.stdout.flush()


def _default(obj: Any) -> Any:
    import numpy as np

    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, np.floating):
        return float(obj)
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    raise TypeError(f"not JSON serialisable: {type(obj).__name__}")


class slow_work:
    """Progress for work that may take a while (a kernel search, a plan): nothing when it
    ends within ``after`` seconds; past that, on a terminal, a spinner on stderr with
    ``message`` and the seconds so far, and in every case one closing line on stderr with
    the time it took (a log shows it too). Used as a context manager."""

    def __init__(self, message: str, after: float = 1.0) -> None:
        self.message, self.after = message, after
        self._timer: Any = None
        self._status: Any = None
        self._t0 = 0.0

    def __enter__(self) -> slow_work:
        import threading
        import time

        self._t0 = time.monotonic()
        if stderr.is_terminal:
            self._timer = threading.Timer(self.after, self._start)
            self._timer.daemon = True
            self._timer.start()
        return self

    def _start(self) -> None:
        self._status = stderr.status(f"{self.message} ...")
        self._status.start()

    def __exit__(self, *exc: object) -> None:
        import time

        if self._timer is not None:
            self._timer.cancel()
        if self._status is not None:
            self._status.stop()
        took = time.monotonic() - self._t0
        if took > self.after and exc[0] is None:
            stderr.print(f"{self.message}: {took:.1f} s")
