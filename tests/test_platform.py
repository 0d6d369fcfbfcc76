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
