"""tinydeploy against TFLM + CMSIS-NN on four model shapes and four emulated cores.

Run: .venv/bin/python -m benchmarks.bench_vs_tflm [--models dscnn,vww] [--boards ...]
     [--json FILE]

Builds the bench application of each test model (`benchmarks.keras_models`: the layer shapes of
MLPerf Tiny KWS DS-CNN, TFLM micro_speech, MLPerf AD01 and MLPerf VWW, random weights,
quantized by tinydeploy) for mps2-an386 (Cortex-M4), mps2-an500 (M7), mps3-an547 (M55) and
microbit-v1 (M0, where the model fits), runs it under QEMU (instructions per inference from
SysTick under ``-icount shift=0``) and prints instructions, flash (bench app), arena and total
RAM, with TFLM + CMSIS-NN's figures on the M4 beside ours and the ratios (ours / TFLM; below
1 is better). The figures also go to a JSON file (default ``bench_vs_tflm.json`` in the
current directory). A model that does not fit a board is reported with the budget's reason.
The default build (``--optimize balanced``) is measured unless ``--optimize`` says otherwise.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks.keras_models import MODELS, build_model
from tinydeploy.report.tflm_reference import TFLM_CMSIS_NN_M4_MODELS

BOARDS = ("mps2-an386", "mps2-an500", "mps3-an547", "microbit-v1")
TFLM_BOARD = "mps2-an386"


def measure(model: Path, board_id: str, work: Path, runs: int = 1,
            optimize: str = "balanced") -> dict[str, Any]:
    """Build and run the bench app; the figures, or ``{"fits": False, "reason": ...}``."""
    from tinydeploy.boards import get_board
    from tinydeploy.build.firmware import build_firmware
    from tinydeploy.commands.bench import bench_build
    from tinydeploy.errors import BudgetError, UnsupportedError

    board = get_board(board_id)
    out = work / f"{model.stem}-{board_id}"
    try:
        built = build_firmware(model, board, "bench", out, optimize=optimize)
    except BudgetError as e:
        return {"fits": False, "status": "does not fit", "reason": e.message}
    except UnsupportedError as e:
        return {"fits": False, "status": "unsupported", "reason": e.message}
    r = bench_build(out, runs)
    ram = built.manifest["budget"]["measured"]["ram"]
    return {"fits": True, "instructions": r["instructions_per_inference"],
            "flash_bytes": r["flash_bytes"], "arena_bytes": r["arena_bytes"],
            "ram_bytes": r["ram_bytes"], "stack_bytes": ram["stack"],
            "kernels": sorted({k["symbol"] for k in built.manifest["kernels"]})}


def ratios(ours: dict[str, Any], name: str) -> dict[str, float]:
    t = TFLM_CMSIS_NN_M4_MODELS[name]
    return {"instructions": ours["instructions"] / t.instructions,
            "flash": ours["flash_bytes"] / t.flash_bytes,
            "arena": ours["arena_bytes"] / t.arena_bytes,
            "ram": ours["ram_bytes"] / t.ram_bytes}


def _table(results: dict[str, dict[str, dict[str, Any]]]) -> str:
    head = (f"{'model':<13} {'board':<12} {'instructions':>12} {'flash B':>9} {'arena B':>8} "
            f"{'RAM B':>8}   TFLM (M4) instr / flash / arena / RAM, ratios ours/TFLM")
    lines = [head, "-" * len(head)]
    for name, per_board in results.items():
        for board_id, r in per_board.items():
            if not r["fits"]:
                lines.append(f"{name:<13} {board_id:<12} {r['status']}: {r['reason'][:90]}")
                continue
            row = (f"{name:<13} {board_id:<12} {r['instructions']:>12,} "
                   f"{r['flash_bytes']:>9,} {r['arena_bytes']:>8,} {r['ram_bytes']:>8,}")
            if board_id == TFLM_BOARD:
                t = TFLM_CMSIS_NN_M4_MODELS[name]
                q = r["vs_tflm"]
                row += (f"   {t.instructions:,} / {t.flash_bytes:,} / {t.arena_bytes:,} / "
                        f"{t.ram_bytes:,}: {q['instructions']:.2f}x {q['flash']:.2f}x "
                        f"{q['arena']:.2f}x {q['ram']:.2f}x")
            lines.append(row)
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default=",".join(MODELS),
                    help=f"comma-separated, from {', '.join(MODELS)}")
    ap.add_argument("--boards", default=",".join(BOARDS), help="comma-separated board ids")
    ap.add_argument("--json", type=Path, default=Path("bench_vs_tflm.json"),
                    help="where to write the figures (default: ./bench_vs_tflm.json)")
    ap.add_argument("--optimize", choices=("balanced", "speed", "size"), default="balanced",
                    help="the build's trade-off (default: balanced, the default build)")
    ap.add_argument("--work", type=Path, default=None,
                    help="build folder (default: a temporary one, removed afterwards)")
    args = ap.parse_args(argv)
    models = [m for m in args.models.split(",") if m]
    boards = [b for b in args.boards.split(",") if b]
    for m in models:
        if m not in MODELS:
            print(f"error: unknown model '{m}' (known: {', '.join(MODELS)})", file=sys.stderr)
            return 1
    t0 = time.monotonic()
    results: dict[str, dict[str, dict[str, Any]]] = {}
    with tempfile.TemporaryDirectory(prefix="td-bench-") as tmp:
        work = args.work or Path(tmp)
        for name in models:
            path = build_model(name)
            results[name] = {}
            for board_id in boards:
                r = measure(path, board_id, work, optimize=args.optimize)
                if r["fits"] and board_id == TFLM_BOARD:
                    r["vs_tflm"] = ratios(r, name)
                results[name][board_id] = r
                print(f"  {name} on {board_id}: "
                      + (f"{r['instructions']:,} instructions" if r["fits"]
                         else r["status"]), file=sys.stderr, flush=True)
    print(_table(results))
    doc = {"tflm_board": TFLM_BOARD, "optimize": args.optimize,
           "tflm": {k: vars(v) for k, v in TFLM_CMSIS_NN_M4_MODELS.items() if k in models},
           "results": results, "seconds": round(time.monotonic() - t0, 1)}
    args.json.write_text(json.dumps(doc, indent=2) + "\n")
    print(f"wrote {args.json} ({doc['seconds']} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
