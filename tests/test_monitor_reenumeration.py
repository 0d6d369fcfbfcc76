"""`tinydeploy monitor` on a port that disappears and comes back, as a board does when it
re-enumerates after flashing: a stable name (like /dev/serial/by-id/...) that points first
at one device's pseudo-terminal, then, after that device is gone, at a new one's. Frames
decoded before and after the gap all reach the output."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tinydeploy.boards import get_board
from tinydeploy.build.firmware import build_firmware
from tinydeploy.flash.host import HostRunner
from tinydeploy.flash.runner import Firmware

FIX = Path(__file__).parent / "fixtures"


def _point(link: Path, target: str) -> None:
    tmp = link.with_suffix(".new")
    if tmp.is_symlink():
        tmp.unlink()
    tmp.symlink_to(target)
    os.replace(tmp, link)          # atomic, like udev replacing a by-id link


@pytest.mark.target
def test_monitor_follows_the_port_across_reenumeration(tmp_path: Path) -> None:
    build_firmware(FIX / "mlp.tflite", get_board("host"), "bench", tmp_path / "fw",
                   cflags_extra=("-DTD_BENCH_RUNS=2u",))
    fw = Firmware.from_build_dir(tmp_path / "fw")
    link = tmp_path / "ttyBOARD"
    first = HostRunner().start(fw, timeout=60)
    _point(link, first.port)
    mon = subprocess.Popen([sys.executable, "-m", "tinydeploy", "monitor", "--port", str(link),
                            "--json", "--duration", "12"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        time.sleep(1.5)                # the monitor has the port open
        first.resume()
        time.sleep(1.5)                # the boot report has been sent
        first.stop()                   # the port vanishes
        time.sleep(1.0)
        second = HostRunner().start(fw, timeout=60)
        _point(link, second.port)      # ... and comes back under the same name
        time.sleep(2.0)                # the monitor retries every 0.5 s
        second.resume()
        out, err = mon.communicate(timeout=30)
        second.stop()
    finally:
        if mon.poll() is None:
            mon.kill()
        first.stop()
    assert mon.returncode == 0, err
    lines = [json.loads(x) for x in out.splitlines() if x.strip()]
    types = [x.get("type") for x in lines]
    assert types.count("DONE") == 2, (types, err)       # one boot report from each device
    assert types.count("LOG") >= 2
    statuses = [x["text"] for x in lines if x.get("type") == "STATUS"]
    assert any("port lost" in s for s in statuses) and any("port back" in s for s in statuses)
    assert statuses[-1].startswith("6 frames, 0 bad, 1 reconnects"), statuses
