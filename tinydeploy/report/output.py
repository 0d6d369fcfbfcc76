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
