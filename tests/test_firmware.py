"""Firmware and target tiers: generated projects build for every board and, on every board
that runs here (QEMU machines and the host), compute exactly what TFLM's reference kernels
compute, over a real pseudo-terminal serial port."""

from __future__ import annotations

import filecmp
import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from opmodels import OP_MODELS

from tinydeploy.boards import get_board, list_boards
from tinydeploy.build.firmware import build_firmware, defined_symbols
from tinydeploy.errors import BudgetError, ToolchainError
from tinydeploy.flash.runner import Firmware
from tinydeploy.kernels.registry import all_variants
from tinydeploy.link.connect import connect
from tinydeploy.link.validate import random_inputs, validate_cases
from tinydeploy.model.loader import load_tflite

FIX = Path(__file__).parent / "fixtures"
RUNNABLE = ["host", "mps2-an386", "mps2-an500", "mps3-an547", "netduinoplus2", "microbit-v1"]


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("models")
    out = {}
    for name, make in OP_MODELS.items():
        out[name] = d / f"{name}.tflite"
        out[name].write_bytes(make())
    for name in ("dscnn_kws", "dscnn_small", "mlp", "residual"):
        out[name] = FIX / f"{name}.tflite"
    return out


def _validate(model: Path, board_id: str, out: Path, cases: int = 3) -> None:
    board = get_board(board_id)
    graph = load_tflite(model)
    built = build_firmware(model, board, "validate", out, graph=graph)
    fw = Firmware.from_build_dir(out)
    with connect(fw, timeout=120) as conn:
        assert conn.info.info.model_sha256 == graph.sha256
        report = validate_cases(conn.session.run, model.read_bytes(),
                                random_inputs(graph, cases, seed=7))
    if not board.is_host:
        # the painted stack's high-water mark stays within the call-graph bound, which
        # stays within the reserve (issue 14)
        reserve = built.manifest["stack_reserved_bytes"]
        assert report.stack_peak is not None and report.stack_peak > 0
        assert report.stack_peak <= built.stack_bytes <= reserve, (
            f"{model.name} on {board_id}: peak {report.stack_peak}, bound "
            f"{built.stack_bytes}, reserve {reserve}")
    m = report.first_mismatch
    assert report.bit_exact_cases == report.cases, (
        f"{model.name} on {board_id}: {report.cases - report.bit_exact_cases} of "
        f"{report.cases} cases differ; first at case {m.case} output {m.output} position "
        f"{list(m.position)}: device {m.actual}, reference {m.expected}" if m else "")


@pytest.mark.target
@pytest.mark.parametrize("board_id", RUNNABLE)
def test_every_op_bit_exact_on_board(board_id: str, models: dict[str, Path],
                                     tmp_path: Path) -> None:
    names = ["cnn_chain", "activation_chain", "dscnn_small"]
    if board_id in ("host", "mps2-an386"):
        names += ["dscnn_kws", "residual", "mlp"]
    for name in names:
        _validate(models[name], board_id, tmp_path / name)


@pytest.mark.target
def test_emulated_nrf52840_keeps_its_limits(models: dict[str, Path], tmp_path: Path) -> None:
    real = get_board("nrf52840")
    r = build_firmware(models["dscnn_kws"], real, "validate", tmp_path / "fw", emulate=True)
    assert r.board.qemu_machine == "mps2-an386"
    assert (r.board.ram_bytes, r.board.flash_bytes) == (real.ram_bytes, real.flash_bytes)
    assert r.manifest["requested_board"] == "nrf52840dk" and r.manifest["emulated"]
    fw = Firmware.from_build_dir(tmp_path / "fw")
    graph = load_tflite(models["dscnn_kws"])
    with connect(fw, timeout=120) as conn:
        rep = validate_cases(conn.session.run, models["dscnn_kws"].read_bytes(),
                             random_inputs(graph, 2))
    assert rep.bit_exact_cases == 2


def _elf_segments(elf: Path) -> list[tuple[int, int]]:
    out = subprocess.run(["arm-none-eabi-readelf", "-lW", str(elf)], capture_output=True,
                         text=True, check=True).stdout
    segs = []
    for line in out.splitlines():
        p = line.split()
        if p and p[0] == "LOAD":
            segs.append((int(p[3], 16), int(p[4], 16)))  # physical address, file size
    return segs


@pytest.mark.target
@pytest.mark.parametrize("board_id", [b.id for b in list_boards() if b.family != "host"])
def test_builds_against_real_memory_map(board_id: str, models: dict[str, Path],
                                        tmp_path: Path) -> None:
    board = get_board(board_id)
    model = models["dscnn_small" if board.ram_bytes <= 32 * 1024 else "dscnn_kws"]
    r = build_firmware(model, board, "validate", tmp_path / "fw")
    flash = board.region("flash")
    assert r.hex and r.hex.exists() and r.bin and r.bin.exists()
    for addr, size in _elf_segments(r.elf):
        if size:
            assert flash.origin <= addr and addr + size <= flash.origin + flash.size, \
                f"{board_id}: segment at {addr:#x}+{size} outside flash"
    # the vector table is first in flash: initial SP inside RAM, reset vector inside flash
    words = [int(w) for w in np.frombuffer(r.bin.read_bytes()[:8], "<u4")]
    ram = board.region("ram")
    assert ram.origin < words[0] <= ram.origin + ram.size
    assert flash.origin <= (words[1] & ~1) < flash.origin + flash.size
    assert r.flash_bytes <= board.flash_bytes and r.ram_bytes <= board.ram_bytes
    if board.platformio:
        ini = (tmp_path / "fw" / "platformio.ini").read_text()
        assert f"board = {board.platformio['board']}" in ini


@pytest.mark.target
def test_reproducible_and_plain_make(models: dict[str, Path], tmp_path: Path) -> None:
    board = get_board("mps2-an386")
    a = build_firmware(models["cnn_chain"], board, "bench", tmp_path / "a")
    build_firmware(models["cnn_chain"], board, "bench", tmp_path / "b")
    for rel in a.manifest["files"] + ["firmware.elf", "firmware.bin", "firmware.hex"]:
        assert filecmp.cmp(tmp_path / "a" / rel, tmp_path / "b" / rel, shallow=False), rel
    for rel in a.manifest["files"]:
        if rel.endswith((".h", ".c")) and rel.startswith("src/model/"):
            first = (tmp_path / "a" / rel).read_text().splitlines()[0]
            assert "generated by tinydeploy from model sha256" in first, rel
    # the folder builds again with plain make and nothing else
    elf_before = (tmp_path / "a" / "firmware.elf").read_bytes()
    subprocess.run(["make", "-C", str(tmp_path / "a"), "clean"], check=True,
                   capture_output=True)
    subprocess.run(["make", "-C", str(tmp_path / "a")], check=True, capture_output=True)
    assert (tmp_path / "a" / "firmware.elf").read_bytes() == elf_before


@pytest.mark.target
def test_only_used_kernels_are_linked(models: dict[str, Path], tmp_path: Path) -> None:
    board = get_board("mps2-an386")
    r = build_firmware(models["mlp"], board, "validate", tmp_path / "fw")
    symbols = defined_symbols(r.elf, board)
    used = {k.symbol for k in r.kernels}
    assert used and used <= symbols
    unused = {v.symbol for v in all_variants() if not v.alias} - used
    assert unused, "the registry should have kernels the MLP does not use"
    assert not (symbols & unused), f"unused kernels linked: {sorted(symbols & unused)}"
    sources = set(os.listdir(tmp_path / "fw" / "src" / "kernels" / "ref"))
    assert not any("conv" in s or "pool" in s for s in sources), sources


def test_too_big_fails_before_the_compiler(models: dict[str, Path], tmp_path: Path) -> None:
    # the DS-CNN fits the micro:bit's 16 KB, but not beside an 8 KB stack reservation
    with pytest.raises(BudgetError) as e:
        build_firmware(models["dscnn_kws"], get_board("microbit-v1"), "validate",
                       tmp_path / "fw", stack_bytes=8192)
    msg = e.value.message
    assert "microbit-v1" in msg and "16,384" in msg
    assert not (tmp_path / "fw" / "obj").exists()


def test_missing_toolchain_says_what_to_install(models: dict[str, Path], tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    empty = tmp_path / "bin"
    empty.mkdir()
    make = shutil.which("make")
    assert make
    (empty / "make").symlink_to(make)
    monkeypatch.setenv("PATH", str(empty))
    with pytest.raises(ToolchainError) as e:
        build_firmware(models["mlp"], get_board("mps2-an386"), "validate", tmp_path / "fw")
    assert "arm-none-eabi-gcc" in e.value.message
    assert "gcc-arm-none-eabi" in (e.value.hint or "")


@pytest.mark.target
def test_bench_count_is_the_same_on_every_run(models: dict[str, Path], tmp_path: Path) -> None:
    """Under -icount shift=0 the count is a function of the executed instructions only."""
    from tinydeploy.commands.bench import bench_build

    build_firmware(models["dscnn_small"], get_board("mps2-an386"), "bench", tmp_path / "fw",
                   cflags_extra=("-DTD_BENCH_RUNS=2u",))
    first = bench_build(tmp_path / "fw", runs=2)
    second = bench_build(tmp_path / "fw", runs=2)
    assert first["unit"] == "instructions"
    assert first["instructions_per_inference"] == second["instructions_per_inference"] > 10_000
    assert [o["count"] for o in first["per_op"]] == [o["count"] for o in second["per_op"]]
    assert len(first["per_op"]) == 12
    assert 0 < first["stack_peak_bytes"] <= first["stack_bytes"] <= first["stack_reserved_bytes"]
    print(f"bench: {first['instructions_per_inference']:,} instructions per inference, "
          "identical on two runs")
