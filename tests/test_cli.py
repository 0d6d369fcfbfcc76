"""The command line: help, version, exit codes, JSON output, no tracebacks on user errors."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

FIX = Path(__file__).parent / "fixtures"


def tdp(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tinydeploy", *args],
                          capture_output=True, text=True, timeout=120)


def test_version_and_help() -> None:
    r = tdp("--version")
    assert r.returncode == 0 and r.stdout.startswith("tinydeploy ")
    r = tdp("--help")
    assert r.returncode == 0
    for cmd in ("inspect", "boards"):
        assert cmd in r.stdout


def test_usage_errors_exit_2() -> None:
    assert tdp().returncode == 2
    assert tdp("frobnicate").returncode == 2
    assert tdp("inspect").returncode == 2


def test_inspect_json() -> None:
    r = tdp("inspect", str(FIX / "dscnn_kws.tflite"), "--json")
    assert r.returncode == 0, r.stderr
    info = json.loads(r.stdout)
    for key in ("ops", "params_bytes", "macs", "inputs", "outputs", "unsupported_ops"):
        assert key in info
    assert info["macs"] == 2_656_768
    assert [o["index"] for o in info["ops"]] == list(range(12))
    assert {"index", "type", "version", "macs"} <= set(info["ops"][0])
    (inp,) = info["inputs"]
    assert inp["shape"] == [1, 49, 10, 1] and inp["dtype"] == "int8"
    assert isinstance(inp["scale"], float) and isinstance(inp["zero_point"], int)


def test_user_errors_exit_1_without_traceback(tmp_path: Path) -> None:
    junk = tmp_path / "junk.tflite"
    junk.write_bytes(b"\x01\x02\x03\x04" * 100)
    for arg in (str(tmp_path / "missing.tflite"), str(tmp_path), str(junk)):
        r = tdp("inspect", arg)
        assert r.returncode == 1, (arg, r.stderr)
        assert "Traceback" not in r.stderr
        assert r.stderr.startswith("error: ") and arg in r.stderr
    r = tdp("boards", "--json")
    assert r.returncode == 0
    ids = {b["id"] for b in json.loads(r.stdout)}
    assert {"nrf52840dk", "microbit-v1", "host"} <= ids
    for b in json.loads(r.stdout):
        assert {"id", "name", "core", "ram_bytes", "flash_bytes", "emulated"} <= set(b)


def test_model_commands_share_one_target_definition() -> None:
    """build, bench, validate, run and plan take the model, --board and --optimize from
    commands/target.py: the same help, choices and default in all five."""
    import argparse

    from tinydeploy.commands import load_commands

    seen = {}
    for mod in load_commands():
        if mod.NAME in ("build", "bench", "validate", "run", "plan"):
            p = argparse.ArgumentParser()
            mod.configure(p)
            acts = {a.dest: a for a in p._actions}
            seen[mod.NAME] = (acts["model"].help, acts["board"].help, acts["board"].required,
                              tuple(acts["optimize"].choices), acts["optimize"].default)
    assert sorted(seen) == ["bench", "build", "plan", "run", "validate"]
    assert len(set(seen.values())) == 1, seen


def test_resolve_target_names_the_output_and_refuses_an_unreachable_board() -> None:
    import argparse

    import pytest

    from tinydeploy.commands.target import resolve_target
    from tinydeploy.errors import TinydeployError

    args = argparse.Namespace(model=Path("dir/kws.tflite"), board="nrf52840", output=None,
                              emulate=True, port=None)
    board, out = resolve_target(args, "bench", reachable=True)
    assert out == Path("build") / f"kws-{board.id}-emulated-bench"
    args.emulate = False
    assert resolve_target(args, "build")[1] == Path("build") / f"kws-{board.id}-build"
    with pytest.raises(TinydeployError, match="real hardware"):
        resolve_target(args, "validate", reachable=True)
    args.output = Path("elsewhere")
    args.port = "/dev/ttyACM0"
    assert resolve_target(args, "validate", reachable=True)[1] == Path("elsewhere")


def test_slow_work_says_how_long_it_took(capsys: pytest.CaptureFixture[str]) -> None:
    """Long work (kernel search and planning) ends with one line on stderr saying what took
    how long, only when it took longer than the threshold; stdout stays clean (--json)."""
    import time

    from tinydeploy.report.output import slow_work

    with slow_work("quick", after=0.5):
        pass
    with slow_work("choosing kernels", after=0.05):
        time.sleep(0.1)
    out = capsys.readouterr()
    assert out.out == ""
    assert "quick" not in out.err
    assert re.search(r"choosing kernels: 0\.\d s", out.err), out.err
