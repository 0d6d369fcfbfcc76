"""Readable at 80 columns when piped: ids and kernel names whole, the detail behind
--verbose (and always in --json)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tinydeploy.boards import list_boards

FIX = Path(__file__).parent / "fixtures"


def _td(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tinydeploy", *argv], capture_output=True,
                          text=True, timeout=300, env={**os.environ, "COLUMNS": "80"})


def test_boards_shows_every_id_whole_within_80_columns() -> None:
    r = _td("boards")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert max(len(ln.rstrip()) for ln in lines) <= 80
    firsts = {ln.split()[0] for ln in lines[1:] if ln.strip()}
    assert {b.id for b in list_boards()} <= firsts
    assert "…" not in r.stdout


def test_plan_lists_one_whole_kernel_name_per_layer_by_default() -> None:
    short = _td("plan", str(FIX / "dscnn_kws.tflite"), "--board", "mps2-an386")
    full = _td("plan", str(FIX / "dscnn_kws.tflite"), "--board", "mps2-an386", "--verbose")
    assert short.returncode == full.returncode == 0, short.stderr
    assert "…" not in short.stdout
    kernel_lines = [ln for ln in short.stdout.splitlines() if " td_" in ln]
    assert all(ln.split()[2].startswith("td_") and ln.split()[2].endswith(("_dsp", "_ref"))
               for ln in kernel_lines), kernel_lines
    assert len(short.stdout.splitlines()) * 3 < len(full.stdout.splitlines())


def test_build_prints_the_per_op_tables_only_with_verbose(tmp_path: Path) -> None:
    args = (str(FIX / "mlp.tflite"), "--board", "mps2-an386", "-o", str(tmp_path / "b"))
    short = _td("build", *args)
    full = _td("build", *args, "--verbose")
    assert short.returncode == full.returncode == 0, short.stderr
    assert "flash per op" not in short.stdout and "built" in short.stdout
    assert "flash per op" in full.stdout and "memory" in full.stdout
