"""What the model commands (build, bench, validate, run, plan) are pointed at: a model, a
board and the kernel trade-off, and where the generated project goes.

One definition of these arguments and of their handling, so every command spells, documents
and checks them the same way. Not a command: it is not in ``COMMAND_MODULES``.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tinydeploy.boards import Board

BOARD_HELP = "board id or alias (see 'tinydeploy boards')"


def add_optimize_argument(p: argparse.ArgumentParser) -> None:
    """``--optimize``: the kernel trade-off of the build."""
    from tinydeploy.plan.choose import OPTIMIZE_CHOICES

    p.add_argument("--optimize", choices=OPTIMIZE_CHOICES, default="balanced",
                   help="kernel trade-off: balanced (default: fastest within the reference "
                        "kernels' arena and weight bytes), speed (fastest whose whole RAM and "
                        "flash fit the board, stack reserve included), size (least flash)")


def add_target_arguments(p: argparse.ArgumentParser) -> None:
    """The positional model and ``--board`` (required) and ``--optimize``."""
    p.add_argument("model", type=Path, help="a full-INT8 .tflite file")
    p.add_argument("--board", required=True, help=BOARD_HELP)
    add_optimize_argument(p)
    p.add_argument("--arena-limit", type=_arena_limit, default=None, metavar="BYTES",
                   help="the largest arena the selection may plan, in place of the mode's "
                        "(balanced/size: the reference kernels' plan; speed: the board's "
                        "free RAM)")


def _arena_limit(text: str) -> int:
    try:
        n = int(text, 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a byte count") from None
    if not 0 < n <= 1 << 30:
        raise argparse.ArgumentTypeError(f"{n} must be between 1 and {1 << 30} bytes")
    return n


def add_stream_arguments(p: argparse.ArgumentParser) -> None:
    """``--streaming`` and its options (docs/streaming.md)."""
    p.add_argument("--streaming", action="store_true",
                   help="a model that slides over time: steps that compute only the rows "
                        "a hop of new frames changes, bit-exact with the full window "
                        "(--optimize size keeps the full window)")
    p.add_argument("--stream-axis", type=int, default=None, metavar="AXIS",
                   help="the input's time axis (default: the first non-batch axis)")
    p.add_argument("--stream-keep", choices=("rows", "input"), default=None,
                   help="state kept across steps: every layer's rows (least work) or only "
                        "the input window (least RAM); default: rows where the board's RAM "
                        "allows")


def streaming_wanted(args: argparse.Namespace) -> bool:
    """--streaming, unless --optimize size keeps the full window (memory first)."""
    if not getattr(args, "streaming", False):
        return False
    if args.optimize == "size":
        from tinydeploy.report.output import stderr

        stderr.print("--optimize size keeps the full window: no streaming state")
        return False
    return True


def add_device_arguments(p: argparse.ArgumentParser) -> None:
    """How bench and validate reach the device that runs the build: ``--emulate``,
    ``--port``, ``--runner``, then the build folder ``-o``."""
    p.add_argument("--emulate", action="store_true",
                   help="run a real board's build on its emulated stand-in")
    p.add_argument("--port", help="serial port of a real, flashed board")
    p.add_argument("--runner", help="runner to start the device with (default: the board's)")
    p.add_argument("-o", "--output", type=Path, default=None, help="build folder")


def default_output(model: Path, board_id: str, app: str, emulate: bool) -> Path:
    """``build/<model>-<board>[-emulated]-<app>`` (docs/architecture.md, "Names")."""
    suffix = "-emulated" if emulate else ""
    return Path("build") / f"{model.stem}-{board_id}{suffix}-{app}"


def resolve_target(args: argparse.Namespace, app: str, *, reachable: bool = False
                   ) -> tuple[Board, Path]:
    """The board of ``--board`` and the project folder (``-o`` or the default one).

    ``reachable``: the command talks to the device after building, so a real board without
    ``--port`` (and without ``--emulate``) is refused before anything is built."""
    from tinydeploy.boards import get_board

    board = get_board(args.board)
    if reachable:
        from tinydeploy.link.connect import require_reachable

        require_reachable(board, args.port, args.emulate)
    out = args.output or default_output(args.model, board.id, app, args.emulate)
    return board, out


def add_app_arguments(p: argparse.ArgumentParser, default: str) -> None:
    """``--app`` (default: kws for a model with a front end, else ``default``) and the kws
    app's ``--frontend``, ``--labels`` and ``--infer-every``."""
    from tinydeploy.plan.budget import APPS

    p.add_argument("--app", choices=APPS, default=None,
                   help=f"device application (default: kws when the model has a front end "
                        f"- frontend.json beside it or --frontend - else {default})")
    p.add_argument("--frontend", default=None, metavar="NAME|FILE.json",
                   help="--app kws: the front end, a preset (tinydeploy, mlperf-kws, "
                        "micro-speech) or a JSON config (default: frontend.json beside the "
                        "model)")
    p.add_argument("--labels", type=Path, default=None, metavar="FILE",
                   help="--app kws: label names, one per line in the model's output order "
                        "(default: labels.txt beside the model)")
    p.add_argument("--infer-every", type=int, default=None, metavar="N",
                   help="--app kws: frames (strides) between inferences")


def choose_app(args: argparse.Namespace, default: str) -> str:
    """The app the command builds, and why, said once on stderr (unless --json): ``--app``;
    else kws when the model has a front end (--frontend, or frontend.json beside it); else
    the command's ``default``. Sets ``args.app``; ``args.app_reason`` says why."""
    from tinydeploy.errors import InputDataError

    kws_flags = [f"--{n.replace('_', '-')}" for n in ("frontend", "labels", "infer_every")
                 if getattr(args, n, None) is not None]
    if args.app is not None:
        why = "--app"
    elif getattr(args, "frontend", None) is not None:
        args.app, why = "kws", "--frontend given"
    elif (Path(args.model).parent / "frontend.json").is_file():
        args.app, why = "kws", "frontend.json beside the model"
    else:
        args.app, why = default, "the default; a model with frontend.json beside it gets kws"
    if args.app != "kws" and kws_flags:
        raise InputDataError(f"{', '.join(kws_flags)} only apply to the kws app, not "
                             f"{args.app}", hint="add --app kws")
    if getattr(args, "infer_every", None) is not None and args.infer_every < 1:
        raise InputDataError(f"--infer-every must be at least 1, got {args.infer_every}")
    args.app_reason = why
    if not getattr(args, "json", False):
        from tinydeploy.report.output import stderr

        stderr.print(f"app: {args.app} ({why})")
    return str(args.app)


def kws_options(args: argparse.Namespace) -> Any:
    """The kws app's options from ``--frontend/--labels/--infer-every`` (a
    `tinydeploy.pipeline.KwsOptions`), or None when the app is not kws or none is given."""
    if args.app != "kws":
        return None
    from tinydeploy.pipeline import KwsOptions

    fe, labels, every = (getattr(args, n, None) for n in ("frontend", "labels", "infer_every"))
    if fe is None and labels is None and every is None:
        return None
    return KwsOptions(fe, labels, every)
