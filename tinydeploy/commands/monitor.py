"""`tinydeploy monitor`: decode and show a device's frames live."""

from __future__ import annotations

import argparse

NAME = "monitor"
HELP = "show the frames a device sends over its serial port, decoded, live"
DESCRIPTION = """\
Open a serial port, decode every frame of the tinydeploy protocol (INFO, OUTPUT, PROFILE,
DONE, EVENT, LOG, ERROR, ...) and show it as it arrives: a line of text each, or one JSON
object per line with --json. The monitor survives the port disappearing (a board reset or
an unplugged cable) and carries on when it comes back. Ctrl-C ends it.

examples:
  tinydeploy monitor --port /dev/ttyACM0
  tinydeploy monitor --board nucleo-f401re --json --hello
  tinydeploy monitor --port /dev/pts/3 --duration 10 --json"""


def configure(p: argparse.ArgumentParser) -> None:
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--port", help="serial port path, e.g. /dev/ttyACM0")
    src.add_argument("--board", help="find the port of this board's debug probe (USB)")
    p.add_argument("--baud", type=int, default=None,
                   help="baud rate (default: the board's, else 115200)")
    p.add_argument("--json", action="store_true", help="one JSON object per line on stdout")
    p.add_argument("--hello", action="store_true",
                   help="send HELLO on connecting, so the device describes itself")
    p.add_argument("--duration", type=float, default=None, metavar="S",
                   help="stop after S seconds (default: until Ctrl-C)")
    p.add_argument("--count", type=int, default=None, metavar="N",
                   help="stop after N decoded frames")


def run(args: argparse.Namespace) -> int:
    from tinydeploy.link.monitor import JsonSink, Monitor, RichSink
    from tinydeploy.link.session import open_port

    baud = args.baud
    port = args.port
    if args.board:
        from tinydeploy.boards import get_board
        from tinydeploy.errors import LinkError
        from tinydeploy.flash.hardware import find_serial_port

        board = get_board(args.board)
        if board.emulated:
            raise LinkError(f"board '{board.id}' is emulated: its serial port exists only "
                            "while the firmware runs",
                            hint="tinydeploy flash BUILD_DIR --monitor starts and monitors it")
        baud = baud or board.uart.baud
        port = find_serial_port(board)
    baud = baud or 115200
    sink = JsonSink() if args.json else RichSink()
    mon = Monitor(lambda: open_port(port, baud), sink, hello=args.hello,
                  learn_units=args.board is None)
    try:
        stats = mon.run(duration=args.duration, count=args.count)
    except KeyboardInterrupt:
        stats = mon.stats
    sink.status(mon.now(), f"{stats.frames} frames, {stats.bad_frames} bad, "
                           f"{stats.reconnects} reconnects")
    return 0
