"""What a build writes: its output folder and nothing else; never a half-written firmware.*.

The first test runs ``tinydeploy build`` in a read-only tree (a read-only bind mount, with the
repository read-only too) whose only writable folders are the output folder and TMPDIR; the
build must succeed, the tree and the repository must be unchanged and TMPDIR empty
afterwards. The second interrupts builds while the compiler, the linker or
objcopy runs (SIGKILL to every process of the build, or SIGINT to tinydeploy) and checks
that every ``firmware.*`` and ``manifest.json`` under its final name is complete: byte for
byte what an uninterrupted build writes (builds are reproducible).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
MODEL = Path(__file__).parent / "fixtures" / "mlp.tflite"
BOARD = "mps2-an386"

pytestmark = pytest.mark.target


def _tinydeploy(*args: str) -> list[str]:
    return [sys.executable, "-m", "tinydeploy", *args]


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("XDG_", "PYTEST"))}
    return {**env, "PYTHONPATH": str(ROOT), "PYTHONDONTWRITEBYTECODE": "1", **extra}


def _snapshot(root: Path, skip: Path) -> dict[str, tuple[int, int, int]]:
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        d = Path(dirpath)
        if d == skip or skip in d.parents:
            dirnames[:] = []
            continue
        for name in [*filenames, *dirnames]:
            st = (d / name).lstat()
            out[str((d / name).relative_to(root))] = (st.st_size, st.st_mtime_ns, st.st_mode)
    return out


@pytest.fixture
def sandbox() -> Iterator[Path]:
    base = Path(tempfile.mkdtemp(prefix="td-ro-"))
    try:
        yield base
    finally:
        for dirpath, _, _ in os.walk(base):
            os.chmod(dirpath, 0o755)
        shutil.rmtree(base, ignore_errors=True)


# Inside a private mount namespace: the tree and this repository read-only, the output
# folder writable again on top (root ignores file modes, a read-only mount it cannot).
RO_MOUNTS = """set -e
mount --bind "$TD_RO" "$TD_RO"; mount -o remount,bind,ro "$TD_RO"
mount --bind "$TD_REPO" "$TD_REPO"; mount -o remount,bind,ro "$TD_REPO"
mount --bind "$TD_OUTW" "$TD_RO/out"
cd "$TD_RO"     # the new mounts, not the directory the shell started in
exec "$@"
"""


def _read_only_runner() -> list[str] | None:
    """The command prefix that runs a command with the read-only mounts, or None when this
    machine cannot make mount namespaces (then only the snapshots below check writes)."""
    if shutil.which("unshare") is None:
        return None
    probe = subprocess.run(["unshare", "-m", "--propagation", "private", "true"],
                           capture_output=True)
    if probe.returncode != 0:
        return None
    return ["unshare", "-m", "--propagation", "private", "sh", "-c", RO_MOUNTS, "sh"]


def test_build_writes_nothing_outside_its_output_folder(sandbox: Path) -> None:
    ro, outw, tmp = sandbox / "ro", sandbox / "outw", sandbox / "tmp"
    for d in (ro, ro / "out", outw, tmp):
        d.mkdir()
    shutil.copy(MODEL, ro / "model.tflite")
    (ro / "notes.txt").write_text("the user's own file\n")
    prefix = _read_only_runner()
    if prefix is None:        # no namespaces: the output folder is the plain one
        outw = ro / "out"
    before = _snapshot(ro, ro / "out")
    repo_before = _snapshot(ROOT, ROOT / ".venv")
    cmd = _tinydeploy("build", "model.tflite", "--board", BOARD, "--app", "validate",
                      "-o", "out/fw")
    r = subprocess.run([*(prefix or []), *cmd], cwd=ro, capture_output=True, text=True,
                       env=_env(HOME=str(ro), TMPDIR=str(tmp), TD_RO=str(ro),
                                TD_REPO=str(ROOT), TD_OUTW=str(outw)), timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    assert (outw / "fw" / "firmware.elf").is_file() and (outw / "fw" / "manifest.json").is_file()
    assert _snapshot(ro, ro / "out") == before
    assert _snapshot(ROOT, ROOT / ".venv") == repo_before, "the build wrote into the repository"
    assert list(tmp.iterdir()) == [], "temporary files left in TMPDIR"
    assert sorted(p.name for p in outw.iterdir()) == ["fw"]


def _procs() -> dict[int, tuple[int, int, str]]:
    out = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                stat = Path(f"/proc/{d}/stat").read_text()
            except OSError:
                continue
            f = stat[stat.rindex(")") + 2:].split()
            if f[0] != "Z":
                out[int(d)] = (int(f[1]), int(f[2]), stat[stat.index("(") + 1:stat.rindex(")")])
    return out


def _tree(root: int) -> dict[int, tuple[int, str]]:
    """pid -> (pgid, comm) of ``root`` and its live descendants."""
    procs = _procs()
    found = {root: (procs[root][1], procs[root][2])} if root in procs else {}
    frontier = [root]
    while frontier:
        p = frontier.pop()
        for pid, (ppid, pgid, comm) in procs.items():
            if ppid == p and pid not in found:
                found[pid] = (pgid, comm)
                frontier.append(pid)
    return found


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    d = tmp_path_factory.mktemp("ref") / "fw"
    r = subprocess.run(_tinydeploy("build", str(MODEL), "--board", BOARD, "-o", str(d)),
                       env=_env(), capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    return {p.name: p.read_bytes() for p in d.iterdir()
            if p.name.startswith("firmware.") and p.suffix != ".map"}


# stage -> (processes, files) whose appearance means the stage is running
STAGES = {"compile": (("cc1",), ()),
          "link": (("collect2", "ld"), ("firmware.elf.tmp",)),
          "objcopy": (("objcopy",), ("firmware.hex.tmp", "firmware.bin.tmp"))}
# SIGKILL-all kills every process of the build at once; SIGKILL kills tinydeploy only (no
# handler runs): its lifeline must end make and the compilers under it.
DEFAULT = {("compile", "SIGKILL-all"), ("link", "SIGKILL-all"), ("link", "SIGINT"),
           ("compile", "SIGKILL")}


def _cases() -> list:
    return [pytest.param(stage, how, id=f"{stage}-{how}",
                         marks=() if (stage, how) in DEFAULT else (pytest.mark.slow,))
            for stage in sorted(STAGES) for how in ("SIGKILL-all", "SIGKILL", "SIGINT")]


@pytest.mark.parametrize(("stage", "how"), _cases())
def test_interrupted_build_leaves_no_half_written_firmware(
        stage: str, how: str, reference: dict[str, bytes], tmp_path: Path) -> None:
    out = tmp_path / "fw"
    hit = False
    for _ in range(3):    # the link and objcopy last milliseconds: try again if missed
        shutil.rmtree(out, ignore_errors=True)
        proc = subprocess.Popen(_tinydeploy("build", str(MODEL), "--board", BOARD, "-o",
                                            str(out)), env=_env(), start_new_session=True,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        try:
            tree: dict[int, tuple[int, str]] = {}
            deadline = time.monotonic() + 120
            while proc.poll() is None and time.monotonic() < deadline:
                tree = _tree(proc.pid)
                names, files = STAGES[stage]
                if any(c in names for _, c in tree.values()) or any(
                        (out / f).exists() for f in files):
                    hit = True
                    break
            if hit and how == "SIGKILL-all":
                for pgid in {g for g, _ in tree.values()}:
                    try:
                        os.killpg(pgid, signal.SIGKILL)
                    except OSError:
                        pass
            elif hit:
                proc.send_signal(signal.SIGKILL if how == "SIGKILL" else signal.SIGINT)
            _, err = proc.communicate(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        deadline = time.monotonic() + 10
        while _tree_alive(tree) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _tree_alive(tree), f"build processes left: {_tree_alive(tree)}"
        if hit:
            break
    assert hit, f"never caught the build in its {stage} stage"
    if how == "SIGINT":
        assert proc.returncode == 130 and "Traceback" not in err, err
    for p in out.glob("firmware.*"):
        if p.suffix in (".map", ".tmp"):
            continue
        assert p.name in reference, p
        assert p.read_bytes() == reference[p.name], f"{p.name} is half-written"
    if (out / "manifest.json").exists():
        assert (out / "firmware.elf").read_bytes() == reference["firmware.elf"]
    if how == "SIGKILL":
        # make did not carry on by itself after tinydeploy died: the build stopped
        assert not (out / "firmware.elf").exists(), "an orphaned make finished the build"
        # what the killed build left (objects included) must not spoil the next build (a
        # folder without its manifest needs --force)
        r = subprocess.run(_tinydeploy("build", str(MODEL), "--board", BOARD, "-o", str(out),
                                       "--force"),
                           env=_env(), capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stderr[-3000:]
        for name, data in reference.items():
            assert (out / name).read_bytes() == data, f"{name} differs after the rebuild"


def _tree_alive(tree: dict[int, tuple[int, str]]) -> dict[int, str]:
    procs = _procs()
    return {pid: c for pid, (_, c) in tree.items() if pid in procs and procs[pid][2] == c}
