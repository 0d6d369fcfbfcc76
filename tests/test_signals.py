"""Every command that starts an emulator or a tool stops it when it is told to stop.

Each case starts a command in a session of its own, waits until the process it starts
(QEMU, make) is running, sends SIGINT or SIGTERM to the tinydeploy process only — not to its
group, as a runner or a CI job does — and then checks that no process it started is left:
neither one of the descendants seen before the signal nor anything in its process group.
SIGINT cases start the command with SIGINT ignored, as a non-interactive shell starts a
background job (``tinydeploy flash ... &``): the command must still obey ``kill -INT``.
SIGKILL cases check what no handler can do: the kernel (PR_SET_PDEATHSIG) and the tool
groups' lifelines (`tinydeploy.procs`) end every child of a killed tinydeploy.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tinydeploy.boards import get_board
from tinydeploy.build.firmware import build_firmware

ROOT = Path(__file__).resolve().parent.parent
FIX = Path(__file__).parent / "fixtures"
MLP = FIX / "mlp.tflite"
KWS = ROOT / "models" / "kws" / "dscnn_int8.tflite"
WAV = ROOT / "examples" / "kws" / "demo.wav"
BOARD = "mps2-an386"

pytestmark = pytest.mark.target


def _procs() -> dict[int, tuple[int, int, str, str]]:
    """pid -> (ppid, pgid, state, comm) of every process, from /proc."""
    out = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            stat = Path(f"/proc/{d}/stat").read_text()
        except OSError:
            continue
        comm = stat[stat.index("(") + 1:stat.rindex(")")]
        f = stat[stat.rindex(")") + 2:].split()
        out[int(d)] = (int(f[1]), int(f[2]), f[0], comm)
    return out


def _descendants(root: int) -> dict[int, str]:
    procs = _procs()
    found: dict[int, str] = {}
    frontier = [root]
    while frontier:
        p = frontier.pop()
        for pid, (ppid, _, state, comm) in procs.items():
            if ppid == p and pid not in found and state != "Z":
                found[pid] = comm
                frontier.append(pid)
    return found


def _alive(pids: set[int], pgids: set[int]) -> dict[int, str]:
    return {pid: comm for pid, (_, pgid, state, comm) in _procs().items()
            if state != "Z" and (pid in pids or pgid in pgids)}


def _ignore_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _stop_and_check(argv: list[str], sig: int, ready: Callable[[dict[int, str]], bool],
                    cwd: Path, what: str, wait: float = 60.0) -> tuple[int, str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "tinydeploy", *argv], cwd=cwd, env=env,
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True, start_new_session=True,
                            preexec_fn=_ignore_sigint if sig == signal.SIGINT else None)
    seen: dict[int, str] = {}
    try:
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline and proc.poll() is None:
            kids = _descendants(proc.pid)
            seen.update(kids)
            if ready(kids):
                break
            time.sleep(0.02)
        else:
            err = proc.stderr.read() if proc.poll() is not None and proc.stderr else ""
            pytest.fail(f"{what}: never started it (exit {proc.poll()}):\n{err[-2000:]}")
        time.sleep(0.2)
        seen.update(_descendants(proc.pid))
        proc.send_signal(sig)
        try:
            _, err = proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            pytest.fail(f"{what}: still running 30 s after {signal.Signals(sig).name}")
        pgids = {proc.pid} | {_procs().get(p, (0, -1))[1] for p in seen}
        left: dict[int, str] = {}
        deadline = time.monotonic() + 2.0
        while time.monotonic() < deadline:
            left = _alive(set(seen), pgids - {-1})
            if not left:
                break
            time.sleep(0.05)
        assert not left, f"{what}: left running after {signal.Signals(sig).name}: {left}"
        assert seen, what
        assert "Traceback" not in err, err
        return proc.returncode, err
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for pid in _alive(set(seen), set()):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass


def _has(name: str) -> Callable[[dict[int, str]], bool]:
    return lambda kids: any(c.startswith(name) for c in kids.values())


@pytest.fixture(scope="module")
def builds(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    out = {}
    for app, model in (("bench", MLP), ("eembc", FIX / "dscnn_small.tflite"),
                       ("validate", MLP)):
        d = tmp_path_factory.mktemp(f"sig-{app}")
        build_firmware(model, get_board(BOARD), app, d,
                       cflags_extra=("-DTD_BENCH_RUNS=1000000u",) if app == "bench" else ())
        out[app] = d
    return out


QEMU = _has("qemu-system")
INT, TERM, KILL = signal.SIGINT, signal.SIGTERM, signal.SIGKILL

# (id, argv builder, what must be running before the signal)
CASES: list[tuple[str, Callable[[dict[str, Path], Path], list[str]], Callable]] = [
    ("flash", lambda b, t: ["flash", str(b["bench"])], QEMU),
    ("flash-monitor", lambda b, t: ["flash", str(b["bench"]), "--monitor"], QEMU),
    ("eembc", lambda b, t: ["flash", str(b["eembc"])], QEMU),
    ("validate", lambda b, t: ["validate", str(MLP), "--board", BOARD, "--random", "500",
                               "-o", str(t / "v")], QEMU),
    ("bench", lambda b, t: ["bench", str(MLP), "--board", BOARD, "--runs", "100000",
                            "-o", str(t / "b")], QEMU),
    ("run", lambda b, t: ["run", str(MLP), "--board", BOARD, "-o", str(t / "r")], QEMU),
    ("kws-stream", lambda b, t: ["kws", "stream", "--model", str(KWS), str(WAV),
                                 "--board", BOARD, "--realtime", "-o", str(t / "k")], QEMU),
    ("build", lambda b, t: ["build", str(KWS), "--board", BOARD, "--app", "kws",
                            "-o", str(t / "m")], _has("make")),
]
# the default run sends one signal to six of the commands and SIGKILL to every command that
# starts an emulator; --sweep sends every signal to all
DEFAULT = {("flash", INT), ("flash", TERM), ("eembc", INT), ("validate", TERM),
           ("kws-stream", INT), ("build", TERM),
           *((name, KILL) for name, _, _ in CASES if name != "build")}


def _params() -> list:
    out = []
    for name, argv, ready in CASES:
        for sig in (INT, TERM, KILL):
            marks = () if (name, sig) in DEFAULT else (pytest.mark.slow,)
            out.append(pytest.param(name, argv, ready, sig, marks=marks,
                                    id=f"{name}-{signal.Signals(sig).name}"))
    return out


@pytest.mark.parametrize(("name", "argv", "ready", "sig"), _params())
def test_stop_signal_leaves_no_child(name: str, argv: Callable, ready: Callable, sig: int,
                                     builds: dict[str, Path], tmp_path: Path) -> None:
    rc, err = _stop_and_check(argv(builds, tmp_path), sig, ready, tmp_path, name)
    if sig == KILL:
        assert rc == -KILL, err       # killed outright: nothing of tinydeploy ran
        return
    if name in ("flash", "flash-monitor", "eembc", "run"):
        # Ctrl-C / SIGTERM is how a running emulator is ended (0); one that arrives while the
        # device is still starting ends the command like any other (128 + signal)
        assert rc in (0, 128 + sig), err
    else:
        assert rc == 128 + sig, err  # the shell's status for a command stopped by a signal


def test_an_error_inside_a_session_stops_the_emulator(builds: dict[str, Path]) -> None:
    """A command's own error (here any exception inside the connection) stops its QEMU."""
    from tinydeploy.flash import Firmware
    from tinydeploy.link.connect import connect

    fw = Firmware.from_build_dir(builds["validate"])
    pid = None
    with pytest.raises(RuntimeError, match="the command failed"):
        with connect(fw, timeout=60) as conn:
            assert conn.device is not None
            pid = conn.device.proc.pid  # type: ignore[attr-defined]
            assert _procs()[pid][3].startswith("qemu-system")
            raise RuntimeError("the command failed")
    assert pid is not None
    deadline = time.monotonic() + 5
    while pid in _procs() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert pid not in _procs(), "QEMU still running after the error"
