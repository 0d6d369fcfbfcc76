"""`tinydeploy flash BUILD_DIR`: put a built firmware on its board (or its emulator)."""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from tinydeploy.boards import RunnerKind

NAME = "flash"
HELP = "flash a build folder onto its board, or start it in QEMU / as a host process"
DESCRIPTION = """\
Flash the firmware of a folder written by `tinydeploy build` (firmware.elf/.hex/.bin and
manifest.json naming the board). Real boards are flashed with pyOCD, nrfjprog or PlatformIO
(the board file's first runner unless --runner says otherwise). Emulated boards (QEMU
machines, the host) have no flash: the firmware is started and runs until Ctrl-C, --timeout
or its own exit, with its serial port printed (and decoded live with --monitor).

examples:
  tinydeploy flash build/kws-nrf52840dk-validate
  tinydeploy flash build/kws-mps2-an386-bench --monitor --timeout 30
  tinydeploy flash build/kws-nucleo-f401re-kws --runner pyocd --port /dev/ttyACM0"""


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("build_dir", type=Path, metavar="BUILD_DIR",
                   help="folder written by tinydeploy build")
    p.add_argument("--runner", choices=[k.value for k in RunnerKind],
                   default=None, help="flashing method (default: the board's first)")
    p.add_argument("--port", default=None,
                   help="serial port of a real board (default: found by USB vendor)")
    p.add_argument("--monitor", action="store_true",
                   help="decode and show the device's frames after flashing")
    p.add_argument("--timeout", type=float, default=None, metavar="S",
                   help="stop an emulated device (and the monitor) after S seconds")
    p.add_argument("--json", action="store_true", help="machine-readable output on stdout")


def run(args: argparse.Namespace) -> int:
    from tinydeploy.flash import Firmware, runner_for
    from tinydeploy.report.output import stderr

    fw = Firmware.from_build_dir(args.build_dir)
    board = fw.board
    emulated = board.emulated and args.runner in (None, "qemu", "host")
    options = {} if emulated else {"port": args.port}
    runner = runner_for(board, args.runner, **options)
    life = args.timeout if args.timeout is not None else 24 * 3600.0
    t0 = time.monotonic()
    device = runner.start(fw, timeout=life + 5.0)
    result: dict[str, object] = {"board": board.id, "runner": runner.name,
                                 "firmware": str(fw.elf), "port": device.port,
                                 "emulated": emulated}
    status: int | None = None
    try:
        if not emulated:
            stderr.print(f"flashed {board.id} with {runner.name} in "
                         f"{time.monotonic() - t0:.1f} s; serial port {device.port}")
        if args.monitor:
            if not args.json:
                stderr.print(f"{board.id} on {device.port}: monitoring (Ctrl-C to stop)")
            _monitor(device, args.json, args.timeout, board if emulated else None)
        elif emulated:
            device.resume()
            if args.json:
                print(json.dumps({**result, "status": "running"}), flush=True)
            else:
                stderr.print(f"{board.id} running ({runner.name}); serial port "
                             f"{device.port}; Ctrl-C stops it")
            try:
                status = device.wait(life)
            except KeyboardInterrupt:
                pass
    finally:
        stopped = device.stop()
        status = status if status is not None else (stopped if emulated else None)
    result["exit_status"] = status
    if args.json:
        # one object per line, like the monitor's frames before it
        print(json.dumps({**result, "status": "stopped" if emulated else "flashed"}),
              flush=True)
    return 0


def _monitor(device: object, as_json: bool, duration: float | None, board: object = None
             ) -> None:
    from tinydeploy.link.monitor import JsonSink, Monitor, RichSink
    from tinydeploy.link.units import message_converter

    opened = {"first": True}

    def opener() -> object:
        if opened["first"]:
            opened["first"] = False
            return device.open()  # type: ignore[attr-defined]
        from tinydeploy.link.session import open_port

        return open_port(device.port, device.baud)  # type: ignore[attr-defined]

    sink = JsonSink() if as_json else RichSink()
    mon = Monitor(opener, sink, alive=lambda: device.poll() is None,  # type: ignore[attr-defined]
                  convert=message_converter(board))
    try:
        mon.run(duration=duration)
    except KeyboardInterrupt:
        pass
