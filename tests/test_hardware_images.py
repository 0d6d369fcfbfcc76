"""Image checks of the builds meant for the chip, every real board (nrf5, stm32f4) and app:
no semihosting instruction (without a debugger `bkpt 0xab` HardFaults and locks the core),
the vector table at the flash origin with the chip's alignment and interrupt count, the FPU
enabled before the first floating-point instruction can run, the image inside the board's
flash and RAM. The validate app runs by default, the other apps with --sweep."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tinydeploy.boards import Board, get_board, list_boards
from tinydeploy.build.firmware import build_firmware
from tinydeploy.codegen.platform import has_chip_build
from tinydeploy.errors import BudgetError
from tinydeploy.resources import models_dir

FIXTURES = Path(__file__).parent / "fixtures"
REAL_BOARDS = sorted(b.id for b in list_boards() if has_chip_build(b))
# External interrupts per chip, from the vendors' device headers (last IRQn + 1): nrfx
# nrf51.h (26 used; Nordic's start-up reserves 32), nrf52840.h (SPIM3_IRQn = 47),
# STM32CubeF4 stm32f401xe.h (SPI4_IRQn = 84), stm32f405xx.h / stm32f407xx.h (FPU_IRQn = 81)
IRQS = {"nRF51822": 32, "nRF52840": 48, "STM32F401RE": 85, "STM32F405RG": 82,
        "STM32F407VG": 82}
ALIGN = {"nRF51822": 256, "nRF52840": 256, "STM32F401RE": 512, "STM32F405RG": 512,
         "STM32F407VG": 512}
CPACR = 0xE000ED88


def test_real_boards_are_the_chip_families() -> None:
    assert set(REAL_BOARDS) >= {"microbit-v1", "nrf52840dk", "arduino-nano33ble",
                                "nucleo-f401re", "disco-f407vg", "netduinoplus2"}
    assert {get_board(b).mcu for b in REAL_BOARDS} <= set(IRQS)


def build(board: Board, app: str, out: Path) -> Path:
    if shutil.which("arm-none-eabi-gcc") is None:
        pytest.skip("arm-none-eabi-gcc is not installed")
    try:
        if app == "kws":
            from tinydeploy.frontend.config import FrontendConfig
            from tinydeploy.kws.device import build_kws_firmware
            from tinydeploy.kws.stream import DetectorConfig

            kws = models_dir() / "kws"
            build_kws_firmware(kws / "dscnn_int8.tflite", board, out, DetectorConfig(),
                               FrontendConfig.load(kws / "frontend.json"), chip=True)
        else:
            model = FIXTURES / ("dscnn_small.tflite" if app == "eembc" else "mlp.tflite")
            build_firmware(model, board, app, out, chip=True)
    except BudgetError as e:
        if board.ram_bytes <= 16 * 1024:
            pytest.skip(f"the {app} app does not fit {board.id}: {e.message}")
        raise
    import json

    assert json.loads((out / "manifest.json").read_text())["variant"] == "chip"
    return out / "firmware.elf"


def disassembly(elf: Path) -> str:
    return subprocess.run(["arm-none-eabi-objdump", "-d", str(elf)], capture_output=True,
                          text=True, check=True).stdout


def symbols(elf: Path) -> dict[str, tuple[int, int]]:
    out = subprocess.run(["arm-none-eabi-nm", "-S", str(elf)], capture_output=True, text=True,
                         check=True).stdout
    syms = {}
    for line in out.splitlines():
        p = line.split()
        if len(p) == 4:
            syms[p[3]] = (int(p[0], 16), int(p[1], 16))
    return syms


def function(dis: str, name: str) -> list[str]:
    m = re.search(rf"^[0-9a-f]+ <{re.escape(name)}>:\n(.*?)(?:\n\n|\Z)", dis, re.S | re.M)
    assert m, f"{name} not in the image"
    return m.group(1).splitlines()


def is_vfp(line: str) -> bool:
    parts = line.split("\t")
    return len(parts) >= 3 and re.match(r"v[a-z]", parts[2].strip()) is not None


def check_image(board: Board, elf: Path) -> None:
    dis = disassembly(elf)
    # 1. no semihosting
    assert not re.search(r"\bbkpt\s+0x00ab\b", dis, re.I), "semihosting bkpt 0xab in image"
    assert not re.search(r"\bbkpt\b", dis), "a breakpoint instruction in the image"
    # 2. the vector table
    flash, ram = board.region("flash"), board.region("ram")
    syms = symbols(elf)
    addr, size = syms["td_vector_table"]
    assert addr == flash.origin
    assert addr % ALIGN[board.mcu] == 0
    assert size == 4 * (16 + IRQS[board.mcu])
    raw = elf.with_suffix(".vectors")
    subprocess.run(["arm-none-eabi-objcopy", "-O", "binary", "-j", ".isr_vector", str(elf),
                    str(raw)], check=True)
    blob = raw.read_bytes()
    words = [int.from_bytes(blob[i:i + 4], "little") for i in range(0, len(blob), 4)]
    assert len(words) == 16 + IRQS[board.mcu]
    assert ram.origin < words[0] <= ram.origin + ram.size          # initial SP in RAM
    assert words[1] == syms["Reset_Handler"][0] | 1                 # Thumb reset vector
    assert all(w == syms["td_fault_entry"][0] | 1 for w in words[16:])
    # 3. the FPU before the first floating-point instruction
    reset = function(dis, "Reset_Handler")
    if "fpu" in board.features:
        # the store to CPACR: its address as a literal, or as SCS base 0xe000e000 + 0xd88
        pool = {int(m.group(1), 16): int(m.group(2), 16) for line in reset
                if (m := re.match(r"\s*([0-9a-f]+):\s+[0-9a-f]+\s+\.word\s+0x([0-9a-f]+)",
                                  line))}
        lit = [f"@ ({a:x}" for a, v in pool.items() if v == CPACR]
        stores = [i for i, line in enumerate(reset) if "\tstr" in line and (
            re.search(r"#3464\]", line) or any(
                any(t in prev for t in lit) for prev in reset[max(0, i - 4):i]))]
        assert stores, "Reset_Handler does not write CPACR"
        store = stores[0]
        calls = [i for i, line in enumerate(reset) if re.search(r"\tbl[x]?\s", line)]
        assert all(i > store for i in calls), "a call before the FPU is enabled"
        assert not any(is_vfp(line) for line in reset[:store]), "FP code before CPACR"
    else:
        assert not [line for line in dis.splitlines() if is_vfp(line)], "FP code, no FPU"
    # 4. inside the board's flash and RAM
    heads = subprocess.run(["arm-none-eabi-objdump", "-h", "-w", str(elf)],
                           capture_output=True, text=True, check=True).stdout
    for line in heads.splitlines():
        p = line.split()
        if len(p) < 7 or not p[0].isdigit() or "ALLOC" not in line:
            continue
        name, sz, vma, lma = p[1], int(p[2], 16), int(p[3], 16), int(p[4], 16)
        if sz == 0:
            continue
        if "LOAD" in line:
            assert flash.origin <= lma and lma + sz <= flash.origin + flash.size, name
        if not (flash.origin <= vma < flash.origin + flash.size):
            assert ram.origin <= vma and vma + sz <= ram.origin + ram.size, name


@pytest.mark.parametrize("board_id", REAL_BOARDS)
def test_validate_image(board_id: str, tmp_path: Path) -> None:
    board = get_board(board_id)
    check_image(board, build(board, "validate", tmp_path))


@pytest.mark.slow
@pytest.mark.parametrize("app", ["bench", "eembc", "kws"])
@pytest.mark.parametrize("board_id", REAL_BOARDS)
def test_app_images(board_id: str, app: str, tmp_path: Path) -> None:
    board = get_board(board_id)
    check_image(board, build(board, app, tmp_path))


def test_emulator_build_is_the_one_with_semihosting(tmp_path: Path) -> None:
    """The check above can fail: the micro:bit's emulator build has the bkpt."""
    if shutil.which("arm-none-eabi-gcc") is None:
        pytest.skip("arm-none-eabi-gcc is not installed")
    build_firmware(FIXTURES / "mlp.tflite", get_board("microbit-v1"), "validate", tmp_path)
    assert re.search(r"\bbkpt\s+0x00ab\b", disassembly(tmp_path / "firmware.elf"), re.I)


@pytest.mark.parametrize("board_id", ["microbit-v1", "netduinoplus2"])
def test_cli_build_is_for_the_chip_and_qemu_refuses_it(board_id: str, tmp_path: Path) -> None:
    """`tinydeploy build --board X` builds for the chip even where QEMU models the board; the
    QEMU runner refuses that build instead of hanging on a crystal it does not model."""
    import sys

    if shutil.which("arm-none-eabi-gcc") is None:
        pytest.skip("arm-none-eabi-gcc is not installed")
    out = tmp_path / "fw"
    r = subprocess.run([sys.executable, "-m", "tinydeploy", "build", str(FIXTURES / "mlp.tflite"),
                        "--board", board_id, "-o", str(out), "--json"],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    assert not re.search(r"\bbkpt\b", disassembly(out / "firmware.elf"))
    r = subprocess.run([sys.executable, "-m", "tinydeploy", "flash", str(out), "--timeout", "5"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert "built for the" in r.stderr and "--emulate" in r.stderr
