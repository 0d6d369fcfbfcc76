"""The wheel installs anywhere: built from the sources, installed into a fresh virtual
environment outside the clone, it builds and validates firmware from an empty folder.

The fresh venv gets tinydeploy from the wheel only (``pip install --no-deps``); its
dependencies (numpy, jinja2, tflite-micro, ...) come from the test's own environment through a
``.pth`` line naming that environment's site-packages, so nothing is downloaded. A plain path
line in a ``.pth`` file does not run the ``.pth`` files of the directory it names, so an
editable tinydeploy in the test's environment cannot shadow the wheel; the test checks that
the CLI ran from the wheel. Needs the ARM toolchain and QEMU (CI installs them), like the
target tier.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

from tinydeploy import resources

pytestmark = pytest.mark.target

CLONE = Path(__file__).resolve().parent.parent
MODEL = CLONE / "tests" / "fixtures" / "dscnn_kws.tflite"
BUILD_INPUTS = ("pyproject.toml", "setup.py", "MANIFEST.in", "README.md", "tinydeploy",
                *resources.PACKAGED)


def _run(cmd: list[str], cwd: Path, env: dict[str, str] | None = None,
         timeout: float = 120) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout)
    assert proc.returncode == 0, (f"{' '.join(cmd)} exited {proc.returncode}:\n"
                                  f"{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return proc


def _source_copy(dest: Path) -> Path:
    """The build inputs of the clone as they are in the working tree (no build artefacts)."""
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info", "_data")
    for name in BUILD_INPUTS:
        src = CLONE / name
        if src.is_dir():
            shutil.copytree(src, dest / name, ignore=ignore)
        else:
            shutil.copy2(src, dest / name)
    return dest


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``python -m build --wheel`` (no isolation: the build backend of this environment)."""
    if importlib.util.find_spec("build") is None:
        pytest.fail("the 'build' package (dev extra) builds the wheel: "
                    "pip install -c constraints.txt -e '.[dev]'")
    src = _source_copy(tmp_path_factory.mktemp("src"))
    dist = tmp_path_factory.mktemp("dist")
    _run([sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(dist),
          str(src)], cwd=src)
    (whl,) = dist.glob("tinydeploy-*.whl")
    return whl


def test_wheel_carries_the_data_folders(wheel: Path) -> None:
    """Every file of boards/, templates/, firmware/, models/, examples/ that the clone has is
    in the wheel under tinydeploy/_data/, byte for byte."""
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        missing, differ = [], []
        for folder in resources.PACKAGED:
            for f in sorted((CLONE / folder).rglob("*")):
                if not f.is_file() or "__pycache__" in f.parts:
                    continue
                rel = f"tinydeploy/{resources.DATA_PACKAGE_DIR}/{f.relative_to(CLONE)}"
                if rel not in names:
                    missing.append(rel)
                elif z.read(rel) != f.read_bytes():
                    differ.append(rel)
    assert not missing, f"{len(missing)} data files missing from {wheel.name}: {missing[:5]}"
    assert not differ, f"{len(differ)} data files differ in {wheel.name}: {differ[:5]}"
    assert "tinydeploy/resources.py" in names


def test_wheel_builds_and_validates_from_an_empty_folder(wheel: Path, tmp_path: Path) -> None:
    """pip install the wheel into a fresh venv outside the clone; from an empty folder,
    `tinydeploy build` and `tinydeploy validate` for mps2-an386 pass."""
    for tool in ("arm-none-eabi-gcc", "qemu-system-arm", "make"):
        if shutil.which(tool) is None:
            pytest.fail(f"{tool} is needed (apt-get install gcc-arm-none-eabi "
                        "libnewlib-arm-none-eabi qemu-system-arm make)")
    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", str(venv)], cwd=tmp_path)
    py = venv / "bin" / "python"
    purelib = Path(_run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()"
                         "['purelib'])"], cwd=tmp_path).stdout.strip())
    (purelib / "_test_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    _run([str(py), "-m", "pip", "install", "-q", "--no-deps", "--no-index", str(wheel)],
         cwd=tmp_path)

    work = tmp_path / "empty"
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    where = _run([str(py), "-c", "import tinydeploy.resources as r; print(r.data_root())"],
                 cwd=work, env=env).stdout.strip()
    assert Path(where) == purelib / "tinydeploy" / resources.DATA_PACKAGE_DIR, where
    shutil.copyfile(MODEL, work / MODEL.name)
    cli = str(venv / "bin" / "tinydeploy")
    built = _run([cli, "build", MODEL.name, "--board", "mps2-an386"], cwd=work, env=env)
    elf = work / "build" / f"{MODEL.stem}-mps2-an386-validate" / "firmware.elf"
    assert elf.is_file(), built.stdout[-2000:]
    checked = _run([cli, "validate", MODEL.name, "--board", "mps2-an386", "--random", "3"],
                   cwd=work, env=env)
    assert "3/3 cases bit-exact" in checked.stdout, checked.stdout[-2000:]
    assert sorted(p.name for p in work.iterdir()) == ["build", MODEL.name]


def test_clone_finds_its_own_folders() -> None:
    """From a clone (or an editable install) the data folders are the clone's top level."""
    import tinydeploy

    root = resources.data_root()
    if root.name == resources.DATA_PACKAGE_DIR:
        pytest.skip(f"tinydeploy is installed from a wheel here ({tinydeploy.__file__})")
    assert root == Path(tinydeploy.__file__).resolve().parent.parent
    for name, fn in (("boards", resources.boards_dir), ("templates", resources.templates_dir),
                     ("firmware", resources.firmware_dir)):
        assert fn() == root / name and fn().is_dir()


def test_wheel_depends_on_the_oracle_without_an_extra(wheel: Path) -> None:
    """`validate` after a plain install: tflite-micro is a default dependency of the wheel,
    not one behind the 'oracle' extra."""
    import zipfile

    with zipfile.ZipFile(wheel) as z:
        meta = next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))
        requires = [ln.split(":", 1)[1].strip() for ln in z.read(meta).decode().splitlines()
                    if ln.startswith("Requires-Dist:")]
    plain = [r for r in requires if ";" not in r]
    assert any(r.replace(" ", "").startswith("tflite-micro") for r in plain), requires
