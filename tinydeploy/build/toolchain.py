"""Compiling a firmware folder for a board without make, by the rules of `tinydeploy.toolchain`
(the same rules the generated Makefile renders, so both builds use the same flags).

`compile_firmware` compiles each source to its own object (so GCC's ``-fstack-usage`` output,
one ``.su`` file per object, stays next to it), links with the board's linker script (ARM) or
the system linker (host), and for ARM writes ``firmware.hex`` and ``firmware.bin`` beside the
ELF. `read_size` parses ``size`` (text/data/bss), `read_stack_usage` the ``.su`` files.
Invariants: the same inputs give the same command lines (sorted defines, sources in the given
order); a missing compiler raises ToolchainError naming the Debian package to install.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from tinydeploy.boards import Board
from tinydeploy.errors import ToolchainError
from tinydeploy.procs import run_tool
from tinydeploy.resources import firmware_dir
from tinydeploy.toolchain import ARM_PREFIX, DEBIAN_PACKAGES, cflags, ldflags, ldlibs

FIRMWARE = firmware_dir()


@dataclass(frozen=True)
class SizeInfo:
    """Berkeley ``size`` figures: flash = text + data, static RAM = data + bss."""

    text: int
    data: int
    bss: int

    @property
    def flash_bytes(self) -> int:
        return self.text + self.data

    @property
    def ram_bytes(self) -> int:
        return self.data + self.bss


@dataclass(frozen=True)
class StackUsage:
    """One function's frame from a ``.su`` file; ``qualifier`` is static/dynamic/bounded."""

    file: str
    function: str
    bytes: int
    qualifier: str


def _is_host(board: Board) -> bool:
    return board.is_host


def compiler(board: Board) -> str:
    """Path of the C compiler for ``board``; ToolchainError with the package if missing."""
    if _is_host(board):
        cc = os.environ.get("CC") or "gcc"
        found = shutil.which(cc) or shutil.which("cc")
        pkg = DEBIAN_PACKAGES["host"]
    else:
        found = shutil.which(ARM_PREFIX + "gcc")
        cc = ARM_PREFIX + "gcc"
        pkg = DEBIAN_PACKAGES["arm"]
    if found is None:
        raise ToolchainError(f"C compiler '{cc}' for board '{board.id}' was not found on PATH",
                             hint=f"install it: sudo apt-get install --no-install-recommends "
                                  f"{pkg}")
    return found


def _binutil(board: Board, tool: str) -> str:
    name = tool if _is_host(board) else ARM_PREFIX + tool
    found = shutil.which(name)
    if found is None:
        pkg = DEBIAN_PACKAGES["binutils" if _is_host(board) else "arm"]
        raise ToolchainError(f"'{name}' was not found on PATH",
                             hint=f"install it: sudo apt-get install {pkg}")
    return found


def _define_flags(defines: Mapping[str, str] | Iterable[str]) -> list[str]:
    if isinstance(defines, Mapping):
        items = [f"{k}={v}" if v is not None else k for k, v in defines.items()]
    else:
        items = list(defines)
    return [f"-D{d}" for d in sorted(items)]


def _object_names(sources: Sequence[Path]) -> list[str]:
    """Object file stems unique within the build, stable for the same source list."""
    seen: dict[str, int] = {}
    names = []
    for s in sources:
        stem = s.stem
        n = seen.get(stem, 0)
        seen[stem] = n + 1
        names.append(stem if n == 0 else f"{stem}_{n}")
    return names


def _run(cmd: list[str], what: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    r = run_tool(cmd, what, cwd=cwd, timeout=300)
    if r.returncode != 0:
        tail = "\n".join((r.stdout + r.stderr).strip().splitlines()[-20:])
        raise ToolchainError(f"{what} failed (exit {r.returncode}):\n{tail}")
    return r


def compile_firmware(sources: Sequence[Path | str], include_dirs: Sequence[Path | str],
                     defines: Mapping[str, str] | Iterable[str], board: Board, out_dir: Path,
                     linker_script: Path | None, opt: str = "-O2", sanitize: bool = False,
                     extra_cflags: Sequence[str] = ()) -> Path:
    """Compile and link ``sources`` into ``out_dir/firmware.elf`` (plus .hex/.bin on ARM).

    ``linker_script`` is required for Cortex-M boards and ignored for the host. Objects and
    ``.su`` files go to ``out_dir/obj``. ``sanitize`` (host only) adds AddressSanitizer and
    UndefinedBehaviorSanitizer.
    """
    host = _is_host(board)
    if sanitize and not host:
        raise ToolchainError(f"sanitizers need the host board, not '{board.id}'")
    if not host and linker_script is None:
        raise ToolchainError(f"board '{board.id}' needs a linker script",
                             hint="tinydeploy.codegen.linker.render_linker_script(board)")
    cc = compiler(board)
    srcs = [Path(s).resolve() for s in sources]
    for s in srcs:
        if not s.is_file():
            raise ToolchainError(f"firmware source {s} does not exist")
    out_dir = Path(out_dir)
    obj_dir = out_dir / "obj"
    obj_dir.mkdir(parents=True, exist_ok=True)
    flags = [*cflags(board.core, opt, sanitize=sanitize, extra=tuple(extra_cflags)),
             *_define_flags(defines), *(f"-I{Path(i).resolve()}" for i in include_dirs)]

    objects = [obj_dir / f"{n}.o" for n in _object_names(srcs)]

    def compile_one(pair: tuple[Path, Path]) -> None:
        src, obj = pair
        _run([cc, *flags, "-c", str(src), "-o", str(obj)], f"compiling {src.name}",
             cwd=obj_dir)

    with ThreadPoolExecutor(max_workers=2) as pool:
        list(pool.map(compile_one, zip(srcs, objects, strict=True)))

    elf = out_dir / "firmware.elf"
    tmp = out_dir / "firmware.elf.tmp"   # renamed when complete: never a half-written ELF
    script = str(Path(linker_script).resolve()) if linker_script is not None and not host \
        else None
    link = [cc, *ldflags(board.core, script,
                         None if host else str(out_dir / "firmware.map.tmp"), sanitize=sanitize),
            *map(str, objects), *ldlibs(board.core), "-o", str(tmp)]
    _run(link, f"linking {elf.name} for board '{board.id}'")
    if not host:
        os.replace(out_dir / "firmware.map.tmp", out_dir / "firmware.map")
    os.replace(tmp, elf)
    if not host:
        objcopy(elf, board)
    return elf


def objcopy(elf: Path, board: Board) -> tuple[Path, Path]:
    """Write ``firmware.hex`` (Intel HEX) and ``firmware.bin`` next to ``elf``."""
    tool = _binutil(board, "objcopy")
    hex_path, bin_path = elf.with_suffix(".hex"), elf.with_suffix(".bin")
    for fmt, path in (("ihex", hex_path), ("binary", bin_path)):
        tmp = path.with_name(path.name + ".tmp")
        _run([tool, "-O", fmt, str(elf), str(tmp)], f"objcopy to {path.name}")
        os.replace(tmp, path)
    return hex_path, bin_path


def read_size(elf: Path, board: Board) -> SizeInfo:
    """text/data/bss of ``elf`` from Berkeley-format ``size``."""
    r = _run([_binutil(board, "size"), "-B", str(elf)], f"size of {elf.name}")
    lines = r.stdout.strip().splitlines()
    try:
        text, data, bss = (int(x) for x in lines[1].split()[:3])
    except (IndexError, ValueError):
        raise ToolchainError(f"cannot parse the output of size for {elf}: {r.stdout!r}") from None
    return SizeInfo(text, data, bss)


def read_stack_usage(obj_dir: Path) -> tuple[StackUsage, ...]:
    """Every function frame from the ``.su`` files in ``obj_dir``, largest first."""
    out = []
    for su in sorted(Path(obj_dir).glob("*.su")):
        for line in su.read_text(encoding="utf-8", errors="replace").splitlines():
            parts = line.rsplit("\t", 2)
            if len(parts) != 3 or not parts[1].isdigit():
                continue
            loc, size, qual = parts
            func = loc.rsplit(":", 1)[-1]
            out.append(StackUsage(su.stem, func, int(size), qual.strip()))
    return tuple(sorted(out, key=lambda s: (-s.bytes, s.file, s.function)))


def platform_sources(board: Board) -> tuple[list[Path], list[Path]]:
    """The platform layer of ``board``'s family: (C sources, include directories)."""
    plat = FIRMWARE / "platform"
    dirs = [plat / board.family] + ([] if _is_host(board) else [plat / "cortexm"])
    sources = sorted(p for d in [plat, *dirs] for p in d.glob("*.c"))
    return sources, [plat, *dirs]


def firmware_parts(board: Board, app: str, model_dir: Path) -> tuple[list[Path], list[Path]]:
    """Sources and include dirs of an app with the protocol library, the platform layer and
    the model in ``model_dir`` (a generated one, or the stub under tests/fixtures)."""
    app_dir = FIRMWARE / "app" / app
    if not app_dir.is_dir():
        raise ToolchainError(f"no firmware app '{app}' in {FIRMWARE / 'app'}")
    psrc, pinc = platform_sources(board)
    link = FIRMWARE / "link"
    sources = [*sorted(app_dir.glob("*.c")), *sorted(link.glob("*.c")),
               *sorted(Path(model_dir).glob("*.c")), *psrc]
    return sources, [*pinc, link, app_dir, Path(model_dir)]
