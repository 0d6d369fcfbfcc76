"""Register-sequence tests of the nrf5 and stm32f4 platform layers (start-up, clocks, pins,
UART, cycle counter), compiled for the host against the fake register block of
tests/fakeregs/ with each real board's own defines, and checked against the order the
reference manuals require (nRF51 RM 3.0, nRF52840 PS 1.7, RM0090/RM0368 "RCC", "USART").
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fakeregs import PLATFORM, Log, run_fake
from tinydeploy.boards import get_board
from tinydeploy.codegen.platform import board_defines

NRF = PLATFORM / "nrf5" / "td_platform_nrf5.c"
STM = PLATFORM / "stm32f4" / "td_platform_stm32f4.c"

# nRF (both chips)
CLOCK_HFCLKSTART, CLOCK_HFCLKSTARTED = 0x40000000, 0x40000100
UART = 0x40002000
UART_ENABLE, UART_PSELTXD, UART_PSELRXD = UART + 0x500, UART + 0x50C, UART + 0x514
UART_BAUDRATE, UART_STARTRX, UART_TXD = UART + 0x524, UART + 0x000, UART + 0x51C
TIMER0 = 0x40008000
UICR_APPROTECT, APPROTECT_DISABLE, NVMC_ICACHECNF = 0x10001208, 0x40000558, 0x4001E540
SYSTICK = (0xE000E010, 0xE000E020)
# STM32F4
RCC_CR, RCC_PLLCFGR, RCC_CFGR = 0x40023800, 0x40023804, 0x40023808
RCC_AHB1ENR, RCC_APB1ENR, RCC_APB2ENR = 0x40023830, 0x40023840, 0x40023844
FLASH_ACR = 0x40023C00
PLLON, PLLRDY = 1 << 24, 1 << 25


def pin_cnf(pin: int) -> int:
    return (0x50000300 if pin >= 32 else 0x50000000) + 0x700 + 4 * (pin & 31)


def nrf_log(board_id: str, tmp_path: Path, uicr: int = 0xFFFFFFFF, chip: bool = True) -> Log:
    board = get_board(board_id)
    log = run_fake([NRF], "nrf5_chip.c", board_defines(board, "validate", chip=chip),
                   tmp_path, args=[f"{uicr:x}"])
    assert log.returncode == 0, log.text
    return log


@pytest.mark.parametrize("board_id", ["microbit-v1", "nrf52840dk", "arduino-nano33ble"])
def test_nrf_crystal_then_pins_then_uart(board_id: str, tmp_path: Path) -> None:
    board = get_board(board_id)
    log = nrf_log(board_id, tmp_path)
    tx, rx = int(board.uart.tx_pin), int(board.uart.rx_pin)  # type: ignore[arg-type]
    start = log.index_write(CLOCK_HFCLKSTART, 1)
    # the crystal runs (its event was read set) before the UART is touched
    started = max(i for i, a in enumerate(log.accesses)
                  if a.op == "R" and a.addr == CLOCK_HFCLKSTARTED)
    assert log.accesses[started].value == 1
    enable = log.index_write(UART_ENABLE, 4)
    assert start < started < log.index_write(UART_PSELTXD, tx) < enable
    # pins configured, then selected, before ENABLE; RX has its pull-up (PULL = 3)
    assert log.index_write(pin_cnf(tx)) < log.index_write(UART_PSELTXD) < enable
    assert log.index_write(pin_cnf(rx)) < log.index_write(UART_PSELRXD, rx) < enable
    assert log.writes(pin_cnf(tx)) == [1]
    assert log.writes(pin_cnf(rx))[-1] & 0xF == 0xC
    assert log.index_write(UART_BAUDRATE) < enable < log.index_write(UART_STARTRX, 1)
    # a bootloader's UART is disabled before it is set up again
    assert log.index_write(UART_ENABLE, 0) < start
    # a byte reaches TXD after init
    assert log.writes(UART_TXD) == [ord("U")]


def test_nrf51_counts_cycles_with_timer0(tmp_path: Path) -> None:
    log = nrf_log("microbit-v1", tmp_path)
    assert not log.touched(*SYSTICK), "the nRF51 has no SysTick"
    assert log.writes(TIMER0 + 0x508) == [3]        # BITMODE 32 bits
    assert log.writes(TIMER0 + 0x510) == [0]        # PRESCALER: 16 MHz, the core clock
    assert log.index_write(TIMER0 + 0x508) < log.index_write(TIMER0 + 0x000, 1)   # START
    cycles = log.between("cycles", "read")
    reads = [a.value for a in cycles if a.op == "R" and a.addr == TIMER0 + 0x540]
    assert len(reads) == 2 and reads[1] > reads[0]  # CAPTURE[0] then CC[0], advancing
    assert [a.addr for a in cycles if a.op == "W"] == [TIMER0 + 0x040] * 2


def test_nrf51_emulator_build_leaves_clock_and_pins_alone(tmp_path: Path) -> None:
    log = nrf_log("microbit-v1", tmp_path, chip=False)
    assert not log.touched(CLOCK_HFCLKSTART, CLOCK_HFCLKSTART + 0x1000)
    assert not log.touched(0x50000000, 0x50001000)
    assert not log.touched(TIMER0, TIMER0 + 0x1000)   # QEMU's build counts with SysTick
    assert "cycles_init" in log.marks()
    assert log.index_write(UART_ENABLE, 4) < log.index_write(UART_STARTRX, 1)


@pytest.mark.parametrize("board_id", ["nrf52840dk", "arduino-nano33ble"])
@pytest.mark.parametrize("uicr", [0x5A, 0xFFFFFF5A, 0xFFFFFFFF, 0x00])
def test_nrf52840_startup_approtect_and_icache(board_id: str, uicr: int,
                                               tmp_path: Path) -> None:
    log = nrf_log(board_id, tmp_path, uicr=uicr)
    startup = log.between("startup", "init")
    assert any(a.op == "R" and a.addr == UICR_APPROTECT for a in startup)
    disable = [a.value for a in startup if a.op == "W" and a.addr == APPROTECT_DISABLE]
    assert disable == ([0x5A] if uicr & 0xFF == 0x5A else [])
    assert [a.value & 1 for a in startup if a.op == "W" and a.addr == NVMC_ICACHECNF] == [1]


def test_nrf51_has_no_nrf52840_startup(tmp_path: Path) -> None:
    log = nrf_log("microbit-v1", tmp_path, uicr=0x5A)
    assert not log.between("startup", "init")
    assert not log.writes(APPROTECT_DISABLE)


def stm_log(board_id: str, state: str, tmp_path: Path) -> Log:
    board = get_board(board_id)
    log = run_fake([STM], "stm32f4_chip.c", board_defines(board, "validate", chip=True),
                   tmp_path, args=[state])
    assert log.returncode == 0, log.text
    assert not [m for m in log.marks() if m.startswith("ignored")], log.text
    return log


@pytest.mark.parametrize("board_id", ["nucleo-f401re", "disco-f407vg", "netduinoplus2"])
@pytest.mark.parametrize("state", ["reset", "debugger"])
def test_stm32_pll_switch_order(board_id: str, state: str, tmp_path: Path) -> None:
    board = get_board(board_id)
    log = stm_log(board_id, state, tmp_path)
    to_hsi = log.index_write(RCC_CFGR, 0, mask=3)
    pll_off = log.index_write(RCC_CR, 0, mask=PLLON, after=to_hsi)
    cfg = log.index_write(RCC_PLLCFGR)
    pll_on = log.index_write(RCC_CR, PLLON, mask=PLLON, after=cfg)
    acr = log.index_write(FLASH_ACR)
    to_pll = log.index_write(RCC_CFGR, 2, mask=3, after=acr)
    # nothing stops the PLL before the core has left it
    assert all(a.value & PLLON for a in log.accesses[:to_hsi]
               if a.op == "W" and a.addr == RCC_CR) or state == "reset"
    # HSI is the system clock (SWS read back) before PLLON is cleared, the PLL is configured
    # only while off, wait states go up before the PLL clocks the core
    sws_hsi = next(i for i, a in enumerate(log.accesses) if i > to_hsi and a.op == "R"
                   and a.addr == RCC_CFGR and (a.value >> 2) & 3 == 0)
    assert to_hsi < sws_hsi < pll_off < cfg < pll_on < acr < to_pll
    # the PLL's output is the board's clock: 16 MHz HSI / M * N / P
    v = log.writes(RCC_PLLCFGR)[0]
    m, n, p = v & 0x3F, (v >> 6) & 0x1FF, 2 * (((v >> 16) & 3) + 1)
    assert (v >> 22) & 1 == 0   # source HSI
    assert 16_000_000 // m * n // p == board.clock_hz
    assert 100_000_000 <= 16_000_000 // m * n <= 432_000_000   # VCO range
    assert log.writes(FLASH_ACR)[0] & 0xF >= (board.clock_hz - 1) // 30_000_000


@pytest.mark.parametrize("board_id", ["nucleo-f401re", "disco-f407vg", "netduinoplus2"])
def test_stm32_pins_and_clocks_before_usart(board_id: str, tmp_path: Path) -> None:
    board = get_board(board_id)
    log = stm_log(board_id, "reset", tmp_path)
    base = board.uart.base
    cr1 = base + 0x0C
    ue = log.index_write(cr1, 1 << 13, mask=1 << 13)
    apb = RCC_APB1ENR if base < 0x40010000 else RCC_APB2ENR
    assert log.index_write(RCC_AHB1ENR) < log.index_write(apb) < log.index_write(base + 0x08)
    assert log.index_write(base + 0x08) < ue      # BRR before UE
    tx = str(board.uart.tx_pin)
    port, pin = ord(tx[1]) - ord("A"), int(tx[2:])
    moder = 0x40020000 + 0x400 * port
    assert log.writes(moder)[-1] >> (2 * pin) & 3 == 2    # alternate function
    assert log.index_write(moder) < ue
    afr = moder + 0x20 + 4 * (pin >> 3)
    assert log.writes(afr)[-1] >> (4 * (pin & 7)) & 0xF == 7   # AF7: USART1/2
    assert log.writes(base + 0x04) == [ord("U")]


def test_stm32_emulator_build_leaves_clocks_and_pins_alone(tmp_path: Path) -> None:
    """Netduino Plus 2's emulator build: QEMU models no PLL and no GPIO alternate functions."""
    board = get_board("netduinoplus2")
    log = run_fake([STM], "stm32f4_chip.c", board_defines(board, "validate"), tmp_path,
                   args=["reset"])
    assert log.returncode == 0, log.text
    assert not log.writes(RCC_CR) and not log.writes(RCC_PLLCFGR) and not log.writes(FLASH_ACR)
    assert not log.touched(0x40020000, 0x40022000)          # GPIO ports
    assert log.index_write(RCC_APB2ENR) < log.index_write(board.uart.base + 0x0C, 1 << 13,
                                                          mask=1 << 13)


def test_fake_block_reports_a_stuck_poll(tmp_path: Path) -> None:
    """The harness itself: a driver waiting for a bit no model sets is reported, not hung
    (the nRF crystal wait, with no model installed by this program)."""
    prog = tmp_path / "stuck.c"
    prog.write_text('#include "td_cortexm.h"\n#include "td_platform.h"\n'
                    "void td_platform_report_fault(const char *t) { (void)t; }\n"
                    "int main(void) { td_platform_init(); return 0; }\n", encoding="utf-8")
    log = run_fake([NRF], prog, board_defines(get_board("microbit-v1"), chip=True), tmp_path)
    assert log.returncode == 3
    assert f"STUCK {CLOCK_HFCLKSTARTED:#010X}".replace("0X", "0x") in log.text
