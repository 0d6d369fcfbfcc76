"""Platform layers, linker script and toolchain: every board's firmware builds and links
against its real memory map; the link fails loudly when the stack cannot fit."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tinydeploy.boards import get_board, list_boards
from tinydeploy.build import toolchain
from tinydeploy.build.toolchain import read_size, read_stack_usage
from tinydeploy.codegen.linker import render_linker_script
from tinydeploy.errors import BoardError, ToolchainError
from tinydeploy.resources import firmware_dir

sys.path.insert(0, str(Path(__file__).parent / "fixtures" / "stub_model"))
from stubfw import build_stub  # noqa: E402

ARM_BOARDS = ["mps2-an386", "mps2-an500", "mps3-an547", "netduinoplus2", "microbit-v1",
              "nrf52840dk", "nucleo-f401re"]


def _symbols(elf: Path) -> dict[str, int]:
    out = subprocess.run(["arm-none-eabi-nm", str(elf)], capture_output=True, text=True,
                         check=True).stdout
    syms = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3:
            syms[parts[2]] = int(parts[0], 16)
    return syms


def test_linker_script_uses_board_regions() -> None:
    for board in list_boards():
        if board.family == "host":
            continue
        text = render_linker_script(board, 1024)
        flash, ram = board.region("flash"), board.region("ram")
        assert f"ORIGIN = 0x{flash.origin:08X}, LENGTH = {flash.size}" in text
        assert f"ORIGIN = 0x{ram.origin:08X}, LENGTH = {ram.size}" in text
        assert "__stack_size__ = 1024;" in text
        assert text == render_linker_script(board, 1024)  # reproducible


def test_linker_script_rejects_bad_stack() -> None:
    with pytest.raises(BoardError, match="multiple of 8"):
        render_linker_script(get_board("microbit-v1"), 1001)
    with pytest.raises(BoardError, match="does not fit"):
        render_linker_script(get_board("microbit-v1"), 16384)
    with pytest.raises(BoardError, match="host"):
        render_linker_script(get_board("host"), 1024)


@pytest.mark.target
@pytest.mark.parametrize("board_id", ARM_BOARDS)
def test_firmware_links_into_board_memory(board_id: str, tmp_path: Path) -> None:
    board = get_board(board_id)
    fw = build_stub(board, "validate", tmp_path)
    flash, ram = board.region("flash"), board.region("ram")
    syms = _symbols(fw.elf)
    vt = syms["td_vector_table"]
    assert vt == flash.origin, f"vector table at {vt:#x}, flash starts at {flash.origin:#x}"
    # stack first in RAM, then .data/.bss, all inside the region
    assert syms["__stack_limit__"] == ram.origin
    assert syms["__stack_top__"] == ram.origin + 2048
    assert ram.origin <= syms["__bss_end__"] <= ram.origin + ram.size
    # the first word of the image is the initial stack pointer, the second the reset vector
    image = fw.bin.read_bytes() if fw.bin else b""
    sp, reset = int.from_bytes(image[0:4], "little"), int.from_bytes(image[4:8], "little")
    assert sp == syms["__stack_top__"]
    assert reset & ~1 == syms["Reset_Handler"] and reset & 1  # Thumb bit
    size = read_size(fw.elf, board)
    assert 0 < size.text < flash.size and size.bss >= 2048
    assert fw.hex is not None and fw.hex.read_text().startswith(":")
    frames = read_stack_usage(tmp_path / "obj")
    assert frames and all(f.bytes >= 0 for f in frames)
    assert frames[0].bytes == max(f.bytes for f in frames)


@pytest.mark.target
def test_stack_too_large_for_ram_fails_at_link(tmp_path: Path) -> None:
    board = get_board("microbit-v1")  # 16 KiB of RAM
    with pytest.raises(ToolchainError, match="exceed RAM"):
        build_stub(board, "validate", tmp_path, stack_bytes=16384 - 512)


@pytest.mark.target
def test_m55_enables_fpu_before_data_init(tmp_path: Path) -> None:
    fw = build_stub("mps3-an547", "bench", tmp_path)
    dis = subprocess.run(["arm-none-eabi-objdump", "-d", str(fw.elf)], capture_output=True,
                         text=True, check=True).stdout
    body = dis.split("<Reset_Handler>:")[1].split("\n\n")[0]
    # CPACR (0xE000ED88) is written, then dsb/isb, before the call to td_data_init
    assert re.search(r"\bisb\b", body) and "td_data_init" in body
    assert body.index("isb") < body.index("td_data_init")


def test_missing_compiler_names_debian_package(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(toolchain.shutil, "which", lambda name: None)
    with pytest.raises(ToolchainError) as e:
        toolchain.compiler(get_board("netduinoplus2"))
    assert "gcc-arm-none-eabi" in (e.value.hint or "")
    with pytest.raises(ToolchainError) as e:
        toolchain.compiler(get_board("host"))
    assert "gcc" in (e.value.hint or "")


def test_host_build_has_no_linker_script_and_sanitizes(tmp_path: Path) -> None:
    fw = build_stub("host", "validate", tmp_path, sanitize=True)
    nm = subprocess.run(["nm", str(fw.elf)], capture_output=True, text=True).stdout
    assert "__asan" in nm and "__ubsan" in nm
    assert fw.hex is None


STM32_PROBE = r"""
#include <stdio.h>
#include "td_stm32f4_clock.h"
int main(void) {
    printf("%u %u %u %u %u %u %u %u %u %u %u %u %u %u %u %u\n",
           (unsigned)TD_STM32_PLLM, (unsigned)TD_STM32_PLLN, (unsigned)TD_STM32_PLLP,
           (unsigned)TD_STM32_PLLQ, (unsigned)TD_STM32_FLASH_WS, (unsigned)TD_STM32_PPRE1,
           (unsigned)TD_STM32_PPRE2, (unsigned)TD_UART_APB, (unsigned)TD_UART_RCC_BIT,
           (unsigned)TD_UART_AF, (unsigned)TD_UART_PCLK_HZ, (unsigned)TD_UART_BRR,
           (unsigned)TD_UART_TX_PORT, (unsigned)TD_TX_PIN_NO, (unsigned)TD_UART_RX_PORT,
           (unsigned)TD_RX_PIN_NO);
    return 0;
}
"""

# Reference-manual facts (RM0368 for the F401, RM0090 for the F405), written out here
# independently of the C: USART -> (APB bus, RCC enable bit, GPIO alternate function)
STM32_USARTS = {0x40011000: (2, 4, 7), 0x40004400: (1, 17, 7)}
PPRE_DIVISOR = {0: 1, 4: 2, 5: 4, 6: 8, 7: 16}


@pytest.mark.parametrize("board_id", ["nucleo-f401re", "netduinoplus2"])
def test_stm32f4_clock_tree_for_real_boards(board_id: str, tmp_path: Path) -> None:
    """The PLL, wait states, prescalers, pins and baud divider the real-board code programs
    (it cannot run here: QEMU has no RCC) satisfy the reference manual's constraints."""
    from tinydeploy.codegen.platform import board_defines

    board = get_board(board_id)
    src = tmp_path / "probe.c"
    src.write_text(STM32_PROBE)
    exe = tmp_path / "probe"
    inc = firmware_dir() / "platform" / "stm32f4"
    subprocess.run(["gcc", "-std=c99", "-Wall", "-Werror", f"-I{inc}",
                    *[f"-D{d}" for d in board_defines(board)], str(src), "-o", str(exe)],
                   check=True)
    (m, n, p, q, ws, ppre1, ppre2, apb, rcc_bit, af, pclk, brr, txp, txn, rxp, rxn) = (
        int(v) for v in subprocess.run([str(exe)], capture_output=True, text=True,
                                       check=True).stdout.split())
    hsi = 16_000_000
    vco_in, vco = hsi / m, hsi / m * n
    assert 1e6 <= vco_in <= 2e6 and 192e6 <= vco <= 432e6
    assert vco / p == board.clock_hz and p in (2, 4, 6, 8)
    assert vco / q <= 48e6  # USB clock must not exceed 48 MHz
    assert ws == -(-board.clock_hz // 30_000_000) - 1  # one wait state per 30 MHz at 3.3 V
    apb1, apb2 = board.clock_hz / PPRE_DIVISOR[ppre1], board.clock_hz / PPRE_DIVISOR[ppre2]
    assert apb1 <= 42e6 and apb2 <= 84e6
    assert (apb, rcc_bit, af) == STM32_USARTS[board.uart.base]
    assert pclk == (apb1 if apb == 1 else apb2)
    baud = pclk / brr  # BRR holds USARTDIV * 16 with oversampling by 16
    assert abs(baud - board.uart.baud) / board.uart.baud < 0.01
    port_of = {"A": 0, "B": 1, "C": 2}
    tx, rx = str(board.uart.tx_pin), str(board.uart.rx_pin)
    assert (txp, txn) == (port_of[tx[1]], int(tx[2:]))
    assert (rxp, rxn) == (port_of[rx[1]], int(rx[2:]))
