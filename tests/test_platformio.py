"""Every PlatformIO project compiles and links the way PlatformIO builds it.

PlatformIO's platforms (toolchains, builders) cannot be downloaded here, so the build is
reproduced from what PlatformIO itself reads: ``platformio.ini`` parsed with PlatformIO's own
config reader (the ``platformio`` package, installed by scripts/setup.sh); each build_flags
line split as PlatformIO's ParseFlags splits it (a shell-style split: quotes are removed, so a
C string define must be quoted whole); a define's value then reaches the compiler as written
after the split (PlatformIO escapes its quotes for the shell); ``build_unflags`` removed; the
link flags and libraries from ``pio_link_flags.py``, run as PlatformIO runs an extra script
(with ``env``). The project is then compiled and linked with arm-none-eabi-gcc from exactly
those flags.
"""

from __future__ import annotations

import shlex
import shutil
import subprocess
import warnings
from pathlib import Path
from typing import Any

import pytest

from tinydeploy.boards import Board, get_board, list_boards
from tinydeploy.build.firmware import build_firmware

FIXTURES = Path(__file__).parent / "fixtures"
PIO_BOARDS = sorted(b.id for b in list_boards() if b.platformio)


def project_config(ini: Path) -> Any:
    try:
        from platformio.project.config import ProjectConfig
    except ImportError:
        msg = ("the platformio package is not installed: platformio.ini is not read with "
               "PlatformIO's own reader (scripts/setup.sh installs it: pip install '.[boards]')")
        warnings.warn(msg, stacklevel=1)
        pytest.skip(msg)
    return ProjectConfig(str(ini), parse_extra=False, expand_interpolations=True)


class FakeEnv:
    """What an extra script sees of PlatformIO's SCons environment (Append only)."""

    def __init__(self) -> None:
        self.vars: dict[str, list[str]] = {}

    def Append(self, **kw: list[str]) -> None:  # noqa: N802 - SCons' name
        for k, v in kw.items():
            self.vars.setdefault(k, []).extend(v)


def run_extra_script(path: Path) -> FakeEnv:
    env = FakeEnv()
    code = compile(path.read_text(encoding="utf-8"), str(path), "exec")
    exec(code, {"Import": lambda name: None, "env": env})   # noqa: S102 - generated file
    return env


def pio_flags(project: Path, board: Board) -> tuple[list[str], list[str], list[str], Path]:
    """(compile flags, link flags, libraries, linker script) as PlatformIO applies them."""
    cfg = project_config(project / "platformio.ini")
    env = f"env:{board.platformio['board']}"
    unflags = set(shlex.split(" ".join(cfg.get(env, "build_unflags"))))
    cflags: list[str] = []
    for line in cfg.get(env, "build_flags"):
        for tok in shlex.split(line):     # PlatformIO's ParseFlags
            if tok in unflags:
                continue
            if tok.startswith("-I") and not Path(tok[2:]).is_absolute():
                tok = f"-I{project / tok[2:]}"
            cflags.append(tok)
    scripts = cfg.get(env, "extra_scripts")
    assert scripts == ["post:pio_link_flags.py"]
    extra = run_extra_script(project / scripts[0].split(":", 1)[1])
    ldscript = project / cfg.get(env, "board_build.ldscript")
    return cflags, extra.vars.get("LINKFLAGS", []), extra.vars.get("LIBS", []), ldscript


@pytest.fixture(scope="module")
def projects(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    if shutil.which("arm-none-eabi-gcc") is None:
        pytest.skip("arm-none-eabi-gcc is not installed")
    out = {}
    for bid in PIO_BOARDS:
        d = tmp_path_factory.mktemp(bid)
        build_firmware(FIXTURES / "mlp.tflite", get_board(bid), "validate", d, chip=True)
        out[bid] = d
    return out


@pytest.mark.parametrize("board_id", PIO_BOARDS)
def test_platformio_project_compiles_and_links(board_id: str, projects: dict[str, Path],
                                               tmp_path: Path) -> None:
    board = get_board(board_id)
    project = projects[board_id]
    cflags, ldflags, libs, ldscript = pio_flags(project, board)
    # the board id reaches the C as a string: after the split, PlatformIO escapes a define's
    # quotes (piobuild.ParseFlagsExtended: '"' -> '\\"') and SCons runs the command through
    # the shell, which gives the compiler the token as it stands after the split
    token = f'-DTD_BOARD_ID="{board.id}"'
    assert token in cflags
    name, value = token[2:].split("=", 1)
    escaped = value.replace('"', '\\"')
    echoed = subprocess.run(["sh", "-c", f'printf "%s" -D{name}={escaped}'],
                            capture_output=True, text=True, check=True).stdout
    assert echoed == token
    assert "-Os" not in cflags
    fpu = "fpu" in board.features
    for flags in (cflags, ldflags):
        assert ("-mfloat-abi=hard" in flags) == fpu
        assert any(f.startswith("-mfpu=") for f in flags) == fpu
    assert "-nostartfiles" in ldflags and "-nostartfiles" not in cflags
    assert "--specs=nano.specs" in ldflags
    objs = []
    sources = sorted((project / "src").rglob("*.c"))   # PlatformIO builds all of src_dir
    for i, src in enumerate(sources):
        obj = tmp_path / f"{i}_{src.stem}.o"
        r = subprocess.run(["arm-none-eabi-gcc", *cflags, "-c", str(src), "-o", str(obj)],
                           capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, f"{src.relative_to(project)}:\n{r.stderr}"
        objs.append(str(obj))
    elf = tmp_path / "firmware.elf"
    r = subprocess.run(["arm-none-eabi-gcc", *ldflags, "-T", str(ldscript), *objs,
                        *(f"-l{lib}" for lib in libs), "-o", str(elf)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    attrs = subprocess.run(["arm-none-eabi-readelf", "-A", str(elf)], capture_output=True,
                           text=True, check=True).stdout
    assert ("Tag_ABI_VFP_args: VFP registers" in attrs) == fpu, attrs
    assert board.id.encode() in elf.read_bytes()


@pytest.mark.parametrize("board_id", PIO_BOARDS)
def test_monitor_speed_is_the_apps_rate(board_id: str, projects: dict[str, Path],
                                        tmp_path: Path) -> None:
    from tinydeploy.codegen.project import render_project
    from tinydeploy.model.loader import load_tflite
    from tinydeploy.plan.choose import choose_kernels

    board = get_board(board_id)
    cfg = project_config(projects[board_id] / "platformio.ini")
    env = f"env:{board.platformio['board']}"
    assert cfg.get(env, "monitor_speed") == board.uart.baud
    g = load_tflite(FIXTURES / "mlp.tflite")
    choice = choose_kernels(g, board, "balanced", app="kws")
    render_project(g, choice.selection, choice.plan, board, "kws", tmp_path, chip=True)
    kws = project_config(tmp_path / "platformio.ini")
    assert kws.get(env, "monitor_speed") == board.uart.baud_for("kws")
