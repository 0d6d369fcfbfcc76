"""Command-line entry point: parses arguments, dispatches to a command module, and turns
domain errors into one clear message and exit status 1 (usage errors exit 2)."""

from __future__ import annotations

import argparse
import signal
import sys
from collections.abc import Sequence

from tinydeploy import __version__
from tinydeploy.commands import load_commands
from tinydeploy.errors import TinydeployError
from tinydeploy.procs import Terminated, stop_signals_raise

DESCRIPTION = """\
tinydeploy compiles a trained INT8 TFLite model ahead of time into C firmware for a
Cortex-M board: no interpreter and no flatbuffer on the device, one static arena planned
on the host, only the kernels the model uses.

typical use:
  tinydeploy inspect model.tflite            what the model contains, MACs, supported ops
  tinydeploy plan model.tflite --board nrf52840   arena layout and RAM/flash budget
  tinydeploy build model.tflite --board nrf52840  generate and compile the firmware
"""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tinydeploy",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"tinydeploy {__version__}")
    parser.add_argument(
        "--debug", action="store_true", help="show a Python traceback on errors"
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module in load_commands():
        p = sub.add_parser(
            module.NAME,
            help=module.HELP,
            description=getattr(module, "DESCRIPTION", module.HELP),
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        p.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                       help="show a Python traceback on errors")
        module.configure(p)
        p.set_defaults(_run=module.run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "_run", None):
        parser.print_help(sys.stderr)
        return 2
    with stop_signals_raise():
        return _dispatch(args)


def _dispatch(args: argparse.Namespace) -> int:
    """Run the command. A stop signal that the command does not handle itself (as the monitor
    and a running emulator do: Ctrl-C is how they are meant to end) exits 128 + its number,
    after every device and tool the command started has been stopped."""
    try:
        return int(args._run(args) or 0)
    except TinydeployError as err:
        if args.debug:
            raise
        print(err.report(), file=sys.stderr)
        return err.exit_code
    except KeyboardInterrupt as e:
        sig = e.signum if isinstance(e, Terminated) else signal.SIGINT
        print("interrupted" if sig == signal.SIGINT else f"stopped by {signal.Signals(sig).name}",
              file=sys.stderr)
        return 128 + sig
    except BrokenPipeError:
        return 0
