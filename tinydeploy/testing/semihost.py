"""Run a bare-metal harness that exchanges files with the host through semihosting on QEMU.

The front-end harnesses (``frontend_harness/``: the float presets' and micro-speech's) share
this: the tools they need, and one QEMU run in a work folder that holds their input and output
files. Under ``-icount shift=0`` the harnesses' SysTick counts are exact (docs/emulation.md).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from tinydeploy.errors import ToolchainError
from tinydeploy.toolchain import DEBIAN_PACKAGES

HARNESS_DIR = Path(__file__).resolve().parent / "frontend_harness"


def need_tool(tool: str) -> None:
    """Fail with the Debian packages to install when ``tool`` is not on PATH."""
    if shutil.which(tool) is None:
        raise ToolchainError(f"'{tool}' not found; it runs the front end on an emulated board",
                             hint=f"apt-get install {DEBIAN_PACKAGES['arm']} "
                                  f"{DEBIAN_PACKAGES['qemu']}")


def run_semihosted(elf: Path, machine: str, work_dir: Path, timeout: float, what: str,
                   load: str) -> None:
    """Run ``elf`` on QEMU ``machine`` with semihosting files in ``work_dir`` until it exits;
    ``what`` (the harness) and ``load`` (how much it was given) name it in the errors."""
    cmd = ["qemu-system-arm", "-M", machine, "-icount", "shift=0", "-nographic",
           "-monitor", "none", "-serial", "null",
           "-semihosting-config", "enable=on,target=native", "-kernel", str(elf)]
    try:
        proc = subprocess.run(cmd, cwd=work_dir, capture_output=True, timeout=timeout)
    except subprocess.TimeoutExpired as err:
        raise ToolchainError(f"{what} on {machine} did not finish in {timeout:.0f} s for "
                             f"{load}") from err
    if proc.returncode != 0:
        raise ToolchainError(f"{what} on {machine} exited {proc.returncode}: "
                             f"{proc.stderr.decode(errors='replace').strip()}")
