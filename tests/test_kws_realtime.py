"""Live keyword spotting on real boards: the kws app's link rate per board, and the real-time
verdict of `plan --app kws`."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tinydeploy.boards import get_board, list_boards
from tinydeploy.codegen.platform import board_defines
from tinydeploy.flash.runner import Firmware
from tinydeploy.frontend.mlperf import MlperfConfig
from tinydeploy.kws.realtime import (
    MAX_UTILISATION,
    KwsLoad,
    audio_frame_bytes,
    link_bits_per_second,
    min_infer_every,
    realtime_verdict,
)
from tinydeploy.resources import firmware_dir

ROOT = Path(__file__).resolve().parent.parent
MODEL = ROOT / "models" / "kws" / "dscnn_int8.tflite"


def _define(defs: list[str], name: str) -> str:
    return next(d.split("=", 1)[1] for d in defs if d.startswith(name + "="))


def test_audio_needs_more_than_115200_baud() -> None:
    # 4 header + 4 first_sample + 252 PCM + 2 CRC, COBS (+2), delimiter (+1)
    assert audio_frame_bytes() == 265
    need = link_bits_per_second(16000)
    assert 256_000 < need == pytest.approx(16000 / 126 * 265 * 10) and need > 115_200


def test_kws_app_gets_the_boards_kws_baud() -> None:
    boards = {b.id: b for b in list_boards()}
    assert boards["nrf52840dk"].uart.kws_baud == 1_000_000
    for b in boards.values():
        if b.family == "host":
            continue
        assert _define(board_defines(b, "bench"), "TD_UART_BAUD") == f"{b.uart.baud}u"
        kws = _define(board_defines(b, "kws"), "TD_UART_BAUD")
        assert kws == f"{b.uart.kws_baud or b.uart.baud}u"
    fw = Firmware(Path("x.elf"), boards["nrf52840dk"], app="kws")
    assert fw.baud == 1_000_000
    assert Firmware(Path("x.elf"), boards["nrf52840dk"], app="bench").baud == 115_200


@pytest.mark.skipif(shutil.which("arm-none-eabi-gcc") is None,
                    reason="needs arm-none-eabi-gcc (scripts/setup.sh installs it)")
@pytest.mark.parametrize("board_id", ["nrf52840dk", "nucleo-f401re"])
def test_rendered_platform_code_takes_the_kws_rate(board_id: str, tmp_path: Path) -> None:
    """The platform C accepts the kws rate (the nRF table has 1 Mbaud; the STM32 BRR is
    derived), and what it programs differs from the 115,200 build."""
    board = get_board(board_id)
    src = {"nrf5": "nrf5/td_platform_nrf5.c", "stm32f4": "stm32f4/td_platform_stm32f4.c"}[
        board.family]
    plat = firmware_dir() / "platform"
    objs = []
    for app in ("bench", "kws"):
        out = tmp_path / f"{app}.o"
        subprocess.run(["arm-none-eabi-gcc", "-mcpu=cortex-m4", "-mthumb", "-std=c99", "-O2",
                        "-Wall", "-Werror", f"-I{plat}", f"-I{plat / board.family}",
                        f"-I{plat / 'cortexm'}", *[f"-D{d}" for d in board_defines(board, app)],
                        "-c", str(plat / src), "-o", str(out)], check=True)
        objs.append(out.read_bytes())
    assert objs[0] != objs[1]


def test_realtime_verdict() -> None:
    cfg = MlperfConfig()
    nrf = get_board("nrf52840dk")
    load = KwsLoad(65_000, 6_400_000, "given")
    v = realtime_verdict(nrf, load, cfg, 10)
    # 50 frames/s * 65 k + 5 inferences/s * 6.4 M
    assert v.instructions_per_second == pytest.approx(50 * 65_000 + 5 * 6_400_000)
    assert v.utilisation == pytest.approx(v.instructions_per_second / 64e6)
    assert v.keeps_up and v.interval_ms == 200
    fast = realtime_verdict(nrf, load, cfg, 1)            # 320 M/s on a 64 MHz core
    assert not fast.keeps_up_compute and not fast.keeps_up
    n = min_infer_every(fast)
    assert n is not None
    assert realtime_verdict(nrf, load, cfg, n).utilisation <= MAX_UTILISATION
    assert realtime_verdict(nrf, load, cfg, n - 1).utilisation > MAX_UTILISATION
    assert "--infer-every" in fast.text()
    slow_link = realtime_verdict(get_board("microbit-v1"), load, cfg, 10)
    assert not slow_link.keeps_up_link and "uart.kws_baud" in slow_link.text()


def test_plan_app_kws_reports_the_verdict() -> None:
    r = subprocess.run([sys.executable, "-m", "tinydeploy", "plan", str(MODEL), "--board",
                        "nrf52840dk", "--app", "kws", "--kws-instructions", "120000,6400000",
                        "--infer-every", "25", "--json"], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    rt = json.loads(r.stdout)["realtime"]
    assert rt["keeps_up"] is True and rt["interval_ms"] == 500
    assert rt["link_baud"] == 1_000_000 and rt["source"].startswith("given")
    r = subprocess.run([sys.executable, "-m", "tinydeploy", "plan", str(MODEL), "--board",
                        "nrf52840dk", "--app", "kws", "--kws-instructions", "lots"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 1 and "FRONTEND,MODEL" in r.stderr and "Traceback" not in r.stderr
