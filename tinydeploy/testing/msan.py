"""MemorySanitizer builds of the host firmware (the sanitizer tier's third tool).

AddressSanitizer and UBSan come with gcc (``build_firmware(..., sanitize=True)``);
MemorySanitizer exists only in clang, and finds what they cannot: a kernel that computes with
a byte nobody wrote (an uninitialised scratch or arena byte reaching a result or a branch).
`build_msan` takes a project folder rendered for the ``host`` board (its Makefile has the
sources, defines and include folders) and builds its ``firmware.elf`` again with clang,
``-fsanitize=memory`` and origin tracking; the gcc-only stack-analysis flags are left out.
Every object of the program is instrumented; the C library is not, which MSan handles with
its interceptors (read, write, memcpy, ...) — the host firmware calls nothing else.

Debian: ``apt-get install clang libclang-rt-14-dev`` (scripts/setup.sh installs both).
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from tinydeploy.errors import ToolchainError
from tinydeploy.procs import run_tool

MSAN_CFLAGS: tuple[str, ...] = ("-O1", "-g", "-std=c99", "-fsanitize=memory",
                                "-fsanitize-memory-track-origins=2", "-fno-omit-frame-pointer",
                                "-ffp-contract=off", "-Wno-unused-command-line-argument")
MSAN_LDFLAGS: tuple[str, ...] = ("-fsanitize=memory",)
MSAN_OPTIONS = "halt_on_error=1:print_stats=0"
REPORT = "MemorySanitizer"

_PROBE = b"""#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
    int *p = malloc(4 * sizeof *p);
    (void)argv;
    if (p[argc])            /* an uninitialised int decides a branch: MSan must report it */
        puts("set");
    return 0;
}
"""


def clang() -> str | None:
    return shutil.which("clang")


def msan_unavailable() -> str | None:
    """None when clang builds and runs an MSan program here and MSan reports a planted
    uninitialised read; else what is missing, with the Debian packages that provide it."""
    cc = clang()
    if cc is None:
        return "clang is not installed (apt-get install clang libclang-rt-14-dev)"
    with tempfile.TemporaryDirectory(prefix="td-msan-probe-") as d:
        src, exe = Path(d) / "probe.c", Path(d) / "probe"
        src.write_bytes(_PROBE)
        r = run_tool([cc, *MSAN_CFLAGS, str(src), "-o", str(exe)], "clang (MSan probe)",
                     timeout=120)
        if r.returncode != 0:
            return ("clang cannot link a -fsanitize=memory program (the MSan runtime "
                    "libclang_rt.msan is missing: apt-get install libclang-rt-14-dev): "
                    + r.stderr.strip()[-300:])
        r = run_tool([str(exe)], "the MSan probe", timeout=60,
                     env={"MSAN_OPTIONS": MSAN_OPTIONS, "PATH": "/usr/bin:/bin"})
        if REPORT not in r.stderr:
            return "MemorySanitizer did not report the probe's uninitialised read"
    return None


def build_msan(project_dir: Path, jobs: int = 2) -> Path:
    """Rebuild ``project_dir``'s firmware.elf (a host-board project) with clang and
    MemorySanitizer; returns the ELF. Raises ToolchainError naming what failed."""
    cc = clang()
    if cc is None:
        raise ToolchainError("MemorySanitizer needs clang",
                             hint="apt-get install clang libclang-rt-14-dev")
    project_dir = Path(project_dir)
    mk = (project_dir / "Makefile").read_text(encoding="utf-8")
    if "CC ?= cc" not in mk:
        raise ToolchainError(f"{project_dir} is not a host-board project: MSan runs on the "
                             "host only")
    shutil.rmtree(project_dir / "obj", ignore_errors=True)
    (project_dir / "firmware.elf").unlink(missing_ok=True)
    # command-line variables override the Makefile's; $(DEFS) $(INCS) are its own
    cflags = " ".join(MSAN_CFLAGS) + " $(DEFS) $(INCS)"
    r = run_tool(["make", "-C", str(project_dir), f"-j{jobs}", f"CC={cc}", f"CFLAGS={cflags}",
                  f"LDFLAGS={' '.join(MSAN_LDFLAGS)}"], f"building {project_dir} with MSan",
                 timeout=900)
    if r.returncode != 0:
        tail = "\n".join((r.stdout + r.stderr).strip().splitlines()[-25:])
        raise ToolchainError(f"the MSan build of {project_dir} failed (exit "
                             f"{r.returncode}):\n{tail}")
    return project_dir / "firmware.elf"
