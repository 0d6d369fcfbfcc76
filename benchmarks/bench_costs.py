"""The kernel selector's cost models against the device, and how long the selection takes.

Run: .venv/bin/python -m benchmarks.bench_costs [--models DIR] [--board mps2-an386]
     [--modes balanced,speed] [--tolerance 0.15] [--json FILE]

For every model (the test fixtures and the project's DS-CNN always; every ``.tflite`` of
``--models DIR`` too, e.g. MLPerf Tiny's four trained models and TFLM's person_detect, fetched
beforehand: they are not shipped) and every ``--optimize`` mode: time the selection
(`choose_kernels`, the search that trades kernels against the arena), build the bench
application, run it on the emulated board (instructions per op under ``-icount``) and set
each op's measured count beside the estimate the selector compared kernels by. Prints one
line per model and mode (the worst op, the totals, the selection's time), then the worst op
of all; exit status 1 when an op's estimate is off by more than ``--tolerance`` of its
measurement (aliases, which run no code, are skipped; an op measured below `SMALL_OP`
instructions may instead be off by `SMALL_OP_SLACK`). The default test run checks the small
test models the same way (tests/test_cost_models.py); this script is the full sweep.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
TEST_MODELS = (*sorted((ROOT / "tests" / "fixtures").glob("*.tflite")),
               ROOT / "models" / "kws" / "dscnn_int8.tflite")
TOLERANCE = 0.15
# ops measured below SMALL_OP instructions (a classifier's SOFTMAX, a 32 -> 3 FC: well under
# 0.1 % of a model) may instead be off by SMALL_OP_SLACK instructions: their cost is mostly
# the call and, for the computed-exp SOFTMAX, depends on the data (243 to 329 instructions
# per class measured on different inputs)
SMALL_OP = 5_000
SMALL_OP_SLACK = 600


@dataclass(frozen=True)
class OpCheck:
    """One op: the chosen kernel, its estimate, its measured count and the relative error
    (estimate / measured - 1)."""

    index: int
    op: str
    symbol: str
    estimated: int
    measured: int

    @property
    def error(self) -> float:
        return self.estimated / self.measured - 1.0 if self.measured else 0.0

    def within(self, tolerance: float) -> bool:
        """Within ``tolerance`` of the measurement, or of `SMALL_OP_SLACK` for a small op."""
        if abs(self.error) <= tolerance:
            return True
        return self.measured < SMALL_OP and abs(self.estimated - self.measured) <= SMALL_OP_SLACK


def select_seconds(model: Path, board_id: str, optimize: str, repeats: int = 1) -> float:
    """Wall-clock seconds of `choose_kernels` for ``model`` (the best of ``repeats``), the
    model already loaded."""
    from tinydeploy.boards import get_board
    from tinydeploy.model.loader import load_tflite
    from tinydeploy.plan.choose import choose_kernels

    board = get_board(board_id)
    graph = load_tflite(model)
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        choose_kernels(graph, board, optimize)
        best = min(best, time.perf_counter() - t0)
    return best


def check_costs(model: Path, board_id: str, optimize: str, work: Path
                ) -> tuple[list[OpCheck], dict[str, Any]]:
    """Build and bench ``model``; per op the chosen kernel's estimate and its measurement,
    and the bench figures."""
    from tinydeploy.boards import get_board
    from tinydeploy.build.firmware import build_firmware
    from tinydeploy.commands.bench import bench_build

    board = get_board(board_id)
    out = work / f"{model.stem}-{board_id}-{optimize}"
    built = build_firmware(model, board, "bench", out, emulate=not board.emulated,
                           optimize=optimize)
    r = bench_build(out, 1)
    layers = built.manifest["selection"]["layers"]
    checks = []
    for layer, measured in zip(layers, r["per_op"], strict=True):
        mine = next(a for a in layer["alternatives"] if a["passed_over"] is None)
        if measured["symbol"] == "(alias)" or (mine["instructions"] == 0
                                                and measured["count"] == 0):
            continue
        checks.append(OpCheck(layer["op_index"], layer["type"], measured["symbol"],
                              int(mine["instructions"]), int(measured["count"])))
    return checks, r


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--models", type=Path, default=None, metavar="DIR",
                   help="also every .tflite in DIR (public models fetched beforehand)")
    p.add_argument("--board", default="mps2-an386")
    p.add_argument("--modes", default="balanced,speed")
    p.add_argument("--tolerance", type=float, default=TOLERANCE)
    p.add_argument("--json", type=Path, default=None, metavar="FILE")
    args = p.parse_args(argv)
    models = list(TEST_MODELS)
    if args.models is not None:
        if not args.models.is_dir():
            print(f"--models {args.models}: not a directory", file=sys.stderr)
            return 1
        models += sorted(args.models.glob("*.tflite"))
    modes = [m for m in args.modes.split(",") if m]
    worst: tuple[float, str, OpCheck] | None = None
    doc: dict[str, Any] = {"board": args.board, "tolerance": args.tolerance, "runs": []}
    failed = 0
    with tempfile.TemporaryDirectory(prefix="td-costs-") as tmp:
        for model in models:
            for mode in modes:
                seconds = select_seconds(model, args.board, mode)
                checks, r = check_costs(model, args.board, mode, Path(tmp))
                bad = [c for c in checks if not c.within(args.tolerance)]
                failed += len(bad)
                w = max(checks, key=lambda c: (not c.within(args.tolerance), abs(c.error)))
                if worst is None or abs(w.error) > abs(worst[2].error):
                    worst = (abs(w.error), f"{model.name} {mode}", w)
                est = sum(c.estimated for c in checks)
                meas = r["instructions_per_inference"]
                print(f"{model.name:32s} {mode:8s} select {seconds:5.2f} s  estimated "
                      f"{est:>12,}  measured {meas:>12,} ({est / meas - 1:+6.1%})  arena "
                      f"{r['arena_bytes']:>7,} B  worst op {w.index} {w.symbol} "
                      f"{w.error:+.1%}" + (f"  [{len(bad)} op(s) outside]" if bad else ""))
                for c in bad:
                    print(f"    op {c.index} {c.op} {c.symbol}: estimated {c.estimated:,}, "
                          f"measured {c.measured:,} ({c.error:+.1%})")
                doc["runs"].append({"model": model.name, "optimize": mode,
                                    "select_seconds": round(seconds, 3),
                                    "estimated": est, "measured": meas,
                                    "arena_bytes": r["arena_bytes"],
                                    "ops": [asdict(c) | {"error": round(c.error, 4)}
                                            for c in checks]})
    if worst is not None:
        print(f"worst op: {worst[1]} op {worst[2].index} {worst[2].symbol}: estimated "
              f"{worst[2].estimated:,}, measured {worst[2].measured:,} "
              f"({worst[2].error:+.1%}); tolerance +-{args.tolerance:.0%}: "
              + ("ok" if not failed else f"FAIL ({failed} op(s))"))
    if args.json is not None:
        args.json.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
