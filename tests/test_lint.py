"""The package, its tests and the example scripts (which produce the published kws figures)
pass the linter (ruff) and the type checker (mypy), as `make lint` runs them; both are in
the dev extra that `make test` installs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _run(args: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=600)


def test_ruff_finds_nothing() -> None:
    proc = _run(["ruff", "check", "tinydeploy", "tests", "examples"])
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_mypy_finds_nothing(tmp_path: Path) -> None:
    proc = _run(["mypy", "--cache-dir", str(tmp_path / "mypy"), "tinydeploy", "examples"])
    assert proc.returncode == 0, proc.stdout + proc.stderr
