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

Then one check per "Must show" line of the project's issue 12, each with its figures and
``ok`` or ``FAIL``: on the M4, instructions <= 0.9x and flash, arena and RAM <= TFLM's for
every model; the DS-CNN's and micro_speech's absolute targets; the DS-CNN on microbit-v1
fits and validates bit-exact against tflite-micro (a validate build run over the serial
protocol, four inputs); and no model's arena above its reference-kernel plan R for
``--optimize balanced`` and ``size`` (all modes planned for every model and board; the arena
a build gets is its plan's; ``speed`` may use the board's free RAM). The checks go to the
JSON file too.
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
M0_BOARD = "microbit-v1"
# issue 12's absolute targets on the M4 (default build): instructions, flash, arena, RAM
TARGETS: dict[str, dict[str, int]] = {
    "dscnn": {"instructions": 3_400_000, "flash_bytes": 40_000, "arena_bytes": 9_000,
              "ram_bytes": 11_500},
    "micro_speech": {"instructions": 1_100_000, "arena_bytes": 6_836},
}
TFLM_INSTRUCTION_RATIO = 0.9


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


def arenas_per_mode(model: Path, board_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
    """Per board: the reference kernels' arena R and the planned arena of every --optimize
    (None where the mode's build does not fit the board)."""
    from tinydeploy.boards import get_board
    from tinydeploy.errors import BudgetError
    from tinydeploy.model.loader import load_tflite
    from tinydeploy.plan.choose import OPTIMIZE_CHOICES, choose_kernels, reference_plan

    graph = load_tflite(model)
    ref = reference_plan(graph).arena_bytes
    out: dict[str, dict[str, Any]] = {}
    for board_id in board_ids:
        modes: dict[str, int | None] = {}
        for mode in OPTIMIZE_CHOICES:
            try:
                modes[mode] = choose_kernels(graph, get_board(board_id), mode).plan.arena_bytes
            except BudgetError:
                modes[mode] = None
        out[board_id] = {"reference": ref, **modes}
    return out


def validate_on(model: Path, board_id: str, work: Path, cases: int = 4) -> dict[str, Any]:
    """Build the validate app for ``board_id`` and compare ``cases`` inputs with the
    tflite-micro oracle over the serial protocol."""
    from tinydeploy.boards import get_board
    from tinydeploy.build.firmware import build_firmware
    from tinydeploy.errors import BudgetError
    from tinydeploy.flash.runner import Firmware
    from tinydeploy.link.connect import connect
    from tinydeploy.link.validate import random_inputs, validate_cases
    from tinydeploy.model.loader import load_tflite

    out = work / f"{model.stem}-{board_id}-validate"
    try:
        build_firmware(model, get_board(board_id), "validate", out)
    except BudgetError as e:
        return {"fits": False, "bit_exact": False, "reason": e.message}
    with connect(Firmware.from_build_dir(out), timeout=300) as conn:
        report = validate_cases(conn.session.run, model.read_bytes(),
                                random_inputs(load_tflite(model), cases, seed=12))
    return {"fits": True, "cases": report.cases, "bit_exact_cases": report.bit_exact_cases,
            "bit_exact": report.bit_exact_cases == report.cases}


def checks(results: dict[str, dict[str, dict[str, Any]]],
           arenas: dict[str, dict[str, dict[str, Any]]],
           m0_validation: dict[str, Any] | None) -> list[dict[str, Any]]:
    """One row per Must-show line of issue 12 that the measured models and boards cover:
    ``{"line", "model", "figures", "ok"}``."""
    rows: list[dict[str, Any]] = []
    for name, per_board in results.items():
        r = per_board.get(TFLM_BOARD)
        if r is not None and r["fits"]:
            t = TFLM_CMSIS_NN_M4_MODELS[name]
            q = r["vs_tflm"]
            rows.append({"line": f"M4: instr <= {TFLM_INSTRUCTION_RATIO}x, flash/arena/RAM "
                                 "<= TFLM", "model": name,
                         "figures": (f"{q['instructions']:.2f}x / {q['flash']:.2f}x / "
                                     f"{q['arena']:.2f}x / {q['ram']:.2f}x"),
                         "ok": (r["instructions"] <= TFLM_INSTRUCTION_RATIO * t.instructions
                                and r["flash_bytes"] <= t.flash_bytes
                                and r["arena_bytes"] <= t.arena_bytes
                                and r["ram_bytes"] <= t.ram_bytes)})
            if name in TARGETS:
                want = TARGETS[name]
                rows.append({"line": "M4 targets (ours / target): "
                                     + "/".join(k.replace("_bytes", "") for k in want),
                             "model": name,
                             "figures": ", ".join(f"{k.replace('_bytes', '')} {r[k]:,} / {v:,}"
                                                  for k, v in want.items()),
                             "ok": all(r[k] <= v for k, v in want.items())})
        if name == "dscnn" and m0_validation is not None:
            v = m0_validation
            rows.append({"line": f"fits and bit-exact on {M0_BOARD}", "model": name,
                         "figures": (f"{v['bit_exact_cases']}/{v['cases']} bit-exact"
                                     if v["fits"] else v["reason"][:60]),
                         "ok": bool(v["fits"] and v["bit_exact"])})
        if name in arenas:
            # speed may take the board's free RAM (its limit is the board's room, checked
            # when the build is budgeted); balanced and size stay within R
            worst = [(b, m, a[m], a["reference"]) for b, a in arenas[name].items()
                     for m in ("balanced", "size") if a[m] is not None]
            over = [w for w in worst if w[2] > w[3]]
            rows.append({"line": "no arena above R for balanced and size", "model": name,
                         "figures": ("; ".join(f"{b} {m} {x:,} > R {rr:,}"
                                               for b, m, x, rr in over)[:90]
                                     or f"max {max((w[2] for w in worst), default=0):,} "
                                        f"<= R {worst[0][3]:,}" if worst else "none fits"),
                         "ok": not over})
    return rows


def _checks_table(rows: list[dict[str, Any]]) -> str:
    head = f"{'check (issue 12, Must show)':<52} {'model':<13} {'result':<5} figures"
    lines = [head, "-" * len(head)]
    for r in rows:
        lines.append(f"{r['line']:<52} {r['model']:<13} {'ok' if r['ok'] else 'FAIL':<5} "
                     f"{r['figures']}")
    return "\n".join(lines)


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


DOCS_TABLE = Path(__file__).resolve().parent.parent / "docs" / "benchmarks.md"
# the emulator's spread of one figure between runs: SysTick's phase at the start of the timed
# inference moves a count by one tick, 40 instructions at mps2's 25 MHz (docs/emulation.md)
INSTRUCTION_TOLERANCE = 40


def documented_rows(text: str) -> dict[tuple[str, str], dict[str, int]]:
    """The measured table of docs/benchmarks.md: ``(model, board) -> {instructions,
    flash_bytes, arena_bytes, ram_bytes}`` for every row with figures (rows of models that do
    not fit are left out)."""
    rows: dict[tuple[str, str], dict[str, int]] = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 6 or not cells[2].replace(",", "").isdigit():
            continue
        try:
            figures = [int(c.replace(",", "")) for c in cells[2:6]]
        except ValueError:
            continue
        rows[(cells[0], cells[1])] = dict(zip(
            ("instructions", "flash_bytes", "arena_bytes", "ram_bytes"), figures, strict=True))
    return rows


def docs_disagreements(results: dict[str, dict[str, dict[str, Any]]], text: str,
                       tolerance: int = INSTRUCTION_TOLERANCE) -> list[str]:
    """Where a fresh run and the documented table disagree: instructions beyond
    ``tolerance``, any byte figure at all, or a measured row the table lacks."""
    doc = documented_rows(text)
    out = []
    for name, per_board in results.items():
        for board_id, r in per_board.items():
            if not r["fits"]:
                continue
            d = doc.get((name, board_id))
            if d is None:
                out.append(f"{name} on {board_id}: measured, but not in the table")
                continue
            if abs(r["instructions"] - d["instructions"]) > tolerance:
                out.append(f"{name} on {board_id}: instructions {r['instructions']:,} "
                           f"measured, {d['instructions']:,} documented (+-{tolerance})")
            for k in ("flash_bytes", "arena_bytes", "ram_bytes"):
                if r[k] != d[k]:
                    out.append(f"{name} on {board_id}: {k} {r[k]:,} measured, {d[k]:,} "
                               "documented")
    return out


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default=",".join(MODELS),
                    help=f"comma-separated, from {', '.join(MODELS)}")
    ap.add_argument("--boards", default=",".join(BOARDS), help="comma-separated board ids")
    ap.add_argument("--json", type=Path, default=Path("bench_vs_tflm.json"),
                    help="where to write the figures (default: ./bench_vs_tflm.json)")
    ap.add_argument("--optimize", choices=("balanced", "speed", "size"), default="balanced",
                    help="the build's trade-off (default: balanced, the default build)")
    ap.add_argument("--no-validate", action="store_true",
                    help=f"skip the DS-CNN validation on {M0_BOARD}")
    ap.add_argument("--check-docs", action="store_true",
                    help="fail (exit 1) when docs/benchmarks.md's table and this run disagree "
                         f"(instructions beyond +-{INSTRUCTION_TOLERANCE}, any byte figure)")
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
        arenas = {name: arenas_per_mode(build_model(name), boards) for name in models}
        m0 = (validate_on(build_model("dscnn"), M0_BOARD, work)
              if "dscnn" in models and M0_BOARD in boards and not args.no_validate else None)
    rows = checks(results, arenas, m0)
    print(_table(results))
    print()
    print(_checks_table(rows))
    doc = {"tflm_board": TFLM_BOARD, "optimize": args.optimize,
           "tflm": {k: vars(v) for k, v in TFLM_CMSIS_NN_M4_MODELS.items() if k in models},
           "results": results, "arenas_per_mode": arenas, "m0_validation": m0,
           "checks": rows, "seconds": round(time.monotonic() - t0, 1)}
    args.json.write_text(json.dumps(doc, indent=2) + "\n")
    print(f"wrote {args.json} ({doc['seconds']} s)")
    if args.check_docs:
        bad = docs_disagreements(results, DOCS_TABLE.read_text())
        for b in bad:
            print(f"docs/benchmarks.md disagrees: {b}", file=sys.stderr)
        if bad:
            return 1
        print("docs/benchmarks.md agrees with this run")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
