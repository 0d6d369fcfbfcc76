"""Target harness: the host harness's program, built for an emulated Cortex-M and run on QEMU.

The golden tier runs every kernel on the host with sanitizers; this runs the very same
generated program (`harness.harness_program`: the same constants, parameter structs, calls
and inputs) compiled with the ARM toolchain for the core of a QEMU machine, with the kernel
sources at the firmware's optimisation level, and reads the outputs back over semihosting
(one hex line per output). So a kernel that is exact on the host but not on the device
(integer widths, shifts of negative values, libm differences) is caught byte for byte.

The bare-metal runtime is ``firmware/kernels/arm/test/td_dsp_test_rt.c`` (vector table,
reset, semihosting output and exit) with its linker script for mps2-an386's memory map;
the micro:bit (Cortex-M0, nRF51) has code at 0 and RAM at 0x20000000 as well, but only
256 KB and 16 KB of them, so its programs get that script with its own lengths.
"""

from __future__ import annotations

import re
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from tinydeploy.errors import ToolchainError
from tinydeploy.procs import run_tool
from tinydeploy.testing.harness import (
    FIRMWARE_DIR,
    KERNEL_INCLUDE,
    HostCase,
    harness_program,
    parse_outputs,
)
from tinydeploy.toolchain import ARM_LDLIBS, ARM_PREFIX, DEBIAN_PACKAGES, Core, cflags

TEST_RT = FIRMWARE_DIR / "kernels" / "arm" / "test"
# QEMU machines whose memory map td_dsp_test.ld describes, and their cores
MACHINES = {"mps2-an386": Core.CORTEX_M4F, "mps2-an500": Core.CORTEX_M7,
            "microbit": Core.CORTEX_M0}
# machines with less memory at the script's origins: (code, RAM) lengths
SMALL_MEMORY = {"microbit": ("256K", "16K")}

_OUT = re.compile(r"fwrite\((\w+), 1, (\d+), stdout\);")


def linker_script(machine: str, work: Path) -> Path:
    """td_dsp_test.ld, or a copy in ``work`` with the machine's memory lengths."""
    script = TEST_RT / "td_dsp_test.ld"
    if machine not in SMALL_MEMORY:
        return script
    text = script.read_text(encoding="utf-8")
    for region, length in zip(("FLASH", "RAM"), SMALL_MEMORY[machine], strict=True):
        text, n = re.subn(rf"({region} \(\w+\) *: ORIGIN = 0x\w+, LENGTH = )\w+",
                          rf"\g<1>{length}", text)
        if n != 1:
            raise ToolchainError(f"{script.name}: no {region} region to resize for {machine}")
    out = work / "test.ld"
    out.write_text(text, encoding="utf-8")
    return out


def target_program(text: str) -> str:
    """The host program's text with its output redirected to the semihosting runtime."""
    text = text.replace("#include <stdio.h>\n", "#include \"td_dsp_test_rt.h\"\n", 1)
    text = _OUT.sub(r"td_rt_put_hex(\1, \2u);", text)
    return text.replace("    fflush(stdout);\n", "    td_rt_puts(\"end\\n\");\n")


def _tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        raise ToolchainError(f"{name} not found",
                             hint=f"apt-get install {DEBIAN_PACKAGES['arm']} "
                                  f"{DEBIAN_PACKAGES['qemu']}")
    return path


def run_target(cases: Sequence[HostCase], *, machine: str = "mps2-an386", opt: str = "-O2",
               timeout: float = 300.0, keep_dir: Path | None = None
               ) -> list[list[np.ndarray]]:
    """Run every case on QEMU ``machine``; returns each case's outputs in order."""
    if machine not in MACHINES:
        raise ToolchainError(f"no target harness for QEMU machine '{machine}'",
                             hint="known: " + ", ".join(sorted(MACHINES)))
    cc = _tool(f"{ARM_PREFIX}gcc")
    qemu = _tool("qemu-system-arm")
    text, sources, layout = harness_program(cases)
    work = Path(tempfile.mkdtemp(prefix="td-target-", dir=keep_dir))
    try:
        main_c = work / "main.c"
        main_c.write_text(target_program(text), encoding="utf-8")
        elf = work / "test.elf"
        flags = cflags(MACHINES[machine], opt, stack_analysis=False)
        cmd = [cc, *flags, "-I", str(KERNEL_INCLUDE), "-I", str(TEST_RT), str(main_c),
               str(TEST_RT / "td_dsp_test_rt.c"), *(str(FIRMWARE_DIR / s) for s in sources),
               "-T", str(linker_script(machine, work)), "-nostartfiles", "-Wl,--gc-sections",
               "--specs=nano.specs", "--specs=nosys.specs", "-o", str(elf), *ARM_LDLIBS]
        proc = run_tool(cmd, "building the target harness program", timeout=timeout)
        if proc.returncode != 0:
            raise ToolchainError("building the target harness program failed:\n"
                                 + proc.stderr[-4000:])
        proc = run_tool([qemu, "-M", machine, "-nographic", "-monitor", "none", "-serial",
                         "null", "-semihosting-config", "enable=on,target=native", "-kernel",
                         str(elf)], f"QEMU {machine}", timeout=timeout)
    finally:
        if keep_dir is None:
            shutil.rmtree(work, ignore_errors=True)
    # QEMU writes the semihosting console to stderr, its own messages to stdout
    lines = (proc.stdout + proc.stderr).split()
    if proc.returncode != 0 or not lines or lines[-1] != "end":
        raise ToolchainError(f"the target harness program failed on {machine} (exit "
                             f"{proc.returncode}): {(proc.stdout + proc.stderr)[-2000:]}")
    data = b"".join(bytes.fromhex(h) for h in lines[:-1])
    return parse_outputs(cases, layout, data)
