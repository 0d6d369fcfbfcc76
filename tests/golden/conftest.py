"""Golden tier: kernels against the tflite-micro oracle (see framework.py).

The host harness needs a C compiler with AddressSanitizer/UBSan and the oracle needs
tflite-micro: both are required (CI installs them), so their absence is an error, not a skip.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))


@pytest.fixture(scope="session", autouse=True)
def _golden_requirements() -> None:
    if shutil.which("gcc") is None:
        pytest.fail("the golden tier needs gcc with -fsanitize=address,undefined")
    try:
        import tflite_micro  # noqa: F401
    except ImportError:
        pytest.fail("the golden tier needs tflite-micro (pip install tflite-micro)")
