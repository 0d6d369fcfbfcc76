"""The stack on the device: the startup paints it, the applications report the high-water
mark (DONE frames from protocol 2 on, an ``m-stack-`` line of the eembc app), and for every
application the measured peak stays within the call-graph bound, which stays within the
reserve (issue 14). The validate app is checked the same way on every board and test model in
tests/test_firmware.py (its builds are reused there); bench on the M4 there too. Here: the
applications that test does not build (kws, eembc), on a core with an FPU (the 104-byte
exception frames) and on the 16 KB Cortex-M0, plus the call-graph bound's own rules."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from tinydeploy.boards import get_board
from tinydeploy.build.firmware import build_firmware
from tinydeploy.build.stack import worst_stack
from tinydeploy.errors import BudgetError
from tinydeploy.flash.runner import Firmware
from tinydeploy.plan.budget import sized_stack_reserve

FIX = Path(__file__).parent / "fixtures"
MODEL = FIX / "dscnn_small.tflite"
KWS = Path(__file__).resolve().parent.parent / "models" / "kws"


def _check(peak: int | None, out: Path, what: str) -> None:
    m = json.loads((out / "manifest.json").read_text())
    bound, reserve = m["stack_bytes"], m["stack_reserved_bytes"]
    assert peak is not None and peak > 0, f"{what}: no stack peak reported"
    assert peak <= bound <= reserve, f"{what}: peak {peak}, bound {bound}, reserve {reserve}"
    assert reserve == sized_stack_reserve(bound), f"{what}: reserve {reserve} for {bound}"
    print(f"{what}: peak {peak} <= bound {bound} <= reserve {reserve}")


@pytest.mark.target
@pytest.mark.parametrize("board_id", ["mps2-an386", "microbit-v1"])
def test_eembc_peak_within_bound(board_id: str, tmp_path: Path) -> None:
    from tinydeploy.flash import runner_for
    from tinydeploy.link.eembc import EembcClient

    out = tmp_path / "fw"
    build_firmware(MODEL, get_board(board_id), "eembc", out)
    fw = Firmware.from_build_dir(out)
    device = runner_for(fw.board).start(fw, timeout=60.0)
    try:
        port = device.open()
        try:
            client = EembcClient(port, timeout=20.0)
            client.read_banner()
            device.kick()
            data = np.random.default_rng(3).integers(-128, 128, 490, dtype=np.int8)
            client.load(data.tobytes())
            lines = client.infer(2, 1).reply.lines
        finally:
            port.close()
    finally:
        device.stop()
    stack = [m for m in map(re.compile(r"m-stack-\[peak (\d+) B of (\d+) B\]").match, lines)
             if m]
    assert len(stack) == 1, lines
    peak, size = int(stack[0].group(1)), int(stack[0].group(2))
    assert size == json.loads((out / "manifest.json").read_text())["stack_reserved_bytes"]
    _check(peak, out, f"eembc on {board_id}")


@pytest.mark.target
def test_kws_peak_within_bound(tmp_path: Path) -> None:
    from tinydeploy.frontend.config import FrontendConfig
    from tinydeploy.kws.device import build_kws_firmware
    from tinydeploy.kws.stream import AUDIO_CHUNK, DetectorConfig
    from tinydeploy.link.connect import connect
    from tinydeploy.link.messages import Audio, Done, MsgType

    out = tmp_path / "fw"
    fcfg = FrontendConfig.load(KWS / "frontend.json")
    det = DetectorConfig(infer_every=1, avg_windows=3, threshold=0.5)
    build_kws_firmware(KWS / "dscnn_int8.tflite", get_board("mps2-an386"), out, det, fcfg)
    pcm = np.random.default_rng(5).integers(-3000, 3000, 18_000).astype("<i2")
    peaks = []
    with connect(Firmware.from_build_dir(out), timeout=300) as conn:
        for start in range(0, pcm.size, AUDIO_CHUNK):
            chunk = pcm[start:start + AUDIO_CHUNK].tobytes()
            for m in conn.session.request(Audio(start, chunk),
                                          MsgType.ACK):
                if isinstance(m, Done):
                    peaks.append(m.stack_peak)
    assert peaks, "no inference window completed"
    _check(max(p or 0 for p in peaks), out, "kws on mps2-an386")


@pytest.mark.target
def test_bench_peak_within_bound_on_the_m0(tmp_path: Path) -> None:
    from tinydeploy.commands.bench import bench_build

    out = tmp_path / "fw"
    build_firmware(MODEL, get_board("microbit-v1"), "bench", out,
                   cflags_extra=("-DTD_BENCH_RUNS=1u",))
    r = bench_build(out, runs=1)
    _check(r["stack_peak_bytes"], out, "bench on microbit-v1")


@pytest.mark.target
def test_reserve_below_the_bound_fails_the_build(tmp_path: Path) -> None:
    """--stack below the measured bound: the build fails with both numbers, before any
    firmware could overflow on the device."""
    with pytest.raises(BudgetError) as e:
        build_firmware(MODEL, get_board("mps2-an386"), "bench", tmp_path / "fw",
                       stack_bytes=256)
    msg = e.value.message
    bound = int(re.search(r"stack is (\d+) bytes", msg).group(1))  # type: ignore[union-attr]
    assert bound > 256 and "256 are reserved" in msg
    assert f"--stack {sized_stack_reserve(bound)}" in (e.value.hint or "")


def _ci(path: Path, nodes: dict[str, int], edges: list[tuple[str, str]]) -> None:
    text = "graph: {\n"
    for name, frame in nodes.items():
        text += f'node: {{ title: "{name}" label: "{name}\\nf.c:1:1\\n{frame} bytes (static)" }}\n'
    for a, b in edges:
        text += f'edge: {{ sourcename: "{a}" targetname: "{b}" }}\n'
    path.write_text(text + "}\n")


def test_bound_counts_the_entry_once_and_follows_pointers(tmp_path: Path) -> None:
    """Reset_Handler is the entry, not an interrupt that can arrive on top of itself; a call
    through a pointer is bounded by the deepest linked function nobody calls directly."""
    f = tmp_path / "a.ci"
    _ci(f, {"Reset_Handler": 8, "main": 16, "td_link_step": 100, "handle": 24, "deep": 500,
            "unlinked": 9000, "SysTick_Handler": 8, "__indirect_call": 0},
        [("Reset_Handler", "main"), ("main", "td_link_step"),
         ("td_link_step", "__indirect_call")])
    handlers = ["Reset_Handler", "SysTick_Handler"]
    linked = {"Reset_Handler", "main", "td_link_step", "handle", "deep", "SysTick_Handler"}
    r = worst_stack([f], "Reset_Handler", handlers, fpu=True, linked=linked)
    # 8 + 16 + 100 + max(handle 24, deep 500) + SysTick 8 + FP exception frame 104
    assert r.bytes == 8 + 16 + 100 + 500 + 8 + 104
    assert r.path == ("Reset_Handler", "main", "td_link_step", "__indirect_call", "deep")
    r = worst_stack([f], "Reset_Handler", handlers, fpu=False, linked=linked)
    assert r.bytes == 8 + 16 + 100 + 500 + 8 + 32
