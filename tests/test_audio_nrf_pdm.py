"""The nRF52840 PDM microphone driver (firmware/audio/nrf_pdm), which has NOT run on hardware:
built with warnings as errors for the Arduino Nano 33 BLE Sense, and run on the host against
a fake register block that records every access (tests/fixtures/fakeregs/pdm_harness.c),
checked against the order the nRF52840 Product Specification requires (v1.7: 6.11 PDM, 6.4
CLOCK, 6.9 GPIO)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tinydeploy.boards import get_board
from tinydeploy.codegen.platform import board_defines
from tinydeploy.resources import firmware_dir
from tinydeploy.toolchain import core_flags

HARNESS = Path(__file__).parent / "fixtures" / "fakeregs" / "pdm_harness.c"
DRIVER = firmware_dir() / "audio" / "nrf_pdm" / "td_audio_nrf_pdm.c"
PDM = 0x4001D000
REG = {"START": PDM, "STOP": PDM + 0x004, "STARTED": PDM + 0x100, "STOPPED": PDM + 0x104,
       "END": PDM + 0x108, "INTENSET": PDM + 0x304, "INTENCLR": PDM + 0x308,
       "ENABLE": PDM + 0x500, "PDMCLKCTRL": PDM + 0x504, "MODE": PDM + 0x508,
       "GAINL": PDM + 0x518, "GAINR": PDM + 0x51C, "RATIO": PDM + 0x520,
       "PSEL_CLK": PDM + 0x540, "PSEL_DIN": PDM + 0x544, "PTR": PDM + 0x560,
       "MAXCNT": PDM + 0x564, "HFCLKSTART": 0x40000000, "HFCLKSTARTED": 0x40000100,
       "ISER0": 0xE000E100, "ICER0": 0xE000E180,
       "P0_OUTSET": 0x50000508, "P0_CNF17": 0x50000700 + 4 * 17,
       "P0_CNF26": 0x50000700 + 4 * 26, "P0_CNF25": 0x50000700 + 4 * 25}


@pytest.fixture(scope="module")
def harness(tmp_path_factory: pytest.TempPathFactory) -> Path:
    cc = shutil.which("cc") or shutil.which("gcc")
    assert cc, "a host C compiler is needed"
    exe = tmp_path_factory.mktemp("pdm") / "pdm_harness"
    defs = ["-DTD_AUDIO_FAKE_REGS", "-DTD_AUDIO_CLK_PIN=26u", "-DTD_AUDIO_DIN_PIN=25u",
            "-DTD_AUDIO_POWER_PIN=17u", "-DTD_AUDIO_GAIN=0x28u", "-DTD_AUDIO_DISCARD_MS=0u",
            "-DTD_AUDIO_POWER_ON_MS=0u", "-DTD_CLOCK_HZ=64000000u"]
    subprocess.run([cc, "-std=c99", "-Wall", "-Wextra", "-Werror", "-O1", *defs,
                    f"-I{firmware_dir() / 'audio'}", str(HARNESS), str(DRIVER),
                    str(firmware_dir() / "audio" / "td_audio_slots.c"), "-o", str(exe)],
                   check=True, capture_output=True, text=True, timeout=60)
    return exe


def _run(exe: Path, scenario: str) -> list[tuple[str, ...]]:
    out = subprocess.run([str(exe), scenario], capture_output=True, text=True, timeout=30,
                         check=True).stdout
    return [tuple(line.split()) for line in out.splitlines()]


def _writes(log: list[tuple[str, ...]]) -> list[tuple[int, int]]:
    return [(int(e[1], 16), int(e[2], 16)) for e in log if e[0] == "W"]


def _first(writes: list[tuple[int, int]], addr: int, value: int | None = None) -> int:
    return next(i for i, (a, v) in enumerate(writes) if a == addr and (value is None or
                                                                       v == value))


def test_driver_builds_for_the_nano_33_ble_sense_with_warnings_as_errors(tmp_path: Path
                                                                         ) -> None:
    cc = shutil.which("arm-none-eabi-gcc")
    assert cc, "arm-none-eabi-gcc is needed (scripts/setup.sh installs it)"
    board = get_board("arduino-nano33ble-sense")
    defs = [f"-D{d}" for d in board_defines(board, "kws")]
    proc = subprocess.run([cc, *core_flags(board.core), "-std=c99", "-O2", "-Wall", "-Wextra",
                           "-Werror", "-Wpedantic", *defs,
                           f"-I{firmware_dir() / 'audio'}",
                           f"-I{firmware_dir() / 'platform' / 'cortexm'}",
                           "-c", str(DRIVER), "-o", str(tmp_path / "pdm.o")],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr[-2000:]
    nm = subprocess.run(["arm-none-eabi-nm", str(tmp_path / "pdm.o")], capture_output=True,
                        text=True, check=True).stdout
    assert " T td_irq_29" in nm           # the PDM's interrupt (nRF52840 IRQ 29)


def test_start_sequence_follows_the_product_specification(harness: Path) -> None:
    log = _run(harness, "start")
    ring = int(next(e for e in log if e[0] == "RING")[1], 16)
    w = _writes(log[:log.index(("STARTED-UP",))])
    # the crystal first (it does not run yet), and waited for
    assert ("R", "4000040c", "00000000") in log
    assert w[0] == (REG["HFCLKSTARTED"], 0) and w[1] == (REG["HFCLKSTART"], 1)
    assert ("R", f"{REG['HFCLKSTARTED']:08x}", "00000001") in log
    # microphone power (P0.17 high, output) before the PDM pins are selected
    assert _first(w, REG["P0_OUTSET"], 1 << 17) < _first(w, REG["PSEL_CLK"])
    assert _first(w, REG["P0_CNF17"], 1) < _first(w, REG["PSEL_CLK"])
    # CLK an output, DIN an input without pull, before PSEL
    assert _first(w, REG["P0_CNF26"], 1) < _first(w, REG["PSEL_CLK"], 26)
    assert _first(w, REG["P0_CNF25"], 0) < _first(w, REG["PSEL_DIN"], 25)
    enable, start = _first(w, REG["ENABLE"], 1), _first(w, REG["START"], 1)
    assert enable < start == len(w) - 1           # START is the last thing start-up does
    for name, value in (("PSEL_CLK", 26), ("PSEL_DIN", 25), ("PDMCLKCTRL", 0x0A000000),
                        ("RATIO", 1), ("MODE", 1), ("GAINL", 0x28), ("GAINR", 0x28),
                        ("PTR", ring), ("MAXCNT", 320), ("INTENSET", 0b111),
                        ("ISER0", 1 << 29)):
        assert _first(w, REG[name], value) < enable, name     # 1.280 MHz / 80 = 16 kHz
    # events cleared before interrupts are enabled
    for ev in ("STARTED", "STOPPED", "END"):
        assert _first(w, REG[ev], 0) < _first(w, REG["INTENSET"])


def test_a_running_crystal_is_not_started_again(harness: Path) -> None:
    log = _run(harness, "xtal-running")
    w = _writes(log[:log.index(("STARTED-UP",))])
    assert ("R", "4000040c", "00010001") in log
    assert all(a not in (REG["HFCLKSTART"], REG["HFCLKSTARTED"]) for a, _ in w)
    assert w[-1] == (REG["START"], 1)


def test_each_started_arms_the_next_slot_and_each_end_delivers_a_block(harness: Path) -> None:
    log = _run(harness, "swap")
    ring = int(next(e for e in log if e[0] == "RING")[1], 16)
    ptrs = [int(e[2], 16) for e in log if e[0] == "W" and int(e[1], 16) == REG["PTR"]]
    slots = [((p - ring) % 2**32) // (320 * 2) for p in ptrs]
    # start-up arms slot 0; every STARTED writes the next pointer: 1, 2, 3, 0, 1, ...
    assert slots == [k % 4 for k in range(len(slots))] and len(slots) == 8
    takes = [(int(e[1]), int(e[2])) for e in log if e[0] == "TAKE"]
    assert takes == [(k, k % 4) for k in range(6)]    # in order, numbered as heard
    # the pointer write answers STARTED (written in the same interrupt, after its clear)
    for i, e in enumerate(log):
        if e[0] == "EVENT" and int(e[1], 16) == REG["STARTED"]:
            later = [x for x in log[i + 1:] if x[0] == "W"]
            assert later[0] == ("W", f"{REG['STARTED']:08x}", "00000000")
            assert int(later[1][1], 16) == REG["PTR"]


def test_overrun_is_counted_and_never_writes_a_slot_the_app_holds(harness: Path) -> None:
    log = _run(harness, "overrun")
    ring = int(next(e for e in log if e[0] == "RING")[1], 16)
    held: set[int] = set()
    for e in log:
        if e[0] == "TAKE":
            held.add(int(e[2]))
        if e[0] == "W" and int(e[1], 16) == REG["PTR"]:
            slot = ((int(e[2], 16) - ring) % 2**32) // 640
            assert slot not in held, "armed a slot the app holds"
    takes = [int(e[1]) for e in log if e[0] == "TAKE"]
    overruns = int(next(e for e in log if e[0] == "OVERRUNS")[1])
    # 4 slots: the app ends up holding 3 blocks; every later block is dropped and counted
    assert len(takes) == 3 and takes == sorted(takes)
    assert overruns == (8 - len(takes)) * 320


def test_stop_disables_the_interrupt_then_stops_then_disables(harness: Path) -> None:
    log = _run(harness, "stop")
    w = _writes(log[log.index(("STARTED-UP",)):])
    order = [_first(w, REG["INTENCLR"]), _first(w, REG["ICER0"], 1 << 29),
             _first(w, REG["STOP"], 1), _first(w, REG["STOPPED"], 0),
             _first(w, REG["ENABLE"], 0)]
    assert order == sorted(order) and w[-2] == (REG["ENABLE"], 0)
    assert w[-1] == (0x5000050C, 1 << 17)          # then the microphone's power off (OUTCLR)
    assert ("R", f"{REG['STOPPED']:08x}", "00000001") in log      # waited for STOPPED


def test_wait_sleeps_only_when_no_block_is_ready(harness: Path) -> None:
    log = _run(harness, "wait")
    i = log.index(("DONE-WAIT",))
    assert [e for e in log[:i] if e == ("WFI",)] == [("WFI",)]
