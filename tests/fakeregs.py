"""Run C driver code on the host against the fake register block of tests/fakeregs/.

A chip driver written with ``td_reg_read``/``td_reg_write`` (firmware/platform/cortexm/
td_cortexm.h) is compiled for the host with ``-DTD_FAKE_REGS=1`` together with
``tests/fakeregs/td_fake_regs.c`` and a test program (a ``main`` that installs a chip model,
pokes the initial state and calls the driver; ``nrf5_chip.c`` and ``stm32f4_chip.c`` are
examples). `run_fake` builds and runs it and returns the accesses in order, so a test can
check them against the sequence the reference manual requires::

    log = run_fake([PLATFORM / "nrf5" / "td_platform_nrf5.c"], "nrf5_chip.c", defines,
                   tmp_path)
    assert log.index_write(CLOCK_HFCLKSTART) < log.index_write(UART_ENABLE)

A peripheral driver (e.g. a microphone's) is tested the same way: its sources, a program of
its own with a model of the peripheral's events, and the same helpers.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FAKE = Path(__file__).resolve().parent / "fakeregs"
PLATFORM = ROOT / "firmware" / "platform"
INCLUDES = (FAKE, PLATFORM, PLATFORM / "cortexm")


@dataclass(frozen=True)
class Access:
    op: str          # "W" write, "R" read, "M" marker
    addr: int = 0
    value: int = 0
    label: str = ""


@dataclass(frozen=True)
class Log:
    accesses: tuple[Access, ...]
    returncode: int
    text: str

    def writes(self, addr: int) -> list[int]:
        """The values written to ``addr``, in order."""
        return [a.value for a in self.accesses if a.op == "W" and a.addr == addr]

    def touched(self, lo: int, hi: int) -> list[Access]:
        """Reads and writes of addresses in [lo, hi)."""
        return [a for a in self.accesses if a.op in "RW" and lo <= a.addr < hi]

    def index_write(self, addr: int, value: int | None = None, mask: int = 0xFFFFFFFF,
                    after: int = -1) -> int:
        """Position of the first write to ``addr`` after position ``after`` (whose value &
        ``mask`` equals ``value`` when given); AssertionError naming the register if none."""
        for i, a in enumerate(self.accesses):
            if i <= after:
                continue
            if a.op == "W" and a.addr == addr and (value is None or a.value & mask == value):
                return i
        want = "" if value is None else f" of {value:#x} (mask {mask:#x})"
        raise AssertionError(f"no write{want} to {addr:#010x} in the log:\n{self.text}")

    def index_read(self, addr: int) -> int:
        for i, a in enumerate(self.accesses):
            if a.op == "R" and a.addr == addr:
                return i
        raise AssertionError(f"no read of {addr:#010x} in the log:\n{self.text}")

    def index_mark(self, label: str) -> int:
        for i, a in enumerate(self.accesses):
            if a.op == "M" and a.label == label:
                return i
        raise AssertionError(f"no marker '{label}' in the log:\n{self.text}")

    def between(self, first: str, last: str) -> list[Access]:
        """The accesses between two markers."""
        return list(self.accesses[self.index_mark(first) + 1:self.index_mark(last)])

    def marks(self) -> list[str]:
        return [a.label for a in self.accesses if a.op == "M"]


def parse_log(text: str, returncode: int) -> Log:
    out = []
    for line in text.splitlines():
        head, _, rest = line.partition(" ")
        if head in ("W", "R"):
            addr, value = rest.split()
            out.append(Access(head, int(addr, 16), int(value, 16)))
        elif head in ("M", "STUCK", "FULL"):
            out.append(Access("M", label=line if head != "M" else rest))
    return Log(tuple(out), returncode, text)


def compiler() -> str:
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no host C compiler (cc) for the fake-register tests")
    return cc


def run_fake(sources: Iterable[Path], program: str | Path, defines: Sequence[str],
             tmp_path: Path, args: Sequence[str] = (), name: str = "fake") -> Log:
    """Compile ``sources`` + the fake block + ``program`` (a file name in tests/fakeregs or a
    path) for the host with ``defines`` (``NAME=value`` strings, e.g. `board_defines`), run
    it with ``args`` and return its log. A compile error fails the test with the compiler's
    output; a driver stuck in a polling loop leaves a ``STUCK`` marker and returncode 3."""
    prog = Path(program) if Path(program).is_absolute() else FAKE / program
    exe = tmp_path / name
    cmd = [compiler(), "-std=c99", "-Wall", "-Wextra", "-Werror", "-Wno-unused-parameter",
           "-DTD_FAKE_REGS=1", *(f"-D{d}" for d in defines),
           *(f"-I{i}" for i in INCLUDES), *(str(s) for s in sources),
           str(FAKE / "td_fake_regs.c"), str(prog), "-o", str(exe)]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, f"compiling {prog.name} failed:\n{' '.join(cmd)}\n{r.stderr}"
    run = subprocess.run([str(exe), *args], capture_output=True, text=True, timeout=60)
    return parse_log(run.stdout, run.returncode)
